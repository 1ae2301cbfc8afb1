"""`introspect` against real executables: a captured fisk document, and every way a binary can fail."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from fiskai_core.errors import IntrospectionError
from fiskai_core.exec import tool_env
from fiskai_core.fisk import ApplicationModel, introspect
from fiskai_core.fisk._introspect import MAX_INTROSPECTION_BYTES

# Refuses anything but exactly `--fisk-introspect`, so every passing test also proves the invocation.
_ARGS_GUARD = '[ "$#" -eq 1 ] && [ "$1" = --fisk-introspect ] || { echo "unexpected args: $*"; exit 64; }\n'


def _sh(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + _ARGS_GUARD + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _python(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport sys\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _fails(app: str, *, window: float = 30.0) -> str:
    """Introspect `app`, expect an IntrospectionError, and return its message."""
    with pytest.raises(IntrospectionError) as caught:
        introspect(app, timeout=window)
    return str(caught.value)


def test_a_captured_fisk_document_parses_into_the_model(tmp_path: Path, captured_fixtures: Path) -> None:
    fixture = captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"
    app = _sh(tmp_path, "fixturectl", f"exec cat '{fixture}'\n")
    model = introspect(app)
    assert model == ApplicationModel.model_validate_json(fixture.read_bytes())
    assert model.name == "fixturectl"
    assert model.commands


def test_the_binary_gets_the_scrubbed_environment(tmp_path: Path, captured_fixtures: Path) -> None:
    fixture = captured_fixtures / "fisk" / "fixturectl.introspect.json"
    seen = tmp_path / "seen.json"
    app = _python(
        tmp_path,
        "envdump",
        "import json, os\n"
        f"open({str(seen)!r}, 'w', encoding='utf-8').write(json.dumps(dict(os.environ)))\n"
        f"sys.stdout.buffer.write(open({str(fixture)!r}, 'rb').read())",
    )
    base = {"PATH": os.environ["PATH"], "ANTHROPIC_API_KEY": "secret", "ANTHROPIC_PROFILE": "p", "KEEP": "1"}
    introspect(app, env=base)
    env = json.loads(seen.read_text(encoding="utf-8"))
    # Python may add LC_CTYPE in the child (PEP 538), so compare what fiskai passed, not the whole set.
    assert tool_env(base).items() <= env.items()
    assert "ANTHROPIC_API_KEY" not in env
    assert "ANTHROPIC_PROFILE" not in env
    assert env["KEEP"] == "1"
    assert env["LLMFORMAT"] == "1"


def test_a_bare_name_is_found_on_path(tmp_path: Path, captured_fixtures: Path) -> None:
    fixture = captured_fixtures / "fisk" / "ping.introspect.json"
    _sh(tmp_path, "fiskai-test-ping", f"exec cat '{fixture}'\n")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    model = introspect("fiskai-test-ping", env=env)
    assert model == ApplicationModel.model_validate_json(fixture.read_bytes())


def test_a_bare_name_missing_from_path_says_it_looked_on_path(tmp_path: Path) -> None:
    with pytest.raises(IntrospectionError) as caught:
        introspect("fiskai-no-such-app", env={"PATH": str(tmp_path)})
    message = str(caught.value)
    assert message.startswith('introspecting "fiskai-no-such-app": ')
    assert "on PATH" in message


def test_a_missing_path_is_named(tmp_path: Path) -> None:
    app = str(tmp_path / "missing")
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": no such file')
    assert "application_path" in message
    assert "relative to the current directory" not in message  # the path was absolute


def test_a_path_through_a_regular_file_is_unreadable(tmp_path: Path) -> None:
    regular = tmp_path / "file"
    regular.write_text("", encoding="utf-8")
    app = str(regular / "app")
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": cannot read it: ')


def test_a_directory_is_refused(tmp_path: Path) -> None:
    message = _fails(str(tmp_path))
    assert message.startswith(f'introspecting "{tmp_path}": it is a directory')


def test_a_file_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    app = tmp_path / "plain"
    app.write_text("#!/bin/sh\necho {}\n", encoding="utf-8")
    message = _fails(str(app))
    assert message.startswith(f'introspecting "{app}": permission denied')
    assert "chmod +x" in message


def test_a_non_zero_exit_reports_the_code_and_the_first_lines(tmp_path: Path) -> None:
    app = _sh(
        tmp_path, "old", "echo 'error: unknown long flag --fisk-introspect' >&2\necho 'usage: old [flags]'\nexit 2\n"
    )
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": it exited with code 2')
    assert "error: unknown long flag --fisk-introspect\n  usage: old [flags]" in message
    assert "fisk v0.9.0 or newer" in message


def test_only_the_first_lines_of_a_long_failure_are_shown(tmp_path: Path) -> None:
    app = _sh(tmp_path, "chatty", "seq 1 100\nexit 1\n")
    message = _fails(app)
    assert "1\n  2\n  3\n  4\n  5\n  ... (95 more lines)" in message
    assert "\n  6\n" not in message


def test_a_binary_killed_by_a_signal_is_reported(tmp_path: Path) -> None:
    app = _sh(tmp_path, "crash", "kill -KILL $$\n")
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": it was killed by a signal')


def test_output_that_is_not_json_is_a_decoding_error(tmp_path: Path) -> None:
    app = _sh(tmp_path, "garbage", "echo 'Usage: garbage COMMAND'\n")
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": decoding the introspection document: the output is not JSON')
    assert "Usage: garbage COMMAND" in message


def test_anything_on_stderr_breaks_the_document(tmp_path: Path, captured_fixtures: Path) -> None:
    fixture = captured_fixtures / "fisk" / "ping.introspect.json"
    app = _sh(tmp_path, "noisy", f"echo 'warning: deprecated' >&2\nexec cat '{fixture}'\n")
    message = _fails(app)
    assert "the output is not JSON" in message
    assert "warning: deprecated" in message


def test_printing_nothing_is_a_decoding_error(tmp_path: Path) -> None:
    app = _sh(tmp_path, "silent", "exit 0\n")
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": decoding the introspection document: it printed nothing')


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ("{}", "(name: "),
        ("[]", "(the document: "),
        ('{"name": "x", "commands": [{"help": "no name"}]}', "(commands[0].name: "),
    ],
)
def test_json_that_is_not_a_fisk_model_is_summarized(tmp_path: Path, document: str, where: str) -> None:
    app = _sh(tmp_path, "notfisk", f"echo '{document}'\n")
    message = _fails(app)
    assert message.startswith(f'introspecting "{app}": decoding the introspection document: the JSON is not a fisk')
    assert where in message
    assert "pydantic" not in message
    assert "\n" not in message


def test_a_document_of_exactly_16_mib_is_accepted(tmp_path: Path) -> None:
    document = b'{"name": "padded"}'
    padding = MAX_INTROSPECTION_BYTES - len(document)
    app = _python(tmp_path, "padded", f"sys.stdout.buffer.write({document!r} + b' ' * {padding})")
    model = introspect(app)
    assert model.name == "padded"


def test_more_than_16_mib_is_refused_naming_the_limit(tmp_path: Path) -> None:
    app = _python(tmp_path, "huge", f"sys.stdout.buffer.write(b' ' * {MAX_INTROSPECTION_BYTES + 1})")
    message = _fails(app)
    assert message == (
        f'introspecting "{app}" produced more than 16777216 bytes; '
        "the binary must emit a bounded introspection document"
    )


def test_an_endless_flood_is_cut_off_at_the_limit(tmp_path: Path) -> None:
    app = _sh(tmp_path, "yes", "exec yes\n")
    message = _fails(app)
    assert "produced more than 16777216 bytes" in message


def test_a_binary_that_hangs_times_out_naming_the_window(tmp_path: Path) -> None:
    app = _sh(tmp_path, "hang", "exec sleep 60\n")
    message = _fails(app, window=0.5)
    assert message == f'introspecting "{app}" timed out after 0.5s; the binary must respond within this window'


@pytest.mark.anyio
async def test_a_background_child_left_in_the_group_dies_when_introspection_exits(
    tmp_path: Path, captured_fixtures: Path
) -> None:
    # Issue 9.4.5: before the fix introspection waited out the 10 s wait delay and the sleeper survived it.
    fifo = tmp_path / "lifeline"
    os.mkfifo(fifo)
    model = captured_fixtures / "fisk" / "with-schemas" / "fixturectl.introspect.json"
    # The lifeline is opened before the fork, so the sleeper surely holds it when the binary exits.
    app = _sh(tmp_path, "leaver", f"exec 3>{fifo}\nsleep 60 &\ncat {model}\n")

    def _until_closed() -> str:
        with fifo.open(encoding="utf-8") as stream:
            return stream.read()

    parsed: list[ApplicationModel] = []
    try:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(lambda: anyio.to_thread.run_sync(_until_closed, abandon_on_cancel=True))
                parsed.append(await anyio.to_thread.run_sync(introspect, app, abandon_on_cancel=True))
    finally:
        try:
            # Unblock the reader if a failure left it waiting, so the run never hangs on it.
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    # The task group ended, so the FIFO reached end-of-file: the sleeper is dead.
    assert [model.name for model in parsed] == ["fixturectl"]
