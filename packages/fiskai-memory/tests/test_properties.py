"""Property tests on keys: nothing lands outside the store, and hard-to-see or planted names are refused."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings, strategies as st

from fiskai_memory import FileMemoryStore, MemoryNotFoundError, is_valid_key
from fiskai_memory.errors import MemoryIOError, MemoryKeyError

KEY_CHARS = "abcXYZ019._=-"
# Characters chosen to make traversal and separator mistakes likely, plus arbitrary Unicode.
NASTY_CHARS = KEY_CHARS + "/\\ \x00\n\t~:*?"
LOOK_ALIKES = [
    "\u0430",  # Cyrillic a
    "\u0435",  # Cyrillic e
    "\u043e",  # Cyrillic o
    "\uff0e",  # fullwidth full stop
    "\u2024",  # one dot leader
    "\u2215",  # division slash
    "\uff0f",  # fullwidth solidus
    "\u200b",  # zero-width space
    "\u00a0",  # no-break space
    "\x00",  # NUL
    "\u0301",  # combining acute accent
]

valid_keys = st.from_regex(r"[A-Za-z0-9_=-]([A-Za-z0-9._=-]{0,30}[A-Za-z0-9_=-])?", fullmatch=True).filter(
    lambda key: ".." not in key
)
any_keys = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=NASTY_CHARS, max_size=40),
    valid_keys,
    st.tuples(valid_keys, valid_keys).map(lambda pair: f"{pair[0]}/{pair[1]}"),
    valid_keys.map(lambda key: f"../{key}"),
)


def files_under(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


@settings(max_examples=150, deadline=None)
@given(key=any_keys, overwrite=st.booleans())
def test_a_write_is_either_refused_or_lands_exactly_at_key_md_in_the_store(key: str, overwrite: bool) -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        store = FileMemoryStore(root / "state" / "memory")
        try:
            anyio.run(lambda: store.write(key, "d", "c", overwrite=overwrite))
        except MemoryKeyError:
            assert not is_valid_key(key)
            assert files_under(root) == set()
            return
        assert is_valid_key(key)
        assert files_under(root) == {Path("state"), Path("state/memory"), Path("state/memory") / f"{key}.md"}


@settings(max_examples=60, deadline=None)
@given(key=any_keys)
def test_reads_and_deletes_of_any_key_stay_inside_the_store(key: str) -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        outside = root / "outside.md"
        outside.write_text("---\ndescription: outside\n---\n\nnot yours", encoding="utf-8")
        store = FileMemoryStore(root / "memory")
        anyio.run(lambda: store.write("inside", "d", "c"))

        async def probe() -> None:
            try:
                await store.read(key)
            except (MemoryKeyError, MemoryNotFoundError):
                pass
            try:
                await store.delete(key)
            except MemoryKeyError:
                pass

        anyio.run(probe)
        assert outside.read_text(encoding="utf-8").endswith("not yours")
        assert [item.key for item in anyio.run(store.list)] == ([] if key == "inside" else ["inside"])


@settings(max_examples=100, deadline=None)
@given(key=valid_keys, position=st.integers(min_value=0), look_alike=st.sampled_from(LOOK_ALIKES))
def test_look_alikes_and_nul_are_refused_with_the_character_visible(key: str, position: int, look_alike: str) -> None:
    at = position % (len(key) + 1)
    disguised = key[:at] + look_alike + key[at:]
    with pytest.raises(MemoryKeyError) as raised:
        anyio.run(lambda: FileMemoryStore("/nonexistent/never/created").write(disguised, "d", "c"))
    escaped = look_alike.encode("unicode_escape").decode("ascii")
    assert escaped in str(raised.value)
    assert escaped != look_alike  # shown as an escape, not as an invisible or look-alike character


@settings(max_examples=50, deadline=None)
@given(key=st.text(alphabet=KEY_CHARS.replace(".", ""), min_size=201, max_size=2000))
def test_very_long_keys_are_refused(key: str) -> None:
    with pytest.raises(MemoryKeyError) as raised:
        anyio.run(lambda: FileMemoryStore("/nonexistent/never/created").read(key))
    assert str(raised.value) == "memory key is too long: at most 200 characters"


@settings(max_examples=60, deadline=None)
@given(key=valid_keys, content=st.text(max_size=50))
def test_planted_symlinks_are_refused_and_their_targets_untouched(key: str, content: str) -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        directory = root / "memory"
        directory.mkdir()
        target = root / "target.txt"
        target.write_text("original", encoding="utf-8")
        (directory / f"{key}.md").symlink_to(target)
        store = FileMemoryStore(directory)

        async def attempts() -> list[str]:
            refusals: list[str] = []
            for attempt in (
                store.read(key),
                store.write(key, "d", content),
                store.write(key, "d", content, overwrite=True),
            ):
                try:
                    await attempt
                except MemoryIOError as err:
                    refusals.append(str(err))
            return refusals

        refusals = anyio.run(attempts)
        assert len(refusals) == 3
        assert all(message.endswith("is not a regular file") for message in refusals)
        assert anyio.run(store.list) == []
        assert target.read_text(encoding="utf-8") == "original"
        assert files_under(root) == {Path("memory"), Path("memory") / f"{key}.md", Path("target.txt")}
