"""Test support shipped as product code: a fake store and the contract every backend must meet.

`InMemoryMemoryStore` stands in for a real backend in tests of the store's callers (the memory tools, the
start-of-run index). `CONTRACT_CHECKS` is the backend-agnostic suite: each check takes a fresh, empty store
and raises `AssertionError` when the store breaks the `Store` contract. Run it for a backend with::

    @pytest.mark.parametrize("check", CONTRACT_CHECKS.values(), ids=list(CONTRACT_CHECKS))
    async def test_contract(check: ContractCheck, tmp_path: Path) -> None:
        await check(FileMemoryStore(tmp_path / "memory"))

Checks that replace an entry read it first, so read-before-update backends pass them unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ._fake import InMemoryMemoryStore
from .errors import (
    MemoryExistsError,
    MemoryFullError,
    MemoryKeyError,
    MemoryNotFoundError,
    MemoryStoreError,
    MemoryValueError,
)
from .store import MAX_CONTENT_BYTES, MAX_ENTRIES, Store

__all__ = ["CONTRACT_CHECKS", "INVALID_KEYS", "ContractCheck", "InMemoryMemoryStore"]

ContractCheck = Callable[[Store], Awaitable[None]]

INVALID_KEYS: tuple[str, ...] = (
    "",
    "a/b",
    "../escape",
    "..",
    ".hidden",
    "trailing.",
    "a..b",
    "with space",
    "nul\x00byte",
    "tab\tkey",
    "new\nline",
    "back\\slash",
    "x" * 201,
    "\u0430pple",  # Cyrillic a
    "full\uff0ewidth",  # fullwidth full stop
    "division\u2215slash",
    "zero\u200bwidth",
    "caf\u00e9",
)
"""Keys every backend must refuse: traversal, separators, control characters, look-alikes, too long."""


def _equal(actual: object, expected: object, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


async def _raises(error: type[MemoryStoreError], call: Awaitable[object], what: str) -> MemoryStoreError:
    try:
        await call
    except error as raised:
        return raised
    except MemoryStoreError as other:
        raise AssertionError(f"{what}: expected {error.__name__}, got {type(other).__name__}: {other}") from other
    raise AssertionError(f"{what}: expected {error.__name__}, nothing was raised")


async def check_empty_store(store: Store) -> None:
    """A fresh store lists nothing, misses on read and reports nothing deleted."""
    _equal(await store.list(), [], "list of an empty store")
    await _raises(MemoryNotFoundError, store.read("absent"), "read of a missing key")
    _equal(await store.delete("absent"), False, "delete of a missing key")


async def check_create_then_read(store: Store) -> None:
    """A created entry reads back exactly, with timestamps."""
    await store.write("build.notes", "How the build works", "make all\nthen make test\n")
    entry = await store.read("build.notes")
    _equal(
        (entry.key, entry.description, entry.content),
        ("build.notes", "How the build works", "make all\nthen make test\n"),
        "entry",
    )
    if entry.created is None or entry.updated is None or entry.created > entry.updated:
        raise AssertionError(f"timestamps: created {entry.created!r}, updated {entry.updated!r}")


async def check_create_refuses_existing(store: Store) -> None:
    """A create of a stored key raises MemoryExistsError and leaves the entry untouched."""
    await store.write("k", "first", "one")
    raised = await _raises(MemoryExistsError, store.write("k", "second", "two"), "create of an existing key")
    _equal(getattr(raised, "key", None), "k", "MemoryExistsError.key")
    entry = await store.read("k")
    _equal((entry.description, entry.content), ("first", "one"), "entry after a refused create")


async def check_overwrite_replaces(store: Store) -> None:
    """An overwrite (after a read) replaces description and content and keeps the created time."""
    await store.write("k", "first", "one")
    before = await store.read("k")
    await store.write("k", "second", "two", overwrite=True)
    after = await store.read("k")
    _equal((after.description, after.content), ("second", "two"), "entry after overwrite")
    _equal(after.created, before.created, "created time after overwrite")
    if after.updated is None or before.updated is None or after.updated < before.updated:
        raise AssertionError(f"updated went backwards: {before.updated!r} -> {after.updated!r}")
    _equal([item.key for item in await store.list()], ["k"], "keys after overwrite")


async def check_overwrite_of_missing_key_creates(store: Store) -> None:
    """An overwrite of a key nothing is stored under creates it."""
    await store.write("fresh", "made by overwrite", "body", overwrite=True)
    _equal((await store.read("fresh")).content, "body", "content")


async def check_delete(store: Store) -> None:
    """Delete reports whether the entry was there, is idempotent, and the key can be created again."""
    await store.write("gone", "soon", "x")
    _equal(await store.delete("gone"), True, "first delete")
    _equal(await store.delete("gone"), False, "second delete")
    await _raises(MemoryNotFoundError, store.read("gone"), "read after delete")
    _equal(await store.list(), [], "list after delete")
    await store.write("gone", "back", "y")
    _equal((await store.read("gone")).content, "y", "content after re-create")


async def check_list_sorted_with_descriptions(store: Store) -> None:
    """List returns every key with its description, sorted by key."""
    for key in ("zeta", "alpha", "Mid_1", "b=c", "a-b.c"):
        await store.write(key, f"about {key}", key)
    items = await store.list()
    _equal(
        [(i.key, i.description) for i in items],
        [(k, f"about {k}") for k in sorted(["zeta", "alpha", "Mid_1", "b=c", "a-b.c"])],
        "listing",
    )


async def check_description_collapsed_to_one_line(store: Store) -> None:
    """A description is stored as one trimmed line; one that is empty after that is refused."""
    await store.write("k", "  line one\n\tline two\r\n  three  ", "c")
    _equal((await store.read("k")).description, "line one line two three", "description")
    for blank in ("", "   ", "\n\t\r"):
        await _raises(MemoryValueError, store.write("blank", blank, "c"), f"description {blank!r}")
    await _raises(MemoryNotFoundError, store.read("blank"), "read after refused writes")


async def check_content_size_limit(store: Store) -> None:
    """Content of exactly 64 KiB is stored; one byte more (counted in UTF-8) is refused."""
    await store.write("max", "at the limit", "x" * MAX_CONTENT_BYTES)
    _equal(len((await store.read("max")).content), MAX_CONTENT_BYTES, "content length")
    await _raises(MemoryValueError, store.write("over", "d", "x" * (MAX_CONTENT_BYTES + 1)), "content over the limit")
    # 21846 three-byte characters are 65538 bytes but only 21846 characters.
    await _raises(MemoryValueError, store.write("wide", "d", "\u20ac" * 21846), "content over the limit in bytes")
    await _raises(MemoryNotFoundError, store.read("over"), "read after a refused write")


async def check_invalid_keys_refused_everywhere(store: Store) -> None:
    """Every operation refuses an invalid key with MemoryKeyError, and nothing is stored."""
    for key in INVALID_KEYS:
        await _raises(MemoryKeyError, store.write(key, "d", "c"), f"write {key!r}")
        await _raises(MemoryKeyError, store.write(key, "d", "c", overwrite=True), f"overwrite {key!r}")
        await _raises(MemoryKeyError, store.read(key), f"read {key!r}")
        await _raises(MemoryKeyError, store.delete(key), f"delete {key!r}")
    _equal(await store.list(), [], "list after refused writes")


async def check_every_key_character_accepted(store: Store) -> None:
    """Keys using the whole allowed set, and the longest allowed key, round-trip."""
    keys = ["AZaz09._=-x", "a.b.c", "=", "-", "_", "x" * 200]
    for key in keys:
        await store.write(key, "d", key)
    _equal([item.key for item in await store.list()], sorted(keys), "keys")
    for key in keys:
        _equal((await store.read(key)).content, key, f"content of {key!r}")


async def check_frontmatter_round_trips(store: Store) -> None:
    """Bodies with `---` lines, YAML-significant descriptions, and empty or odd content round-trip."""
    cases = {
        "dashes": ("d", "---\nnot: a header\n---\n\n---"),
        "empty": ("nothing here", ""),
        "leading-newline": ("d", "\n\nstarts blank"),
        "crlf": ("d", "windows\r\nline\r\n"),
        "unicode": ("d", "caf\u00e9 \U0001f600 \u0430"),
        "yaml1": ("key: value # not a comment", "c"),
        "yaml2": ("- looks like a list", "c"),
        "yaml3": ("'quoted' and \"double\"", "c"),
        "yaml4": ("true", "c"),
        "yaml5": ("null", "c"),
        "yaml6": ("{a: 1}", "c"),
        "yaml7": ("---", "c"),
        "yaml8": ("@at &anchor *alias !tag %directive", "c"),
        "yaml9": ("12:30", "c"),
    }
    for key, (description, content) in cases.items():
        await store.write(key, description, content)
    for key, (description, content) in cases.items():
        entry = await store.read(key)
        _equal((entry.description, entry.content), (description, content), f"entry {key!r}")
    listed = {item.key: item.description for item in await store.list()}
    _equal(listed, {key: description for key, (description, _) in cases.items()}, "listed descriptions")


async def check_entry_limit(store: Store) -> None:
    """Creates stop at MAX_ENTRIES; overwrites still work; deleting one makes room again."""
    for n in range(MAX_ENTRIES):
        await store.write(f"k{n}", "d", "")
    raised = await _raises(MemoryFullError, store.write("one-more", "d", ""), "create past the limit")
    _equal(
        str(raised),
        f"memory is full: {MAX_ENTRIES} entries, limit is {MAX_ENTRIES}; delete an entry before creating another",
        "message",
    )
    await store.read("k0")
    await store.write("k0", "replaced", "", overwrite=True)
    _equal(await store.delete("k1"), True, "delete")
    await store.write("one-more", "d", "")
    _equal(len(await store.list()), MAX_ENTRIES, "entries")


CONTRACT_CHECKS: dict[str, ContractCheck] = {
    "empty_store": check_empty_store,
    "create_then_read": check_create_then_read,
    "create_refuses_existing": check_create_refuses_existing,
    "overwrite_replaces": check_overwrite_replaces,
    "overwrite_of_missing_key_creates": check_overwrite_of_missing_key_creates,
    "delete": check_delete,
    "list_sorted_with_descriptions": check_list_sorted_with_descriptions,
    "description_collapsed_to_one_line": check_description_collapsed_to_one_line,
    "content_size_limit": check_content_size_limit,
    "invalid_keys_refused_everywhere": check_invalid_keys_refused_everywhere,
    "every_key_character_accepted": check_every_key_character_accepted,
    "frontmatter_round_trips": check_frontmatter_round_trips,
    "entry_limit": check_entry_limit,
}
"""The backend contract, by name; every check takes a fresh empty store."""
