"""Files on a disk that may fill up, vanish or refuse writes: every write is whole or
undone, and a refusal names the file and the disk.

- `write_atomic`: a whole file replaced at once (temporary file, fsync, rename); a
  failure leaves the old file as it was and no temporary file behind.
- `AppendFile`: an append-only file (the journal, the sensor log) written in whole
  lines. A failed write (a full disk) is cut back to the last whole line, and what could
  not be written waits, in order, for the next try; a file deleted under the service
  (its data directory removed) is noticed and written again from what it held.
- `disk_of`: which file system a path is on and how much room it has, for the operator.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

from board_ctl.errors import BoardCtlError

log = logging.getLogger(__name__)


class StorageError(BoardCtlError, OSError):
    """A file that cannot be written; the message names it and its disk."""


# ---------------------------------------------------------------- the disk


def _existing(path: Path) -> Path:
    """The path itself, or its nearest ancestor that exists."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _mount_point(path: Path) -> Path:
    device = path.stat().st_dev
    while path != path.parent:
        try:
            if path.parent.stat().st_dev != device:
                break
        except OSError:
            break
        path = path.parent
    return path


def _mount_source(mount: Path) -> tuple[str, str] | None:
    """(file system type, device) of a mount point, from /proc/self/mountinfo."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    found = None
    for line in lines:  # the last match is the mount on top
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) > 4 and len(tail) > 1:
            point = fields[4].replace("\\040", " ")
            if point == str(mount):
                found = (tail[0], tail[1])
    return found


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def disk_of(path: Path) -> str:
    """'the file system mounted at /var/lib (ext4 on /dev/mmcblk0p2): 0 B free of 31.2 GB'."""
    try:
        existing = _existing(path)
        mount = _mount_point(existing)
        stats = os.statvfs(existing)
    except OSError as exc:
        return f"its disk cannot be examined: {exc.strerror or exc}"
    source = _mount_source(mount)
    kind = f" ({source[0]} on {source[1]})" if source else ""
    free, total = stats.f_bavail * stats.f_frsize, stats.f_blocks * stats.f_frsize
    return f"the file system mounted at {mount}{kind}: {_size(free)} free of {_size(total)}"


def file_system_type(path: Path) -> str:
    """The type of the file system a path is on ("ext4", "tmpfs" ...), or "" unknown."""
    try:
        source = _mount_source(_mount_point(_existing(path)))
    except OSError:
        return ""
    return source[0] if source else ""


def describe(exc: OSError, what: str, path: Path) -> str:
    """One line for the operator: what could not be written, where, why, and the disk."""
    reason = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EFBIG):
        return f"cannot write {what} {path}: {reason} ({disk_of(path)})"
    return f"cannot write {what} {path}: {reason}"


# ---------------------------------------------------------------- whole files


def make_directory(path: Path) -> None:
    """mkdir -p, saying "Not a directory" when a file stands in the way."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path)) \
            from None


def fsync_directory(path: Path) -> None:
    """Make a new or renamed name in `path` durable (best effort: not every file system
    lets a directory be synced; the data itself is synced anyway)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomic(path: Path, text: str, what: str = "file") -> None:
    """Replace `path` with `text` all at once, or leave it untouched (StorageError)."""
    try:
        write_atomic_bytes(path, text.encode("utf-8"))
    except OSError as exc:
        raise StorageError(describe(exc, what, path)) from None


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """The same for bytes, raising the OSError itself; no temporary file is left."""
    make_directory(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # nothing half-written is left behind
        raise
    fsync_directory(path.parent)


# ---------------------------------------------------------------- append-only files


class AppendFile:
    """An append-only file of whole lines, written from one thread.

    `add` queues bytes; `flush` writes everything queued (and with `durable`, fsyncs it)
    and returns None, or the operator's message when the disk refused: the file is then
    cut back to its last whole write and the queue kept for the next `flush`. With
    `fresh`, the file must not exist yet (a new journal); else it is appended to
    (`truncate`: emptied first). A file that never got a byte written is not left behind.
    """

    def __init__(self, path: Path, what: str, *, durable: bool, fresh: bool = False,
                 truncate: bool = False) -> None:
        self.path = path
        self.what = what
        self.durable = durable
        self._fresh = fresh
        self._truncate = truncate
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of our file
        self.size = 0  # bytes on disk, all whole lines
        self._synced = 0  # of which these are durable (fsync'd)
        self.flushes = 0  # writes made (each with its fsync when durable)
        self._queue: list[bytes] = []
        self._made_dirs: list[Path] = []
        self.error: str | None = None  # the last failure, until a flush succeeds

    @property
    def waiting(self) -> int:
        """Lines queued, not yet on disk."""
        return sum(chunk.count(b"\n") for chunk in self._queue)

    def add(self, data: bytes) -> None:
        self._queue.append(data)

    def flush(self) -> str | None:
        if not self._queue:
            return None
        data = b"".join(self._queue)
        created = False
        try:
            if self._fd is None:
                created = self._open()
            assert self._fd is not None
            _write_all(self._fd, data)
            if self.durable:
                os.fdatasync(self._fd)
        except OSError as exc:
            self._undo()
            self.error = describe(exc, self.what, self.path)
            return self.error
        self.size += len(data)
        if self.durable:
            self._synced = self.size
        self.flushes += 1
        self._queue.clear()
        self.error = None
        if created and self.durable:
            fsync_directory(self.path.parent)  # the new file's name is durable too
        return None

    def _open(self) -> bool:
        """Open (create) the file; True if it was created."""
        missing = [d for d in (self.path.parent, *self.path.parent.parents) if not d.exists()]
        make_directory(self.path.parent)
        self._made_dirs = missing  # removed again if the file never gets a byte
        # read-write: a file deleted under us can be read back from its descriptor
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        if self._fresh:
            flags |= os.O_EXCL
        elif self._truncate:
            flags |= os.O_TRUNC
        fd = os.open(self.path, flags, 0o666)
        stat = os.fstat(fd)
        self._fd, self._identity = fd, (stat.st_dev, stat.st_ino)
        self.size = stat.st_size
        self._synced = 0
        created = self._fresh or self._truncate
        self._fresh = self._truncate = False  # from now on: this file, appended to
        return created

    def _undo(self) -> None:
        """After a failed write: back to the last whole write; a file still empty goes."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, self.size)
        except OSError as exc:
            log.warning("cannot cut %s back to %d bytes: %s", self.path, self.size, exc)
        if self.size == 0:
            os.close(self._fd)
            self._fd = None
            if self._identity is not None and self.missing() is None:
                self.path.unlink(missing_ok=True)
                for directory in self._made_dirs:
                    try:
                        directory.rmdir()
                    except OSError:
                        break
            self._identity = None
            self._fresh = True  # created again at the next flush

    def missing(self) -> str | None:
        """None while the path still names our file; else what happened to it."""
        if self._identity is None:
            return None
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return "deleted"
        except OSError as exc:
            return f"unreachable ({exc.strerror or exc})"
        if (stat.st_dev, stat.st_ino) != self._identity:
            return "replaced by another file"
        return None

    def restore(self) -> None:
        """Put the file back at its path with everything it held (the service still has
        it open: an unlinked file lives on until closed). Whatever now occupies the path
        is kept aside, never destroyed. Raises StorageError."""
        assert self._fd is not None
        try:
            content = os.pread(self._fd, self.size, 0)
            if self.path.exists():
                aside = unique_name(self.path, ".displaced")
                os.replace(self.path, aside)
                log.warning("%s was replaced by another file: kept as %s", self.path, aside)
            write_atomic_bytes(self.path, content)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            raise StorageError(describe(exc, self.what, self.path)) from None
        os.close(self._fd)
        stat = os.fstat(fd)
        self._fd, self._identity = fd, (stat.st_dev, stat.st_ino)
        self._synced = self.size  # written again whole and synced (write_atomic_bytes)

    def sync(self) -> None:
        """fsync what was written (a file not written durably line by line, at its end).
        Nothing new since the last sync: no call (an fsync of a clean file still costs a
        flush of the disk's cache)."""
        if self._fd is not None and self._synced != self.size:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                log.warning("cannot sync %s: %s", self.path, exc)
            else:
                self._synced = self.size

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None



def unique_name(path: Path, suffix: str) -> Path:
    """`path` + suffix, numbered (-2, -3, ...) so that no existing file is overwritten."""
    candidate = path.with_name(path.name + suffix)
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}{suffix}-{n}")
    return candidate

