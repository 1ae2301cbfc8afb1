"""File backend specifics: where entries live, how they look on disk, and what it refuses to follow."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from fiskai_memory import FileMemoryStore, MemoryNotFoundError, open_file_store
from fiskai_memory.errors import MemoryConfigError, MemoryExistsError, MemoryIOError
from fiskai_memory.file import default_memory_directory

pytestmark = pytest.mark.anyio


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def test_default_directory_is_under_xdg_state_home() -> None:
    # The autouse root fixture points XDG_STATE_HOME into a temp dir.
    assert default_memory_directory("cowsay") == Path(os.environ["XDG_STATE_HOME"]) / "fiskai" / "memory" / "cowsay"
    assert open_file_store("cowsay").directory == default_memory_directory("cowsay")


def test_relative_or_missing_xdg_state_home_falls_back_to_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    assert default_memory_directory("app") == tmp_path / ".local" / "state" / "fiskai" / "memory" / "app"
    monkeypatch.delenv("XDG_STATE_HOME")
    assert default_memory_directory("app") == tmp_path / ".local" / "state" / "fiskai" / "memory" / "app"


@pytest.mark.parametrize("identity", ["", "../escape", "a/b", ".hidden", "has space"])
def test_identity_that_is_not_a_key_cannot_name_the_directory(identity: str) -> None:
    with pytest.raises(MemoryConfigError, match="cannot name a memory directory"):
        open_file_store(identity)


def test_configured_directory_is_resolved_against_store_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert open_file_store("x", directory="mem", store_dir=tmp_path / "base").directory == tmp_path / "base" / "mem"
    assert open_file_store("x", directory="mem").directory == Path("mem")
    assert open_file_store("x", directory=tmp_path / "abs", store_dir="/elsewhere").directory == tmp_path / "abs"


async def test_nothing_is_created_until_the_first_write(tmp_path: Path) -> None:
    directory = tmp_path / "deep" / "memory"
    store = FileMemoryStore(directory)
    assert await store.list() == []
    with pytest.raises(MemoryNotFoundError):
        await store.read("k")
    assert await store.delete("k") is False
    assert not directory.exists()
    await store.write("k", "d", "c")
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "k.md").stat().st_mode) == 0o600


async def test_entry_is_a_markdown_file_with_frontmatter(tmp_path: Path) -> None:
    store = FileMemoryStore(tmp_path)
    await store.write("build.notes", "Build notes", "make all\n")
    text = (tmp_path / "build.notes.md").read_text(encoding="utf-8")
    assert text.startswith("---\ndescription: Build notes\ncreated: ")
    assert text.endswith("\n---\n\nmake all\n")
    assert names(tmp_path) == ["build.notes.md"]  # no temp file left behind


async def test_create_refuses_an_existing_key_and_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    store = FileMemoryStore(tmp_path)
    await store.write("k", "d", "original")
    before = (tmp_path / "k.md").read_bytes()
    with pytest.raises(MemoryExistsError):
        await store.write("k", "other", "replacement")
    assert (tmp_path / "k.md").read_bytes() == before
    assert names(tmp_path) == ["k.md"]


async def test_symlinked_entries_are_neither_read_listed_nor_written_through(tmp_path: Path) -> None:
    store_dir = tmp_path / "memory"
    secret = tmp_path / "secret.txt"
    secret.write_text("---\ndescription: secret\n---\n\ntop secret", encoding="utf-8")
    store = FileMemoryStore(store_dir)
    await store.write("real", "d", "c")
    (store_dir / "planted.md").symlink_to(secret)
    (store_dir / "dangling.md").symlink_to(tmp_path / "nowhere")

    assert [item.key for item in await store.list()] == ["real"]
    for key in ("planted", "dangling"):
        with pytest.raises(MemoryIOError, match="is not a regular file"):
            await store.read(key)
        with pytest.raises(MemoryIOError, match="is not a regular file"):
            await store.write(key, "d", "overwritten", overwrite=True)
        with pytest.raises(MemoryIOError, match="is not a regular file"):
            await store.write(key, "d", "created")
    assert secret.read_text(encoding="utf-8").endswith("top secret")
    assert not (tmp_path / "nowhere").exists()

    assert await store.delete("planted") is True  # removes the link, never its target
    assert secret.exists()
    assert not (store_dir / "planted.md").is_symlink()


async def test_fifo_under_an_entry_name_is_refused_without_blocking(tmp_path: Path) -> None:
    store = FileMemoryStore(tmp_path)
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(MemoryIOError, match="is not a regular file"):
        await store.read("pipe")
    assert await store.list() == []


async def test_foreign_names_temp_files_and_directories_are_ignored(tmp_path: Path) -> None:
    store = FileMemoryStore(tmp_path)
    await store.write("kept", "d", "c")
    for name in (
        "notes.txt",
        "README",
        ".memtmp-0123456789abcdef",
        ".hidden.md",
        "bad..name.md",
        "has space.md",
        ".md",
    ):
        (tmp_path / name).write_text("---\ndescription: foreign\n---\n\nx", encoding="utf-8")
    (tmp_path / "dir.md").mkdir()
    assert [item.key for item in await store.list()] == ["kept"]


async def test_hand_written_files_read_as_body_with_their_mtime(tmp_path: Path) -> None:
    store = FileMemoryStore(tmp_path)
    (tmp_path / "plain.md").write_text("just notes\n---\nmore", encoding="utf-8")
    (tmp_path / "open.md").write_text("---\ndescription: never closed\n", encoding="utf-8")
    os.utime(tmp_path / "plain.md", (1_700_000_000, 1_700_000_000))
    plain = await store.read("plain")
    assert (plain.description, plain.content) == ("", "just notes\n---\nmore")
    assert plain.created == plain.updated
    assert plain.updated is not None and plain.updated.timestamp() == 1_700_000_000
    assert (await store.read("open")).content == "---\ndescription: never closed\n"
    assert [(i.key, i.description) for i in await store.list()] == [("open", ""), ("plain", "")]


async def test_overwrite_keeps_created_and_works_without_a_prior_read(tmp_path: Path) -> None:
    store = FileMemoryStore(tmp_path)
    await store.write("k", "d", "one")
    first = await store.read("k")
    await FileMemoryStore(tmp_path).write("k", "d2", "two", overwrite=True)
    second = await store.read("k")
    assert (second.content, second.created) == ("two", first.created)


async def test_invalid_utf8_on_disk_is_read_with_replacement(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"---\ndescription: d\n---\n\n\xff\xfeok")
    assert (await FileMemoryStore(tmp_path).read("bin")).content == "\ufffd\ufffdok"
