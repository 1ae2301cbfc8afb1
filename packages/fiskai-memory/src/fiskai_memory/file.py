"""The file backend: one Markdown file with YAML frontmatter per entry, in one flat directory.

Every operation works relative to a descriptor of the store directory, and opens entries with
`O_NOFOLLOW`, so a symlink planted in the directory is never followed: it is not read, not listed, and
not written through. Creates are race-safe across processes: the value is staged in a temp file and
hard-linked into place, and the link fails if the name exists. The entry limit holds across processes:
every write holds an exclusive `flock` on the store directory itself from counting the entries to linking
the new one (without it two processes could each see room for one more and both link theirs, leaving
1,025 entries); reads and deletes never take it. Overwrites rename the staged file over the target, so a
reader sees the old value or the new one, never a mix.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import anyio.to_thread

from .errors import MemoryConfigError, MemoryExistsError, MemoryIOError, MemoryKeyError, MemoryNotFoundError
from .frontmatter import Parsed, decode, encode
from .keys import is_valid_key, validate_key
from .store import Entry, Item, check_capacity, validate_write

__all__ = ["FileMemoryStore", "default_memory_directory", "open_file_store"]

_SUFFIX = ".md"
_TEMP_PREFIX = ".memtmp-"  # starts with a dot, so never a valid key: temp files are invisible to listings
_HEADER_PREFIX_BYTES = 16384  # enough for any header this package writes; listings read no further
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted under an entry's name must not hang; it is refused after fstat.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_STAGE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def default_memory_directory(identity: str) -> Path:
    """Where an identity's memory lives by default.

    `$XDG_STATE_HOME/fiskai/memory/<identity>`, or `~/.local/state/fiskai/memory/<identity>` when
    `XDG_STATE_HOME` is unset or not absolute (the XDG spec says to ignore a relative value).

    Raises:
        MemoryConfigError: The identity is not usable as a directory name (it must be a valid key).
    """
    _check_identity(identity)
    state = os.environ.get("XDG_STATE_HOME", "")
    base = Path(state) if state and Path(state).is_absolute() else Path.home() / ".local" / "state"
    return base / "fiskai" / "memory" / identity


def open_file_store(
    identity: str, *, directory: str | os.PathLike[str] | None = None, store_dir: str | os.PathLike[str] | None = None
) -> FileMemoryStore:
    """A file store for an agent identity, resolving the configured directory.

    Args:
        identity: The agent identity, by default the application binary's base name; two agents with the
            same identity (or the same `directory`) share one memory.
        directory: The configured `options.directory`; `~` is expanded. A relative path is taken under
            `store_dir` when given, else under the current directory.
        store_dir: The base for a relative `directory`.

    Returns:
        The store; nothing is created on disk until the first write.

    Raises:
        MemoryConfigError: No directory is configured and the identity is not a valid key.
    """
    if directory is None:
        return FileMemoryStore(default_memory_directory(identity))
    path = Path(directory).expanduser()
    if not path.is_absolute() and store_dir is not None:
        path = Path(store_dir).expanduser() / path
    return FileMemoryStore(path)


class FileMemoryStore:
    """A memory `Store` kept as `<directory>/<key>.md` files.

    The directory is created (mode 0700) on the first write. Blocking file work runs in a worker thread,
    so the store is safe to await from the agent's event loop.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        """Use `directory` as it is (no identity or XDG resolution; see `open_file_store`)."""
        self._directory = Path(directory)

    @property
    def directory(self) -> Path:
        """The store directory."""
        return self._directory

    async def list(self) -> list[Item]:
        return await anyio.to_thread.run_sync(self._list)

    async def read(self, key: str) -> Entry:
        return await anyio.to_thread.run_sync(self._read, key)

    async def write(self, key: str, description: str, content: str, *, overwrite: bool = False) -> None:
        await anyio.to_thread.run_sync(partial(self._write, key, description, content, overwrite=overwrite))

    async def delete(self, key: str) -> bool:
        return await anyio.to_thread.run_sync(self._delete, key)

    # The synchronous implementations below run in a worker thread.

    def _list(self) -> list[Item]:
        dir_fd = self._open_dir(create=False)
        if dir_fd is None:
            return []
        try:
            items: list[Item] = []
            for name in self._entry_names(dir_fd):
                try:
                    data, info = self._read_file(dir_fd, name, limit=_HEADER_PREFIX_BYTES)
                except (MemoryIOError, MemoryNotFoundError):
                    continue  # gone, a symlink swapped in, or unreadable: a listing skips it
                parsed = decode(data.decode("utf-8", errors="replace"))
                created, updated = _times(parsed, info)
                items.append(
                    Item(key=name[: -len(_SUFFIX)], description=parsed.description, created=created, updated=updated)
                )
            return sorted(items, key=lambda item: item.key)
        finally:
            os.close(dir_fd)

    def _read(self, key: str) -> Entry:
        validate_key(key)
        dir_fd = self._open_dir(create=False)
        if dir_fd is None:
            raise MemoryNotFoundError(key)
        try:
            data, info = self._read_file(dir_fd, key + _SUFFIX, key=key)
        finally:
            os.close(dir_fd)
        parsed = decode(data.decode("utf-8", errors="replace"))
        created, updated = _times(parsed, info)
        return Entry(key=key, description=parsed.description, content=parsed.body, created=created, updated=updated)

    def _write(self, key: str, description: str, content: str, *, overwrite: bool) -> None:
        description = validate_write(key, description, content)
        name = key + _SUFFIX
        dir_fd = self._open_dir(create=True)
        assert dir_fd is not None  # create=True either returns a descriptor or raises
        try:
            try:
                fcntl.flock(dir_fd, fcntl.LOCK_EX)
            except OSError as err:
                raise MemoryIOError(f'locking memory directory "{self._directory}": {err.strerror}') from err
            self._write_locked(dir_fd, key, name, description, content, overwrite=overwrite)
        finally:
            os.close(dir_fd)  # also releases the lock

    def _write_locked(
        self, dir_fd: int, key: str, name: str, description: str, content: str, *, overwrite: bool
    ) -> None:
        existing = self._lstat(dir_fd, name)
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise MemoryIOError(f'memory file "{self._directory / name}" is not a regular file')
        if existing is not None and not overwrite:
            raise MemoryExistsError(key)  # the link below is the real guard; this only saves the staging
        now = datetime.now(UTC)
        created = now
        if existing is None:
            check_capacity(len(self._entry_names(dir_fd)))
        else:
            created = self._created_of(dir_fd, name) or now
        value = encode(description, content, created=created, updated=now).encode("utf-8")
        staged = self._stage(dir_fd, value)
        try:
            if overwrite:
                os.rename(staged, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            else:
                try:
                    os.link(staged, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
                except FileExistsError:
                    raise MemoryExistsError(key) from None
            os.fsync(dir_fd)  # make the new name durable, not just the bytes
        except OSError as err:
            raise MemoryIOError(f'writing memory file "{self._directory / name}": {err.strerror}') from err
        finally:
            try:
                os.unlink(staged, dir_fd=dir_fd)
            except FileNotFoundError:
                pass  # renamed into place

    def _delete(self, key: str) -> bool:
        validate_key(key)
        dir_fd = self._open_dir(create=False)
        if dir_fd is None:
            return False
        name = key + _SUFFIX
        try:
            # unlink never follows a symlink: a planted link is removed, its target is untouched.
            os.unlink(name, dir_fd=dir_fd)
            os.fsync(dir_fd)
        except FileNotFoundError:
            return False
        except OSError as err:
            raise MemoryIOError(f'deleting memory file "{self._directory / name}": {err.strerror}') from err
        finally:
            os.close(dir_fd)
        return True

    def _open_dir(self, *, create: bool) -> int | None:
        try:
            if create:
                self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            return os.open(self._directory, _DIR_FLAGS)
        except FileNotFoundError:
            if create:
                raise MemoryIOError(f'memory directory "{self._directory}" could not be created') from None
            return None
        except OSError as err:
            raise MemoryIOError(f'opening memory directory "{self._directory}": {err.strerror or err}') from err

    def _entry_names(self, dir_fd: int) -> list[str]:
        # Regular files named `<valid key>.md` only: foreign names, temp files and symlinks are skipped,
        # which is what keeps a listing (and the entry count) inside the store.
        names: list[str] = []
        with os.scandir(dir_fd) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(_SUFFIX) or not is_valid_key(name[: -len(_SUFFIX)]):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        names.append(name)
                except OSError:
                    continue
        return names

    def _read_file(
        self, dir_fd: int, name: str, *, key: str | None = None, limit: int | None = None
    ) -> tuple[bytes, os.stat_result]:
        path = self._directory / name
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            raise MemoryNotFoundError(key or name) from None
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise MemoryIOError(f'memory file "{path}" is not a regular file') from err
            raise MemoryIOError(f'reading memory file "{path}": {err.strerror}') from err
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise MemoryIOError(f'memory file "{path}" is not a regular file')
            chunks: list[bytes] = []
            remaining = limit
            while remaining is None or remaining > 0:
                chunk = os.read(fd, 1 << 16 if remaining is None else min(remaining, 1 << 16))
                if not chunk:
                    break
                chunks.append(chunk)
                if remaining is not None:
                    remaining -= len(chunk)
            return b"".join(chunks), info
        except OSError as err:
            raise MemoryIOError(f'reading memory file "{path}": {err.strerror}') from err
        finally:
            os.close(fd)

    def _lstat(self, dir_fd: int, name: str) -> os.stat_result | None:
        try:
            return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise MemoryIOError(f'checking memory file "{self._directory / name}": {err.strerror}') from err

    def _created_of(self, dir_fd: int, name: str) -> datetime | None:
        # Best effort: an overwrite keeps the first write's time when the old header says it.
        try:
            data, _ = self._read_file(dir_fd, name, limit=_HEADER_PREFIX_BYTES)
        except (MemoryIOError, MemoryNotFoundError):
            return None
        return decode(data.decode("utf-8", errors="replace")).created

    def _stage(self, dir_fd: int, value: bytes) -> str:
        name = _TEMP_PREFIX + secrets.token_hex(8)
        try:
            fd = os.open(name, _STAGE_FLAGS, 0o600, dir_fd=dir_fd)
        except OSError as err:
            raise MemoryIOError(f'staging a memory file in "{self._directory}": {err.strerror}') from err
        try:
            view = memoryview(value)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)  # the bytes are on disk before the name points at them
        except OSError as err:
            os.close(fd)
            os.unlink(name, dir_fd=dir_fd)
            raise MemoryIOError(f'staging a memory file in "{self._directory}": {err.strerror}') from err
        os.close(fd)
        return name


def _times(parsed: Parsed, info: os.stat_result) -> tuple[datetime, datetime]:
    # A hand-written file has no timestamps in its header: its modification time stands in for both.
    modified = datetime.fromtimestamp(info.st_mtime, UTC)
    return parsed.created or parsed.updated or modified, parsed.updated or modified


def _check_identity(identity: str) -> None:
    try:
        validate_key(identity)
    except MemoryKeyError as err:
        raise MemoryConfigError(
            f'the agent identity "{identity}" cannot name a memory directory ({err}); '
            "set the memory directory option instead"
        ) from err
