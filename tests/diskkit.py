"""Real disks that fill up or refuse writes, for the storage tests: a small tmpfs mounted
for the test (root, as in CI), filled by a file; no mock of the file system."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from conftest import missing_tool


@contextlib.contextmanager
def small_disk(path: Path, kilobytes: int = 256, readonly: bool = False) -> Iterator[Path]:
    """A tmpfs of `kilobytes` mounted at `path` (read-only with `readonly`)."""
    path.mkdir(parents=True, exist_ok=True)
    options = f"size={kilobytes}k,mode=0777" + (",ro" if readonly else "")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        missing_tool(f"mounting a small tmpfs for a full disk needs root with "
                     f"CAP_SYS_ADMIN: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def fill(disk: Path, name: str = "filler") -> Path:
    """Take every free byte of the disk with one file; delete it to give them back."""
    filler = disk / name
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    block = b"\0" * 4096
    try:
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        for size in (1024, 256, 64, 16, 1):  # the last bytes of a partial page too
            try:
                while True:
                    os.write(fd, block[:size])
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
    finally:
        os.close(fd)
    return filler
