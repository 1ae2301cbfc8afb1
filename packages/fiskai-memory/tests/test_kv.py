"""The NATS KV backend against a real nats-server: the shared contract plus its own guard rules."""

from __future__ import annotations

import socket
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
import nats
import pytest
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig

from fiskai_memory import MemoryNotFoundError, build_memory_index
from fiskai_memory.errors import MemoryConfigError, MemoryExistsError, MemoryIOError, MemoryStaleError
from fiskai_memory.kv import connect_kv_store, default_bucket_name, open_kv_store
from fiskai_memory.store import MAX_ENTRY_BYTES
from fiskai_memory.testing import CONTRACT_CHECKS, ContractCheck

pytestmark = [pytest.mark.anyio, pytest.mark.nats]


@asynccontextmanager
async def jetstream(url: str) -> AsyncGenerator[JetStreamContext]:
    connection = await nats.connect(url)  # pyright: ignore[reportUnknownMemberType]
    try:
        yield connection.jetstream()  # pyright: ignore[reportUnknownMemberType]
    finally:
        await connection.close()


async def add_bucket(
    js: JetStreamContext, name: str, *, ttl: float | None = None, max_value_size: int | None = None
) -> None:
    config = KeyValueConfig(bucket=name, history=1, ttl=ttl, max_value_size=max_value_size)
    await js.create_key_value(config)  # pyright: ignore[reportUnknownMemberType]


@pytest.mark.parametrize("check", list(CONTRACT_CHECKS.values()), ids=list(CONTRACT_CHECKS))
async def test_kv_store_meets_the_contract(check: ContractCheck, nats_server: str) -> None:
    async with connect_kv_store(nats_server, identity="contract") as store:
        await check(store)


async def test_default_bucket_is_per_identity_and_created_on_first_use(nats_server: str) -> None:
    async with jetstream(nats_server) as js:
        one = await open_kv_store(js, identity="agent.one")
        two = await open_kv_store(js, identity="agent-two")
        assert (one.bucket, one.prefix) == ("fiskai-memory-agent_one", "")
        assert two.bucket == default_bucket_name("agent-two") == "fiskai-memory-agent-two"
        await one.write("k", "from one", "1")
        assert await two.list() == []
        again = await open_kv_store(js, identity="agent.one")
        assert (await again.read("k")).content == "1"


async def test_configured_bucket_must_exist(nats_server: str) -> None:
    async with jetstream(nats_server) as js:
        with pytest.raises(MemoryConfigError) as raised:
            await open_kv_store(js, identity="a", bucket="missing")
    assert str(raised.value) == (
        'jetstream memory: KV bucket "missing" does not exist; create it first, e.g. '
        "`nats kv add missing --history=1 --max-value-size=69600`"
    )


async def test_bucket_with_a_ttl_or_small_values_is_refused(nats_server: str) -> None:
    async with jetstream(nats_server) as js:
        await add_bucket(js, "ttl", ttl=3600)
        await add_bucket(js, "small", max_value_size=MAX_ENTRY_BYTES - 1)
        await add_bucket(js, "exact", max_value_size=MAX_ENTRY_BYTES)
        await add_bucket(js, "unlimited")
        with pytest.raises(MemoryConfigError, match="TTL"):
            await open_kv_store(js, identity="a", bucket="ttl")
        with pytest.raises(MemoryConfigError, match="69599"):
            await open_kv_store(js, identity="a", bucket="small")
        exact = await open_kv_store(js, identity="a", bucket="exact")
        await exact.write("big", "d", "x" * 65536)
        assert len((await exact.read("big")).content) == 65536
        await open_kv_store(js, identity="a", bucket="unlimited")


async def test_prefixes_isolate_identities_share_explicitly_or_go_flat(nats_server: str) -> None:
    async with jetstream(nats_server) as js:
        await add_bucket(js, "shared")
        alpha = await open_kv_store(js, identity="alpha", bucket="shared")
        beta = await open_kv_store(js, identity="beta", bucket="shared")
        team1 = await open_kv_store(js, identity="alpha", bucket="shared", prefix="team")
        team2 = await open_kv_store(js, identity="beta", bucket="shared", prefix="team")
        flat = await open_kv_store(js, identity="alpha", bucket="shared", prefix="")
        await alpha.write("notes", "alpha's", "a")
        await beta.write("notes", "beta's", "b")
        await team1.write("plan", "the team's", "t")
        assert [(i.key, i.description) for i in await alpha.list()] == [("notes", "alpha's")]
        assert [(i.key, i.description) for i in await beta.list()] == [("notes", "beta's")]
        assert (await team2.read("plan")).content == "t"
        assert [i.key for i in await flat.list()] == ["alpha.notes", "beta.notes", "team.plan"]
        assert (alpha.prefix, flat.prefix) == ("alpha", "")


async def test_invalid_prefix_or_identity_is_a_config_error(nats_server: str) -> None:
    async with jetstream(nats_server) as js:
        await add_bucket(js, "b")
        with pytest.raises(MemoryConfigError, match=r'options\.prefix "a/b" is invalid'):
            await open_kv_store(js, identity="ok", bucket="b", prefix="a/b")
        with pytest.raises(MemoryConfigError, match='identity "bad id" cannot be used as a key prefix'):
            await open_kv_store(js, identity="bad id", bucket="b")
        flat = await open_kv_store(js, identity="bad id", bucket="b", prefix="")
        assert flat.prefix == ""


async def test_overwrite_needs_a_read_from_this_run(nats_server: str) -> None:
    async with connect_kv_store(nats_server, identity="guard") as writer:
        await writer.write("k", "d", "v1")
    async with connect_kv_store(nats_server, identity="guard") as store:
        with pytest.raises(MemoryStaleError) as raised:
            await store.write("k", "d", "v2", overwrite=True)
        assert "read it first with memory_read" in str(raised.value)
        await store.list()  # a listing grants no authority
        assert (await build_memory_index(store)) is not None  # nor does the index
        with pytest.raises(MemoryStaleError):
            await store.write("k", "d", "v2", overwrite=True)
        await store.read("k")
        await store.write("k", "d", "v2", overwrite=True)
        await store.write("k", "d", "v3", overwrite=True)  # its own write keeps the authority
        assert (await store.read("k")).content == "v3"


async def test_own_create_grants_overwrite_but_delete_and_recreate_elsewhere_does_not(nats_server: str) -> None:
    async with connect_kv_store(nats_server, identity="guard") as store:
        await store.write("k", "d", "mine")
        await store.write("k", "d", "mine again", overwrite=True)
        assert await store.delete("k") is True
        async with connect_kv_store(nats_server, identity="guard") as other:
            await other.write("k", "d", "theirs")
        with pytest.raises(MemoryStaleError):
            await store.write("k", "d", "blind", overwrite=True)
        assert (await store.read("k")).content == "theirs"


async def test_overwrite_after_a_concurrent_change_is_stale_until_read_again(nats_server: str) -> None:
    async with (
        connect_kv_store(nats_server, identity="race") as one,
        connect_kv_store(nats_server, identity="race") as two,
    ):
        await one.write("k", "d", "v1")
        await two.read("k")
        await two.write("k", "d", "two was here", overwrite=True)
        with pytest.raises(MemoryStaleError):
            await one.write("k", "d", "one's stale view", overwrite=True)
        with pytest.raises(MemoryStaleError):  # the stale revision was forgotten, not retried
            await one.write("k", "d", "one's stale view", overwrite=True)
        assert (await one.read("k")).content == "two was here"
        await one.write("k", "d", "one after reading", overwrite=True)
        assert (await two.read("k")).content == "one after reading"


async def test_guard_off_overwrites_blindly(nats_server: str) -> None:
    async with connect_kv_store(nats_server, identity="blind") as first:
        await first.write("k", "d", "v1")
        created = (await first.read("k")).created
    async with connect_kv_store(nats_server, identity="blind", require_read_before_update=False) as store:
        await store.write("k", "d2", "v2", overwrite=True)
        entry = await store.read("k")
        assert (entry.description, entry.content, entry.created) == ("d2", "v2", created)
        with pytest.raises(MemoryExistsError):
            await store.write("k", "d", "create", overwrite=False)


async def test_create_over_a_deleted_key_and_a_missing_read(nats_server: str) -> None:
    async with connect_kv_store(nats_server, identity="tomb") as store:
        await store.write("k", "d", "v1")
        await store.delete("k")
        with pytest.raises(MemoryNotFoundError):
            await store.read("k")
        await store.write("k", "d", "v2")  # a tombstone does not block a create
        assert (await store.read("k")).content == "v2"


async def test_unreachable_server_is_one_clear_error_without_log_noise(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with anyio.fail_after(10), pytest.raises(MemoryIOError) as raised:
        async with connect_kv_store(f"nats://127.0.0.1:{port}", identity="x"):
            pass
    assert str(raised.value).startswith(f"jetstream memory: connecting to nats://127.0.0.1:{port}: ")
    assert len(str(raised.value)) > len(f"jetstream memory: connecting to nats://127.0.0.1:{port}: ")  # the reason
    assert [record.getMessage() for record in caplog.records] == []


async def test_a_listing_right_after_a_write_always_includes_it(nats_server: str) -> None:
    # nats-py's "snapshot done" marker can overtake an entry already in flight (seen about once in 300
    # listings); the store must not lose that entry.
    async with connect_kv_store(nats_server, identity="fresh") as store:
        for n in range(200):
            await store.write(f"k{n}", "d", "v")
            assert [item.key for item in await store.list()] == [f"k{n}"]
            assert await store.delete(f"k{n}") is True
        assert await store.list() == []
