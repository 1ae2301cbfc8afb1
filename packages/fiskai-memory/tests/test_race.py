"""Concurrent creates of one key: exactly one wins and every other gets "exists"."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
import nats
import pytest

from fiskai_memory import FileMemoryStore, Store
from fiskai_memory.errors import MemoryExistsError
from fiskai_memory.frontmatter import encode
from fiskai_memory.kv import connect_kv_store
from fiskai_memory.options import default_bucket_name
from fiskai_memory.store import MAX_ENTRIES

FILE_CHILD = """
import sys, anyio
from fiskai_memory import FileMemoryStore
from fiskai_memory.errors import MemoryExistsError
store = FileMemoryStore(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
try:
    anyio.run(store.write, sys.argv[2], "d", sys.argv[3])
except MemoryExistsError:
    print("exists", flush=True)
else:
    print("won", flush=True)
"""

KV_CHILD = """
import sys, anyio
from fiskai_memory.errors import MemoryExistsError
from fiskai_memory.kv import connect_kv_store

async def main() -> str:
    async with connect_kv_store(sys.argv[1], identity="race") as store:
        print("ready", flush=True)
        await anyio.to_thread.run_sync(sys.stdin.readline)
        try:
            await store.write(sys.argv[2], "d", sys.argv[3])
        except MemoryExistsError:
            return "exists"
        return "won"

print(anyio.run(main), flush=True)
"""


def race(child: str, target: str, key: str) -> dict[str, str]:
    """Start two processes, let both get ready, release them together, return each one's outcome."""
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", child, target, key, name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    }
    try:
        for proc in procs.values():
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        return {name: proc.communicate(timeout=30)[0].strip() for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_two_processes_creating_one_file_key_exactly_one_wins(tmp_path: Path) -> None:
    for round_ in range(3):
        outcome = race(FILE_CHILD, str(tmp_path), f"key{round_}")
        assert sorted(outcome.values()) == ["exists", "won"]
        winner = next(name for name, result in outcome.items() if result == "won")
        content = anyio.run(FileMemoryStore(tmp_path).read, f"key{round_}")
        assert content.content == winner


@pytest.mark.nats
def test_two_processes_creating_one_kv_key_exactly_one_wins(nats_server: str) -> None:
    for round_ in range(2):
        outcome = race(KV_CHILD, nats_server, f"key{round_}")
        assert sorted(outcome.values()) == ["exists", "won"]
        winner = next(name for name, result in outcome.items() if result == "won")

        async def read(key: str = f"key{round_}") -> str:
            async with connect_kv_store(nats_server, identity="race") as store:
                return (await store.read(key)).content

        assert anyio.run(read) == winner


async def many_creates(store: Store, key: str, writers: int) -> list[str]:
    outcomes: list[str] = []

    async def create(n: int) -> None:
        try:
            await store.write(key, "d", f"writer {n}")
        except MemoryExistsError:
            outcomes.append("exists")
        else:
            outcomes.append(f"writer {n}")

    async with anyio.create_task_group() as group:
        for n in range(writers):
            group.start_soon(create, n)
    return outcomes


@pytest.mark.anyio
async def test_many_concurrent_creates_in_threads_one_wins_and_its_content_is_stored(tmp_path: Path) -> None:
    # The store object holds no state: twelve worker threads share only the directory, as processes would.
    for round_ in range(5):
        key = f"k{round_}"
        outcomes = await many_creates(FileMemoryStore(tmp_path), key, writers=12)
        winners = [outcome for outcome in outcomes if outcome != "exists"]
        assert len(winners) == 1
        assert outcomes.count("exists") == 11
        assert (await FileMemoryStore(tmp_path).read(key)).content == winners[0]
    assert names(tmp_path) == [f"k{n}.md" for n in range(5)]


def names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


CAP_CHILD = """
import sys, anyio
from fiskai_memory import FileMemoryStore
from fiskai_memory.errors import MemoryFullError
from fiskai_memory.kv import connect_kv_store

target, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])


async def create_all(store) -> int:
    full = 0
    for n in range(count):
        try:
            await store.write(f"{name}.{n}", "d", "x")
        except MemoryFullError:
            full += 1
    return full


async def main() -> int:
    if target.startswith("nats://"):
        async with connect_kv_store(target, identity="cap") as store:
            print("ready", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            return await create_all(store)
    print("ready", flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)
    return await create_all(FileMemoryStore(target))


print(anyio.run(main), flush=True)
"""
_SEEDED = MAX_ENTRIES - 40
_PER_CHILD = 40


def cap_race(target: str) -> int:
    """Release two processes together, each creating `_PER_CHILD` new keys; return how many were refused."""
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", CAP_CHILD, target, name, str(_PER_CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    }
    try:
        for proc in procs.values():
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        return sum(int(proc.communicate(timeout=120)[0]) for proc in procs.values())
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_two_processes_creating_file_keys_near_the_cap_never_pass_it(tmp_path: Path) -> None:
    """Steps:

    1. Fill the store to 40 entries below the cap.
    2. Release two processes together, each creating 40 new keys.
    3. The store holds exactly MAX_ENTRIES entries and the 40 refused creates got MemoryFullError.
    """
    store = FileMemoryStore(tmp_path)

    async def fill() -> None:
        for n in range(_SEEDED):
            await store.write(f"seed.{n}", "d", "x")

    anyio.run(fill)
    refused = cap_race(str(tmp_path))
    assert len(anyio.run(store.list)) == MAX_ENTRIES
    assert refused == 2 * _PER_CHILD - (MAX_ENTRIES - _SEEDED)


@pytest.mark.nats
def test_two_processes_creating_kv_keys_near_the_cap_never_leave_it_passed(nats_server: str) -> None:
    """Steps:

    1. Fill the KV store to 40 entries below the cap (plain puts of encoded entries, for speed).
    2. Release two processes together, each creating 40 new keys through the store.
    3. The store holds at most MAX_ENTRIES entries, and every create either stayed or was refused.
    """

    async def fill() -> None:
        async with connect_kv_store(nats_server, identity="cap") as store:
            await store.list()  # binds (creates) the per-identity bucket
        connection = await nats.connect(nats_server)  # pyright: ignore[reportUnknownMemberType]
        try:
            js = connection.jetstream()  # pyright: ignore[reportUnknownMemberType]
            kv = await js.key_value(default_bucket_name("cap"))
            value = encode("d", "x", created=datetime.now(UTC), updated=datetime.now(UTC)).encode()
            for n in range(_SEEDED):
                await kv.put(f"seed.{n}", value)
        finally:
            await connection.close()

    async def count() -> int:
        async with connect_kv_store(nats_server, identity="cap") as store:
            return len(await store.list())

    anyio.run(fill)
    refused = cap_race(nats_server)
    stored = anyio.run(count)
    assert stored <= MAX_ENTRIES
    assert refused >= 2 * _PER_CHILD - (MAX_ENTRIES - _SEEDED)
    assert stored == _SEEDED + 2 * _PER_CHILD - refused
