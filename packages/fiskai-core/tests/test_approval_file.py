"""The approval rules file is trusted only when nobody but its owner could have written it."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from fiskai_core.approvals import MAX_FILE_BYTES, RuleError, load_rules, parse_rule, save_rules
from fiskai_core.approvals._file import check_owned

_TAGS = ("ai:confirm", "impact:rw")
_ATTACKER_RULE = "rules:\n  - tool: cluster_node_drain\n    patterns: ['...']\n    tags: [ai:confirm, impact:rw]\n"
_AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user (see check_owned)")
_OTHER_UID = 65534  # nobody


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "approvals"
    path.mkdir(mode=0o700)
    return path


def refused(path: Path, *expected: str) -> str:
    with pytest.raises(RuleError) as raised:
        load_rules(path)
    message = str(raised.value)
    assert f'"{path.parent}' in message and "\n" not in message
    for words in expected:
        assert words in message
    return message


def test_a_planted_symlink_is_refused_whatever_it_points_to(folder: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "attacker.yaml"
    elsewhere.write_text(_ATTACKER_RULE, encoding="utf-8")
    elsewhere.chmod(0o600)
    path = folder / "agent.yaml"
    path.symlink_to(elsewhere)
    refused(path, "is a symbolic link", "remove it")
    (folder / "dangling.yaml").symlink_to(tmp_path / "nothing-here.yaml")
    refused(folder / "dangling.yaml", "is a symbolic link")


def test_saving_replaces_a_planted_link_and_never_writes_through_it(folder: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    path = folder / "agent.yaml"
    path.symlink_to(victim)
    save_rules(path, [parse_rule("cluster_node_drain @1=n*", tags=_TAGS)], identity="agent")
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert not path.is_symlink() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [r.text for r in load_rules(path)] == ["cluster_node_drain '@1=n*'"]


@pytest.fixture
def fifo(folder: Path) -> Iterator[Path]:
    path = folder / "agent.yaml"
    os.mkfifo(path, 0o600)
    yield path
    # Should a reader be blocked in open() (the bug this guards against), a writer lets it go.
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError as err:
        assert err.errno == errno.ENXIO  # no reader waiting: nothing to release


@pytest.mark.anyio
async def test_a_fifo_is_refused_without_waiting_for_a_writer(fifo: Path) -> None:
    with anyio.fail_after(30), pytest.raises(RuleError, match="is a FIFO, not a regular file"):
        await anyio.to_thread.run_sync(load_rules, fifo, abandon_on_cancel=True)


def test_a_directory_is_refused(folder: Path) -> None:
    (folder / "agent.yaml").mkdir(mode=0o700)
    refused(folder / "agent.yaml", "is a directory, not a regular file")


@_AS_ROOT
def test_a_device_is_refused(folder: Path) -> None:
    path = folder / "agent.yaml"
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    refused(path, "is a character device")


@pytest.mark.parametrize(("mode", "who"), [(0o620, "its group"), (0o602, "others"), (0o666, "group and others")])
def test_a_file_others_can_write_is_refused_with_the_chmod_that_fixes_it(folder: Path, mode: int, who: str) -> None:
    path = folder / "agent.yaml"
    path.write_text(_ATTACKER_RULE, encoding="utf-8")
    path.chmod(mode)
    refused(path, f"is writable by {who} (mode {mode:04o})", f'chmod 600 "{path}"')
    path.chmod(0o644)  # readable by others is not a way in
    assert len(load_rules(path)) == 1


@pytest.mark.parametrize("mode", [0o770, 0o757, 0o1777])
def test_a_folder_others_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "approvals"
    folder.mkdir()
    path = folder / "agent.yaml"
    path.write_text(_ATTACKER_RULE, encoding="utf-8")
    path.chmod(0o600)
    folder.chmod(mode)
    refused(path, f'approval rules folder "{folder}" is writable by', f'chmod 700 "{folder}"')
    with pytest.raises(RuleError, match="approval rules folder"):
        save_rules(path, [])


def test_the_ownership_check_compares_with_the_effective_user(folder: Path) -> None:
    path = folder / "agent.yaml"
    path.write_text("rules: []\n", encoding="utf-8")
    path.chmod(0o600)
    info = path.stat()
    check_owned(info, path, folder=False, uid=info.st_uid)
    with pytest.raises(RuleError, match=rf"belongs to uid {info.st_uid}, not to you \(uid {info.st_uid + 1}\)"):
        check_owned(info, path, folder=False, uid=info.st_uid + 1)
    with pytest.raises(RuleError, match="approval rules folder .* belongs to uid"):
        check_owned(folder.stat(), folder, folder=True, uid=info.st_uid + 1)


@_AS_ROOT
def test_a_file_or_folder_of_another_user_is_refused_even_for_root(folder: Path) -> None:
    path = folder / "agent.yaml"
    path.write_text(_ATTACKER_RULE, encoding="utf-8")
    path.chmod(0o600)
    os.chown(path, _OTHER_UID, -1)
    refused(path, f"belongs to uid {_OTHER_UID}, not to you (uid 0)")
    os.chown(path, 0, -1)
    os.chown(folder, _OTHER_UID, -1)
    refused(path, f'approval rules folder "{folder}" belongs to uid {_OTHER_UID}')


def test_a_file_over_the_cap_is_refused_before_it_is_read(folder: Path) -> None:
    path = folder / "agent.yaml"
    with path.open("wb") as out:
        out.truncate(25 * 1024 * 1024)  # the 25 MB of the report, sparse: nothing to parse
    path.chmod(0o600)
    refused(path, "is 25.0 MiB, over the 1.0 MiB a rules file may hold")


def test_a_file_of_aliases_cannot_make_millions_of_rules(folder: Path) -> None:
    patterns = ", ".join(f"'@{n}=a'" for n in range(1, 2001))
    body = f"p: &p [{patterns}]\nr: &r {{tool: cluster_node_drain, patterns: *p, tags: [ai:confirm]}}\n"
    body += "rules: [" + ", ".join(["*r"] * 60_000) + "]\n"
    assert len(body) < MAX_FILE_BYTES
    path = folder / "agent.yaml"
    path.write_text(body, encoding="utf-8")
    path.chmod(0o600)
    refused(path, "patterns, over the 100,000 a rules file may hold")


def test_a_file_near_the_cap_loads_and_a_save_past_it_is_refused(folder: Path) -> None:
    entry = (
        "- tool: cluster_node_drain\n  patterns:\n  - --reason=*\n  - '@1=n{n}*'\n  - --label=team=a?b\n  - '...'\n"
        "  tags:\n  - ai:confirm\n  - impact:rw\n  added: '2026-01-02T03:04:05Z'\n"
    )
    body = "version: 1\nrules:\n" + "".join(entry.format(n=n) for n in range(6000))
    assert MAX_FILE_BYTES - 200_000 < len(body) <= MAX_FILE_BYTES
    path = folder / "agent.yaml"
    path.write_text(body, encoding="utf-8")
    path.chmod(0o600)
    rules = load_rules(path)
    assert len(rules) == 6000 and rules[5999].patterns == ("--reason=*", "@1=n5999*", "--label=team=a?b", "...")
    with pytest.raises(RuleError, match="over the 1.0 MiB a rules file may hold; remove rules"):
        save_rules(path, [*rules, *rules[:1500]], identity="agent")
    assert path.read_text(encoding="utf-8") == body, "a refused save leaves the file as it was"


def test_a_save_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "state" / "approvals" / "agent.yaml"
    old = os.umask(0)
    try:
        save_rules(path, [parse_rule("cluster_node_drain ...", tags=_TAGS)], identity="agent")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["agent.yaml"], "no temp file is left behind"
