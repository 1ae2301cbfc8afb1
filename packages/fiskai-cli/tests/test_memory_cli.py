"""`fiskai memory`: entries written through the library are listed, shown and removed by the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import nats
import pytest
from click.testing import CliRunner
from nats.js.api import KeyValueConfig

from fiskai_cli._root import cli
from fiskai_memory import FileMemoryStore, Store, open_file_store
from fiskai_memory.file import default_memory_directory
from fiskai_memory.kv import connect_kv_store
from fiskai_memory.store import MAX_ENTRY_BYTES


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def seed(store: Store) -> None:
    async def write() -> None:
        await store.write("build.notes", "How the build works", "make all\nthen make test\n")
        await store.write("endpoint", "The staging API\nendpoint", "https://staging.example.test")

    anyio.run(write)


def test_list_shows_entries_written_through_the_library() -> None:
    seed(open_file_store("cowsay"))
    code, out, _ = invoke("memory", "list", "--identity", "cowsay")
    assert code == 0
    assert f"2 memories in {default_memory_directory('cowsay')}" in out
    lines = out.splitlines()
    assert lines[2].split() == ["KEY", "UPDATED", "DESCRIPTION"]
    assert lines[3].startswith("  build.notes") and lines[3].endswith("How the build works")
    assert lines[4].startswith("  endpoint") and lines[4].endswith("The staging API endpoint")


def test_list_json_has_keys_descriptions_and_timestamps() -> None:
    seed(open_file_store("cowsay"))
    code, out, _ = invoke("memory", "list", "--identity", "cowsay", "--format", "json")
    assert code == 0
    report = json.loads(out)
    assert report["store"] == str(default_memory_directory("cowsay"))
    assert [(m["key"], m["description"]) for m in report["memories"]] == [
        ("build.notes", "How the build works"),
        ("endpoint", "The staging API endpoint"),
    ]
    assert all(m["created"] and m["updated"] for m in report["memories"])


def test_list_of_an_empty_or_missing_store_says_so() -> None:
    code, out, _ = invoke("memory", "list", "--identity", "nobody")
    assert code == 0
    assert out.strip() == f"No memories stored in {default_memory_directory('nobody')}"
    assert not default_memory_directory("nobody").exists()


def test_show_prints_description_timestamps_and_content() -> None:
    seed(open_file_store("cowsay"))
    code, out, _ = invoke("memory", "show", "build.notes", "--identity", "cowsay")
    assert code == 0
    assert out.startswith("key          build.notes\ndescription  How the build works\ncreated      20")
    assert out.endswith("\n\nmake all\nthen make test\n")


def test_show_json_includes_the_content() -> None:
    seed(open_file_store("cowsay"))
    code, out, _ = invoke("memory", "show", "endpoint", "--identity", "cowsay", "--format", "json")
    assert code == 0
    shown = json.loads(out)
    assert (shown["key"], shown["description"], shown["content"]) == (
        "endpoint",
        "The staging API endpoint",
        "https://staging.example.test",
    )


def test_show_escapes_terminal_control_sequences_in_text_but_not_in_json(tmp_path: Path) -> None:
    anyio.run(lambda: FileMemoryStore(tmp_path).write("k", "d", "red \x1b[31malert\x1b[0m\rover\tok"))
    code, out, _ = invoke("memory", "show", "k", "--directory", str(tmp_path))
    assert code == 0
    assert "\x1b" not in out and "\r" not in out
    assert out.endswith("red \\x1b[31malert\\x1b[0m\\x0dover\tok\n")
    code, out, _ = invoke("memory", "show", "k", "--directory", str(tmp_path), "--format", "json")
    assert json.loads(out)["content"] == "red \x1b[31malert\x1b[0m\rover\tok"


def test_list_and_show_neutralize_c1_bell_osc_and_bidi_a_model_stored(tmp_path: Path) -> None:
    # What a model could store: an 8-bit CSI, a clipboard write (OSC 52) ended by BEL, a right-to-left override.
    content = "pay \x9b2J\x1b]52;c;aGk=\x07to acct\u202e1234"
    anyio.run(lambda: FileMemoryStore(tmp_path).write("k", "desc \x9b2J\u202eevil", content))
    raw = ("\x1b", "\x07", "\x9b", "\u202e")
    for args in (("list",), ("show", "k"), ("show", "k", "--format", "json")):
        result = CliRunner().invoke(cli, ["memory", *args, "--directory", str(tmp_path)], color=True)
        assert result.exit_code == 0, result.output
        assert not [c for c in raw if c in result.stdout], args
        if args[-1] == "json":
            assert json.loads(result.stdout)["content"] == content
        elif args == ("list",):
            assert "<U+202E>evil" in result.stdout
        else:
            assert result.stdout.endswith("pay \\x9b2J\\x1b]52;c;aGk=\\x07to acct<U+202E>1234\n")


def test_rm_removes_the_entry_and_a_second_rm_fails_clearly() -> None:
    seed(open_file_store("cowsay"))
    code, out, _ = invoke("memory", "rm", "endpoint", "--identity", "cowsay")
    assert code == 0
    assert out.strip() == f"Removed endpoint from {default_memory_directory('cowsay')}"
    code, _, err = invoke("memory", "rm", "endpoint", "--identity", "cowsay")
    assert code == 1
    assert err.strip() == f'Error: no memory is stored under key "endpoint" in {default_memory_directory("cowsay")}'
    code, out, _ = invoke("memory", "list", "--identity", "cowsay", "--format", "json")
    assert [m["key"] for m in json.loads(out)["memories"]] == ["build.notes"]


def test_rm_json_reports_the_deletion(tmp_path: Path) -> None:
    seed(FileMemoryStore(tmp_path))
    code, out, _ = invoke("memory", "rm", "endpoint", "--directory", str(tmp_path), "--format", "json")
    assert code == 0
    assert json.loads(out) == {"key": "endpoint", "deleted": True, "store": str(tmp_path)}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "missing", "--identity", "cowsay"], 'Error: no memory is stored under key "missing" in '),
        (["show", "../etc/passwd", "--identity", "cowsay"], 'Error: memory key "../etc/passwd" is invalid: use only'),
        (["rm", ".hidden", "--identity", "cowsay"], 'Error: memory key ".hidden" is invalid: it must not start'),
        (["list", "--identity", "../x"], 'Error: the agent identity "../x" cannot name a memory directory'),
        (["list"], "Error: no --identity given and no configuration at agent.yaml to take it from"),
    ],
)
def test_failures_are_one_clear_line_without_a_traceback(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no agent.yaml here
    code, out, err = invoke("memory", *args)
    assert code == 1
    assert out == ""
    assert err.startswith(message)
    assert "Traceback" not in err


def test_configuration_gives_identity_and_directory(tmp_path: Path) -> None:
    directory = tmp_path / "configured"
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"identity: cowsay\nharness:\n  memory:\n    enabled: true\n    options:\n      directory: {directory}\n",
        encoding="utf-8",
    )
    seed(FileMemoryStore(directory))
    code, out, _ = invoke("-c", str(config), "memory", "list", "--format", "json")
    assert code == 0
    assert json.loads(out)["store"] == str(directory)
    assert len(json.loads(out)["memories"]) == 2


def test_configuration_identity_is_used_for_the_default_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "agent.yaml").write_text("identity: fromconfig\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    seed(open_file_store("fromconfig"))
    code, out, _ = invoke("memory", "list", "--format", "json")
    assert code == 0
    assert json.loads(out)["store"] == str(default_memory_directory("fromconfig"))
    code, out, _ = invoke("memory", "list", "--identity", "other", "--format", "json")
    assert json.loads(out)["memories"] == []


def test_an_explicit_configuration_that_is_missing_is_an_error(tmp_path: Path) -> None:
    code, _, err = invoke("-c", str(tmp_path / "absent.yaml"), "memory", "list", "--identity", "x")
    assert code == 1
    assert "absent.yaml" in err and "does not exist" in err


def test_unknown_backend_lists_the_known_ones(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("identity: x\nharness:\n  memory:\n    backend: redis\n", encoding="utf-8")
    code, _, err = invoke("-c", str(config), "memory", "list")
    assert code == 1
    assert 'unknown memory backend "redis": known backends are [file jetstream]' in err


@pytest.mark.nats
def test_jetstream_backend_from_the_configuration(tmp_path: Path, nats_server: str) -> None:
    async def prepare() -> None:
        connection = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
        try:
            js = connection.jetstream()  # pyright: ignore[reportUnknownMemberType]
            await js.create_key_value(KeyValueConfig(bucket="agents", history=1, max_value_size=MAX_ENTRY_BYTES))  # pyright: ignore[reportUnknownMemberType]
        finally:
            await connection.close()
        async with connect_kv_store(nats_server, identity="cowsay", bucket="agents") as store:
            await store.write("fact", "A fact from KV", "stored in NATS")

    anyio.run(prepare)
    config = tmp_path / "agent.yaml"
    config.write_text(
        "identity: cowsay\nharness:\n  memory:\n    enabled: true\n    backend: jetstream\n"
        "    options:\n      bucket: agents\n",
        encoding="utf-8",
    )
    code, out, _ = invoke("-c", str(config), "memory", "list", "--nats-url", nats_server, "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    assert report["store"] == f"cowsay.* in KV bucket agents at {nats_server}"
    assert [(m["key"], m["description"]) for m in report["memories"]] == [("fact", "A fact from KV")]
    code, out, _ = invoke("-c", str(config), "memory", "show", "fact", "--nats-url", nats_server, "--format", "json")
    assert json.loads(out)["content"] == "stored in NATS"
    code, out, _ = invoke("-c", str(config), "memory", "rm", "fact", "--nats-url", nats_server)
    assert code == 0
    code, _, err = invoke("-c", str(config), "memory", "show", "fact", "--nats-url", nats_server)
    assert code == 1
    assert 'no memory is stored under key "fact"' in err


def test_misspelled_backend_option_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("identity: x\nharness:\n  memory:\n    options:\n      dir: somewhere\n", encoding="utf-8")
    code, _, err = invoke("-c", str(config), "memory", "list")
    assert code == 1
    assert err.strip() == 'Error: invalid file memory options: unknown option "dir" (known: directory)'


def test_help_lists_the_subcommands_and_keeps_the_examples_unwrapped() -> None:
    code, out, _ = invoke("memory", "--help")
    assert code == 0
    assert "\n    fiskai memory list --identity cowsay\n" in out
    for name in ("list", "show", "rm"):
        assert f"\n  {name} " in out
    code, out, _ = invoke("--help")
    assert "memory " in out
