"""Reading and writing a file only its owner could have written: the approval rules file's I/O.

A rules file approves commands, so whoever can write it can run them. It is trusted only when nobody
else could have put its content there. The folder is opened first and checked on its descriptor, the
file is then opened relative to that descriptor with `O_NOFOLLOW | O_NONBLOCK` and checked with
`fstat` on what was opened (no check-then-open race). Refused, each with one line naming the path,
the problem and the fix:

* a symbolic link at the file's name (never followed, whatever it points to);
* anything but a regular file: a FIFO (which would hang a blocking open), a device (`/dev/zero`
  never ends), a directory;
* a file or folder owned by another user than the effective one (root's own files are fine for root);
* a file or folder writable by group or others (a writable folder lets anyone swap the file);
* a file over `MAX_FILE_BYTES`.

Writes go to a fresh temp file in the checked folder (created exclusive, never through a link, 0600),
are synced, and renamed over the name: a link planted at the name is replaced, not written through.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from ._errors import RuleError

__all__ = ["MAX_FILE_BYTES", "check_owned", "read_owned", "write_owned"]

MAX_FILE_BYTES = 1024 * 1024
"""1 MiB. A rule takes 150-250 bytes in the file, so this is 4,000 or more rules: more than anyone can
audit, and still read in under a second (a larger file is not a rules file fiskai wrote)."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_KIND = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
_REMOVE = "remove it and add the rules again with fiskai approvals add"


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KiB"


def check_owned(info: os.stat_result, path: Path, *, folder: bool, uid: int) -> None:
    """Refuse `info` (an fstat of `path`) unless it is a folder or regular file only `uid` can write.

    Raises:
        RuleError: One line naming `path`, what is wrong and the fix.
    """
    what = "approval rules folder" if folder else "approval rules file"
    expected = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)
    if not expected:
        kind = _KIND.get(stat.S_IFMT(info.st_mode), "not a regular file")
        if folder:
            raise RuleError(f'{what} "{path}" is {kind}, not a directory; remove it')
        raise RuleError(f'{what} "{path}" is {kind}, not a regular file; {_REMOVE}')
    # What someone else could have done to the rules, and the fix.
    swap = "swap the rules file in it" if folder else "have written its rules"
    if info.st_uid != uid:
        fix = (
            "give fiskai a state home of your own (XDG_STATE_HOME)"
            if folder
            else "check its rules, then remove it and add them again with fiskai approvals add"
        )
        raise RuleError(
            f'{what} "{path}" belongs to uid {info.st_uid}, not to you (uid {uid}), so someone else could {swap}; {fix}'
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        who = "group and others" if mode & 0o022 == 0o022 else ("others" if mode & 0o002 else "its group")
        chmod = "700" if folder else "600"
        raise RuleError(
            f'{what} "{path}" is writable by {who} (mode {mode:04o}), so someone else could {swap}; check the rules, '
            f'then chmod {chmod} "{path}"'
        )


def _open_folder(folder: Path) -> int:
    fd = os.open(folder, _DIR_FLAGS)
    try:
        check_owned(os.fstat(fd), folder, folder=True, uid=os.geteuid())
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_owned(path: Path) -> bytes | None:
    """The bytes of `path`, or None when it (or its folder) does not exist.

    Raises:
        RuleError: The file or its folder is refused (see the module docs) or cannot be read.
    """
    try:
        folder = _open_folder(path.parent)
    except (FileNotFoundError, NotADirectoryError):
        # A missing folder means no rules; a path through a file also holds none (writing will say why).
        return None
    except OSError as err:
        raise RuleError(f'approval rules folder "{path.parent}" cannot be opened: {err.strerror or err}') from err
    try:
        try:
            fd = os.open(path.name, _READ_FLAGS, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: O_NOFOLLOW on a link, on the BSDs
                raise RuleError(
                    f'approval rules file "{path}" is a symbolic link; fiskai never follows one there, whatever it '
                    f"points to: {_REMOVE}"
                ) from err
            raise RuleError(f'approval rules file "{path}" cannot be read: {err.strerror or err}') from err
        try:
            info = os.fstat(fd)
            check_owned(info, path, folder=False, uid=os.geteuid())
            if info.st_size > MAX_FILE_BYTES:
                raise RuleError(_too_big(path, info.st_size))
            # Read up to one byte past the cap: a file that grew since fstat is refused too.
            chunks: list[bytes] = []
            total = 0
            while total <= MAX_FILE_BYTES:
                chunk = os.read(fd, MAX_FILE_BYTES + 1 - total)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise RuleError(_too_big(path, total))
            return b"".join(chunks)
        except OSError as err:
            raise RuleError(f'approval rules file "{path}" cannot be read: {err.strerror or err}') from err
        finally:
            os.close(fd)
    finally:
        os.close(folder)


def _too_big(path: Path, size: int) -> str:
    return (
        f'approval rules file "{path}" is {_size(size)}, over the {_size(MAX_FILE_BYTES)} a rules file may hold '
        f"(thousands of rules); fiskai did not write it: {_REMOVE}"
    )


def write_owned(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically, 0600, in a folder made 0700 when missing.

    Raises:
        RuleError: The folder is refused (see the module docs), or the file cannot be written.
    """
    if len(data) > MAX_FILE_BYTES:
        raise RuleError(
            f'approval rules file "{path}" would be {_size(len(data))}, over the {_size(MAX_FILE_BYTES)} a rules file '
            "may hold; remove rules no longer needed (fiskai approvals rm)"
        )
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = _open_folder(path.parent)
    except OSError as err:
        raise RuleError(f'approval rules folder "{path.parent}" cannot be written: {err.strerror or err}') from err
    temp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(temp, _TEMP_FLAGS, 0o600, dir_fd=folder)
        try:
            try:
                os.fchmod(fd, 0o600)  # whatever the umask
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except OSError:
                pass
            raise
        os.fsync(folder)
    except OSError as err:
        raise RuleError(f'approval rules file "{path}" cannot be written: {err.strerror or err}') from err
    finally:
        os.close(folder)
