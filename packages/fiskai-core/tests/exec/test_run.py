"""Safe execution against real child processes: no shell, no stdin, one pipe, group kill, WaitDelay."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.to_thread
import pytest

from fiskai_core.errors import CommandError, CommandStartError, CommandTimeoutError
from fiskai_core.exec import format_seconds, tool_env
from fiskai_core.exec.running import ExecOutcome, run_argv

pytestmark = pytest.mark.anyio


def _script(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _python(tmp_path: Path, name: str, body: str) -> str:
    return _script(tmp_path, name, f"#!{sys.executable}\nimport json, os, sys\n{body}\n")


def _watch_lifeline(fifo: Path, started: anyio.Event) -> str:
    """Block (in a worker thread) until every holder of the FIFO's write end has died.

    The grandchild and everything it starts hold the write end, so end-of-file is the event "the whole
    group is dead", observed without polling.
    """
    with fifo.open(encoding="utf-8") as stream:
        first = stream.readline()
        anyio.from_thread.run_sync(started.set)
        return first + stream.read()


async def _lifeline(fifo: Path, started: anyio.Event) -> None:
    # Abandoned on cancel: a failing test must not hang on a FIFO no writer ever opens.
    await anyio.to_thread.run_sync(_watch_lifeline, fifo, started, abandon_on_cancel=True)


def _grandchild_parent(tmp_path: Path) -> tuple[list[str], Path, Path]:
    """A command that backgrounds a grandchild (writes a marker after 2 s) and then sleeps for long."""
    fifo = tmp_path / "lifeline"
    os.mkfifo(fifo)
    marker = tmp_path / "marker"
    script = _script(
        tmp_path,
        "parent",
        '#!/bin/sh\nsh -c \'echo started >&3; sleep 2; touch "$1"\' grandchild "$2" 3>"$1" &\necho parent\nsleep 60\n',
    )
    return [script, str(fifo), str(marker)], fifo, marker


async def test_argv_reaches_the_child_verbatim_without_a_shell(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    args = [
        "two words",
        "'single'",
        '"double"',
        f"$(touch {planted})",
        f"`touch {planted}`",
        f"; touch {planted}",
        "a\nb",
        "*",
        "| cat",
        "&& true",
        "$HOME",
        "",
        "--",
    ]
    script = _python(tmp_path, "echo-argv", "print(json.dumps(sys.argv[1:]))")
    with anyio.fail_after(10):
        outcome = await run_argv([script, *args], env=tool_env())
    assert json.loads(outcome.output) == args
    assert not planted.exists()


async def test_stdin_is_dev_null_even_when_ours_has_data(tmp_path: Path) -> None:
    body = "st = os.fstat(0)\nprint(json.dumps([os.read(0, 10).decode(), st.st_rdev == os.stat('/dev/null').st_rdev]))"
    script = _python(tmp_path, "read-stdin", body)
    # Put readable data on our own fd 0 for the duration, so inheriting it would show.
    saved = os.dup(0)
    read_end, write_end = os.pipe()
    os.write(write_end, b"leaked")
    os.close(write_end)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        with anyio.fail_after(10):
            outcome = await run_argv([script], env=tool_env())
    finally:
        os.dup2(saved, 0)
        os.close(saved)
    assert json.loads(outcome.output) == ["", True]


async def test_stdout_and_stderr_interleave_in_write_order(tmp_path: Path) -> None:
    script = _script(
        tmp_path, "interleave", "#!/bin/sh\necho out1\necho err1 >&2\necho out2\necho err2 >&2\necho out3\n"
    )
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    assert outcome == ExecOutcome(exit_code=0, output="out1\nerr1\nout2\nerr2\nout3\n", truncated=False)


async def test_a_non_zero_exit_is_an_outcome_with_its_code_and_output(tmp_path: Path) -> None:
    script = _script(tmp_path, "fail", "#!/bin/sh\necho 'no such node' >&2\nexit 3\n")
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    assert outcome == ExecOutcome(exit_code=3, output="no such node\n")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
async def test_death_by_a_signal_we_did_not_send_reports_minus_one(tmp_path: Path, sig: signal.Signals) -> None:
    # Python, not sh: a shell cannot un-ignore a signal it inherited ignored (nohup, a CI runner's trap).
    restore = f"signal.signal({int(sig)}, signal.SIG_DFL)" if sig != signal.SIGKILL else ""
    body = f"import signal\nprint('before', flush=True)\n{restore}\nos.kill(os.getpid(), {int(sig)})\nprint('after')"
    script = _python(tmp_path, "suicide", body)
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    assert outcome == ExecOutcome(exit_code=-1, output="before\n")


async def test_the_child_leads_its_own_session_and_process_group(tmp_path: Path) -> None:
    script = _python(tmp_path, "ids", "print(json.dumps([os.getpid(), os.getpgid(0), os.getsid(0)]))")
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    pid, pgid, sid = json.loads(outcome.output)
    assert pid == pgid == sid
    assert pgid != os.getpgid(0)


async def test_cwd_is_the_child_working_directory(tmp_path: Path) -> None:
    script = _python(tmp_path, "cwd", "print(os.getcwd())")
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env(), cwd=str(tmp_path))
    assert outcome.output == f"{tmp_path}\n"


async def test_invalid_utf8_output_is_replaced_not_fatal(tmp_path: Path) -> None:
    script = _python(tmp_path, "bytes", r"sys.stdout.buffer.write(b'ok \xff\xfe end')")
    with anyio.fail_after(10):
        outcome = await run_argv([script], env=tool_env())
    assert outcome.output == "ok \ufffd\ufffd end"


async def test_timeout_kills_the_whole_group_including_a_backgrounded_grandchild(tmp_path: Path) -> None:
    argv, fifo, marker = _grandchild_parent(tmp_path)
    started = anyio.Event()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_lifeline, fifo, started)
            with pytest.raises(CommandTimeoutError) as caught:
                await run_argv(argv, env=tool_env(), timeout=1.0)
            assert started.is_set()
            assert str(caught.value) == f'running command "{argv[0]}": timed out after 1s'
            assert caught.value.path == argv[0]
    # The lifeline reached end-of-file (the task group ended) before the grandchild's 2 s were up.
    assert not marker.exists()


async def test_cancellation_kills_the_whole_group_and_propagates(tmp_path: Path) -> None:
    argv, fifo, marker = _grandchild_parent(tmp_path)
    started = anyio.Event()
    run_scope = anyio.CancelScope()
    finished = False

    async def run() -> None:
        nonlocal finished
        with run_scope:
            await run_argv(argv, env=tool_env())
            finished = True

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_lifeline, fifo, started)
            tasks.start_soon(run)
            await started.wait()
            run_scope.cancel()
    assert run_scope.cancelled_caught
    assert not finished
    assert not marker.exists()


async def test_output_held_open_by_an_escaped_grandchild_is_abandoned_after_wait_delay(tmp_path: Path) -> None:
    pid_file = tmp_path / "escaped.pid"
    body = (
        "if os.fork() == 0:\n"
        "    os.setsid()\n"  # leaves the group, so only WaitDelay can stop us waiting on its copy of the pipe
        f"    open({str(pid_file)!r}, 'w', encoding='utf-8').write(str(os.getpid()))\n"
        "    os.execv('/bin/sleep', ['sleep', '60'])\n"
        f"while not os.path.exists({str(pid_file)!r}): pass\n"
        "print('parent done', flush=True)\n"
        "sys.exit(4)"
    )
    script = _python(tmp_path, "daemonize", body)
    try:
        with anyio.fail_after(10):
            outcome = await run_argv([script], env=tool_env(), wait_delay=0.5)
        assert outcome == ExecOutcome(exit_code=4, output="parent done\n")
    finally:
        os.kill(int(pid_file.read_text(encoding="utf-8")), signal.SIGKILL)


async def test_a_missing_bare_name_is_not_found_in_path(tmp_path: Path) -> None:
    env = tool_env() | {"PATH": str(tmp_path)}
    with pytest.raises(CommandStartError) as caught:
        await run_argv(["fiskai-no-such-tool"], env=env)
    assert caught.value.path == "fiskai-no-such-tool"
    assert str(caught.value).startswith('running command "fiskai-no-such-tool": ')
    assert "PATH" in caught.value.reason


async def test_a_missing_path_names_the_binary(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    with pytest.raises(CommandStartError) as caught:
        await run_argv([missing], env=tool_env())
    assert str(caught.value).startswith(f'running command "{missing}": ')
    assert "does not exist" in caught.value.reason


async def test_a_file_without_execute_permission_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    with pytest.raises(CommandStartError) as caught:
        await run_argv([str(plain)], env=tool_env())
    assert str(caught.value).startswith(f'running command "{plain}": ')
    assert "not executable" in caught.value.reason


async def test_a_script_without_a_shebang_is_not_run_through_a_shell(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    script = _script(tmp_path, "no-shebang", f"touch '{planted}'\n")
    with pytest.raises(CommandStartError) as caught:
        await run_argv([script], env=tool_env())
    assert "exec format error" in caught.value.reason
    assert not planted.exists()


async def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandStartError) as caught:
        await run_argv([str(tmp_path)], env=tool_env())
    assert "is a directory" in caught.value.reason


async def test_a_missing_working_directory_is_named(tmp_path: Path) -> None:
    script = _script(tmp_path, "ok", "#!/bin/sh\ntrue\n")
    with pytest.raises(CommandStartError) as caught:
        await run_argv([script], env=tool_env(), cwd=str(tmp_path / "gone"))
    assert str(tmp_path / "gone") in caught.value.reason
    assert "working directory" in caught.value.reason


@pytest.mark.parametrize(("seconds", "text"), [(30.0, "30s"), (0.5, "0.5s"), (2.25, "2.25s"), (86400, "86400s")])
def test_durations_read_like_go(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_command_errors_are_fiskai_errors() -> None:
    assert issubclass(CommandStartError, CommandError)
    assert issubclass(CommandTimeoutError, CommandError)


async def test_an_empty_argv_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="non-empty argv"):
        await run_argv([], env={})


async def test_a_background_child_left_in_the_group_dies_when_the_command_exits(tmp_path: Path) -> None:
    # Issue 9.4.5: the command exits at once, leaving a sleeper in its process group that holds the pipe.
    # Before the fix the call waited out the 10 s wait delay and the sleeper outlived it.
    fifo = tmp_path / "lifeline"
    os.mkfifo(fifo)
    # The leader opens the lifeline before it forks, so the sleeper surely holds it when the leader exits.
    script = _script(tmp_path, "leaver", '#!/bin/sh\nexec 3>"$1"\necho started >&3\nsleep 60 &\necho done\n')
    started = anyio.Event()
    outcomes: list[ExecOutcome] = []
    try:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_lifeline, fifo, started)
                outcomes.append(await run_argv([script, str(fifo)], env=tool_env()))
    finally:
        _release(fifo)
    # The lifeline reached end-of-file: every holder of the FIFO, the sleeper included, is dead.
    assert outcomes == [ExecOutcome(exit_code=0, output="done\n")]


def _release(fifo: Path) -> None:
    """Unblock a lifeline reader left waiting by a failed test, so the run never hangs on it."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # no reader waiting: nothing to release
