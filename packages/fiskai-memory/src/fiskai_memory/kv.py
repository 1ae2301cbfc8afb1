"""The NATS JetStream KV backend (extra `nats`): the only module that imports nats-py.

Values use the same frontmatter format as the file backend, so entries migrate unchanged. Creates use the
KV's create-if-absent (race-safe across processes), then count again and withdraw the new entry if another
process took the last slot at the same moment, so the entry limit holds across processes too. Overwrites are read-before-update by default: they
carry the revision this store last saw for the key (from a read, or from its own write) and the server
refuses them if the entry changed since, which becomes `MemoryStaleError` telling the model to read again.
A listing or the start-of-run index grants no such authority.
"""

from __future__ import annotations

try:
    import nats
    import nats.errors
    import nats.js.errors
    from nats.js import JetStreamContext
    from nats.js.kv import KeyValue
except ImportError as import_error:  # pragma: no cover - the base install has no nats-py
    raise ImportError("The NATS KV memory backend needs nats-py: install `fiskai-memory[nats]`.") from import_error

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import anyio

from .errors import (
    MemoryConfigError,
    MemoryExistsError,
    MemoryIOError,
    MemoryNotFoundError,
    MemoryStaleError,
)
from .frontmatter import decode, encode
from .keys import is_valid_key, validate_key
from .options import default_bucket_name, kv_prefix
from .store import MAX_ENTRIES, MAX_ENTRY_BYTES, Entry, Item, check_capacity, validate_write

__all__ = ["KvMemoryStore", "connect_kv_store", "default_bucket_name", "open_kv_store"]


async def open_kv_store(
    js: JetStreamContext,
    *,
    identity: str,
    bucket: str | None = None,
    prefix: str | None = None,
    require_read_before_update: bool = True,
    timeout_seconds: float = 10.0,
) -> KvMemoryStore:
    """Bind a memory store to a JetStream KV bucket.

    Args:
        js: A JetStream context on a connection the caller owns (and closes).
        identity: The agent identity.
        bucket: A bucket that must already exist (fiskai-reference 9.3). When `None`, the per-identity
            bucket `default_bucket_name(identity)` is used and created if missing (history 1, no TTL,
            values up to `MAX_ENTRY_BYTES`).
        prefix: The key prefix inside the bucket: `None` means the identity for a configured bucket and no
            prefix for the per-identity one; `""` is a flat keyspace; otherwise it must be a valid key.
        require_read_before_update: The read-before-update guard; off means overwrites are blind puts.
        timeout_seconds: Seconds allowed for binding and for each listing.

    Returns:
        The bound store.

    Raises:
        MemoryConfigError: The bucket is missing, expires values, takes values too small for an entry,
            or the prefix is invalid.
        MemoryIOError: The server could not be reached or refused the request.
    """
    resolved_prefix = kv_prefix(identity, bucket=bucket, prefix=prefix)
    name = bucket if bucket is not None else default_bucket_name(identity)
    try:
        with anyio.fail_after(timeout_seconds):
            kv = await _bind(js, name, create=bucket is None)
            await _check_bucket(kv, name)
    except TimeoutError as err:
        raise MemoryIOError(
            f'jetstream memory: binding KV bucket "{name}" timed out after {timeout_seconds:g}s'
        ) from err
    except nats.errors.Error as err:
        raise MemoryIOError(f'jetstream memory: binding KV bucket "{name}": {_describe(err)}') from err
    return KvMemoryStore(
        kv,
        js=js,
        bucket=name,
        prefix=resolved_prefix,
        require_read_before_update=require_read_before_update,
        timeout_seconds=timeout_seconds,
    )


@asynccontextmanager
async def connect_kv_store(
    servers: str | list[str],
    *,
    identity: str,
    bucket: str | None = None,
    prefix: str | None = None,
    require_read_before_update: bool = True,
    timeout_seconds: float = 10.0,
) -> AsyncGenerator[KvMemoryStore]:
    """Connect to NATS, bind a store as `open_kv_store` does, and close the connection on exit.

    Raises:
        MemoryConfigError: As `open_kv_store`.
        MemoryIOError: The servers could not be reached, or as `open_kv_store`.
    """
    failures: list[Exception] = []

    async def remember(error: Exception) -> None:
        # nats-py logs every failed attempt with a traceback by default; keep the reason for one clear error.
        failures.append(error)

    try:
        connection = await nats.connect(  # pyright: ignore[reportUnknownMemberType]
            servers,
            connect_timeout=timeout_seconds,
            allow_reconnect=False,
            max_reconnect_attempts=1,
            reconnect_time_wait=0.5,
            error_cb=remember,
        )
    except (nats.errors.Error, OSError) as err:
        reason = _describe(failures[-1] if failures else err)
        raise MemoryIOError(f"jetstream memory: connecting to {servers}: {reason}") from err
    try:
        yield await open_kv_store(
            connection.jetstream(timeout=timeout_seconds),  # pyright: ignore[reportUnknownMemberType]
            identity=identity,
            bucket=bucket,
            prefix=prefix,
            require_read_before_update=require_read_before_update,
            timeout_seconds=timeout_seconds,
        )
    finally:
        await connection.close()


class KvMemoryStore:
    """A memory `Store` in a JetStream KV bucket, one KV key per entry (`<prefix>.<key>`).

    The store remembers, for this run only, the revision it last read or wrote for each key, and an entry
    count (refreshed by every create, which counts again after storing and withdraws its entry when the
    store went over the limit, so the limit holds across processes). Build it with `open_kv_store` or `connect_kv_store`.
    """

    def __init__(
        self,
        kv: KeyValue,
        *,
        js: JetStreamContext,
        bucket: str,
        prefix: str,
        require_read_before_update: bool = True,
        timeout_seconds: float = 10.0,
    ) -> None:
        """Wrap a bound bucket; `open_kv_store` checks the bucket first, prefer it."""
        self._kv = kv
        self._js = js
        self._bucket = bucket
        self._prefix = prefix
        self._require_read = require_read_before_update
        self._timeout = timeout_seconds
        self._revisions: dict[str, int] = {}
        self._created: dict[str, datetime] = {}
        self._count: int | None = None

    @property
    def bucket(self) -> str:
        """The KV bucket name."""
        return self._bucket

    @property
    def prefix(self) -> str:
        """The key prefix inside the bucket (`""` for a flat keyspace)."""
        return self._prefix

    async def list(self) -> list[Item]:
        items: list[Item] = []
        for key, value in sorted((await self._scan(values=True)).items()):
            parsed = decode(value.decode("utf-8", errors="replace"))
            items.append(Item(key=key, description=parsed.description, created=parsed.created, updated=parsed.updated))
        return items

    async def read(self, key: str) -> Entry:
        validate_key(key)
        try:
            entry = await self._kv.get(self._storage_key(key))
        except nats.js.errors.KeyNotFoundError:
            raise MemoryNotFoundError(key) from None
        except nats.errors.Error as err:
            raise MemoryIOError(f'reading memory "{key}": {_describe(err)}') from err
        parsed = decode((entry.value or b"").decode("utf-8", errors="replace"))
        if entry.revision is not None:
            self._revisions[key] = entry.revision
        if parsed.created is not None:
            self._created[key] = parsed.created
        return Entry(
            key=key, description=parsed.description, content=parsed.body, created=parsed.created, updated=parsed.updated
        )

    async def write(self, key: str, description: str, content: str, *, overwrite: bool = False) -> None:
        description = validate_write(key, description, content)
        now = datetime.now(UTC)
        try:
            if not overwrite:
                await self._create(key, encode(description, content, created=now, updated=now))
            elif not self._require_read:
                await self._put(key, description, content, now)
            elif (revision := self._revisions.get(key)) is None:
                await self._create_unseen(key, encode(description, content, created=now, updated=now))
            else:
                created = self._created.get(key, now)
                value = encode(description, content, created=created, updated=now)
                try:
                    self._revisions[key] = await self._kv.update(
                        self._storage_key(key), value.encode("utf-8"), last=revision
                    )
                except nats.js.errors.KeyWrongLastSequenceError:
                    self._forget(key)
                    raise MemoryStaleError(key) from None
                self._created[key] = created
        except nats.errors.Error as err:
            raise MemoryIOError(f'writing memory "{key}": {_describe(err)}') from err

    async def delete(self, key: str) -> bool:
        validate_key(key)
        storage_key = self._storage_key(key)
        self._forget(key)
        try:
            # Get then delete: whether it existed is best effort, as a concurrent writer may act in between.
            try:
                await self._kv.get(storage_key)
            except nats.js.errors.KeyNotFoundError:
                return False
            await self._kv.delete(storage_key)
        except nats.errors.Error as err:
            raise MemoryIOError(f'deleting memory "{key}": {_describe(err)}') from err
        if self._count is not None:
            self._count = max(self._count - 1, 0)
        return True

    async def _create(self, key: str, value: str) -> None:
        check_capacity(await self._entry_count())
        try:
            # Create succeeds only when the key is absent (or a tombstone): the race-safe create guard.
            revision = await self._kv.create(self._storage_key(key), value.encode("utf-8"))
        except nats.js.errors.KeyWrongLastSequenceError:
            raise MemoryExistsError(key) from None
        await self._within_limit(key, revision)
        self._revisions[key] = revision
        self._created[key] = decode(value).created or datetime.now(UTC)

    async def _within_limit(self, key: str, revision: int) -> None:
        """Count again now that `key` is stored, and withdraw it if the store went over the limit.

        The count before a create is this process's; another one may take the last slot at the same
        moment. Each creator that finds the store over the limit withdraws its own entry (only if it is
        still the one it wrote), so the store never stays over it; in a tie both may withdraw and report
        full, which is the safe side. The bucket's message count bounds the entries from above and costs
        one request, so the listing (a consumer on the server) runs only when the store may be over.

        Raises:
            MemoryFullError: the store was over the limit with this entry; it has been withdrawn.
        """
        if (await self._kv.status()).stream_info.state.messages <= MAX_ENTRIES:
            if self._count is not None:
                self._count += 1
            return
        entries = len(await self._scan(values=False))
        if entries <= MAX_ENTRIES:
            return
        try:
            await self._kv.delete(self._storage_key(key), last=revision)
        except nats.js.errors.KeyWrongLastSequenceError:
            pass  # overwritten since: the entry is someone else's now, and theirs to keep
        self._count = entries - 1
        check_capacity(entries - 1)

    async def _create_unseen(self, key: str, value: str) -> None:
        # An overwrite with no revision from this run: replacing an unseen value is refused, but a key that
        # holds nothing may be created, so "overwrite" of a new key does not trap the model in a loop.
        try:
            await self._kv.get(self._storage_key(key))
        except nats.js.errors.KeyNotFoundError:
            try:
                await self._create(key, value)
            except MemoryExistsError:
                raise MemoryStaleError(key) from None
            return
        raise MemoryStaleError(key)

    async def _put(self, key: str, description: str, content: str, now: datetime) -> None:
        storage_key = self._storage_key(key)
        created = self._created.get(key)
        creating = False
        if created is None:
            try:
                existing = await self._kv.get(storage_key)
            except nats.js.errors.KeyNotFoundError:
                check_capacity(await self._entry_count())
                creating = True
            else:
                created = decode((existing.value or b"").decode("utf-8", errors="replace")).created
        created = created or now
        value = encode(description, content, created=created, updated=now)
        revision = await self._kv.put(storage_key, value.encode("utf-8"))
        if creating:
            await self._within_limit(key, revision)
        self._revisions[key] = revision
        self._created[key] = created

    async def _entry_count(self) -> int:
        if self._count is None:
            self._count = len(await self._scan(values=False))
        return self._count

    async def _scan(self, *, values: bool) -> dict[str, bytes]:
        # The snapshot ends at the first update with nothing pending behind it. nats-py's own "snapshot done"
        # marker is not used: it can arrive before an entry already in flight, and a listing then misses it.
        pattern = f"{self._prefix}.>" if self._prefix else ">"
        found: dict[str, bytes] = {}
        try:
            with anyio.fail_after(self._timeout):
                if not await self._any_stored(pattern):
                    return found
                watcher = await self._kv.watch(  # pyright: ignore[reportUnknownMemberType]
                    pattern, meta_only=not values
                )
                try:
                    await self._collect(watcher, pattern, found)
                finally:
                    await watcher.stop()
        except TimeoutError as err:
            raise MemoryIOError(f"listing memory: no snapshot within {self._timeout:g}s") from err
        except nats.errors.Error as err:
            raise MemoryIOError(f"listing memory: {_describe(err)}") from err
        self._count = len(found)
        return found

    async def _collect(self, watcher: KeyValue.KeyWatcher, pattern: str, found: dict[str, bytes]) -> None:
        seen_any = False
        while True:
            update = await watcher.updates(timeout=self._timeout)
            if update is None:
                # nats-py's marker: trust it only when the bucket really holds nothing under the pattern now.
                if not seen_any and not await self._any_stored(pattern):
                    return
                continue
            if not isinstance(update, KeyValue.Entry):
                raise MemoryIOError("listing memory: watch closed before the snapshot completed")
            seen_any = True
            key = update.key[len(self._prefix) + 1 :] if self._prefix else update.key
            if is_valid_key(key):  # foreign names in a shared bucket are skipped
                if update.operation is None:
                    found[key] = update.value or b""
                else:
                    found.pop(key, None)  # a delete or purge marker
            if update.delta == 0:
                return

    async def _any_stored(self, pattern: str) -> bool:
        # Any message under the pattern, a delete marker included, means the watch will deliver something.
        try:
            await self._js.get_msg(f"KV_{self._bucket}", seq=1, subject=f"$KV.{self._bucket}.{pattern}", next=True)
        except nats.js.errors.NotFoundError:
            return False
        return True

    def _storage_key(self, key: str) -> str:
        return f"{self._prefix}.{key}" if self._prefix else key

    def _forget(self, key: str) -> None:
        self._revisions.pop(key, None)
        self._created.pop(key, None)


async def _bind(js: JetStreamContext, name: str, *, create: bool) -> KeyValue:
    try:
        return await js.key_value(name)
    except nats.js.errors.BucketNotFoundError:
        if not create:
            raise MemoryConfigError(
                f'jetstream memory: KV bucket "{name}" does not exist; create it first, e.g. '
                f"`nats kv add {name} --history=1 --max-value-size={MAX_ENTRY_BYTES}`"
            ) from None
    try:
        return await js.create_key_value(  # pyright: ignore[reportUnknownMemberType]
            bucket=name, history=1, max_value_size=MAX_ENTRY_BYTES, description="fiskai agent memory"
        )
    except nats.js.errors.BadRequestError:
        # Another process created it first (with a config that differs in some detail): use theirs.
        return await js.key_value(name)


async def _check_bucket(kv: KeyValue, name: str) -> None:
    config = (await kv.status()).stream_info.config
    if config.max_age:
        raise MemoryConfigError(
            f'jetstream memory: KV bucket "{name}" has a TTL ({config.max_age:g}s); memory must not expire, '
            "use a bucket without one"
        )
    if config.max_msg_size is not None and 0 < config.max_msg_size < MAX_ENTRY_BYTES:
        raise MemoryConfigError(
            f'jetstream memory: KV bucket "{name}" takes values up to {config.max_msg_size} bytes; memory needs '
            f"{MAX_ENTRY_BYTES} (recreate it with --max-value-size={MAX_ENTRY_BYTES})"
        )


def _describe(err: BaseException) -> str:
    return str(err) or type(err).__name__
