"""Writing a command's output files: all of them or none, never half of one."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from board_ctl.errors import OutputError


def write_all(files: Sequence[tuple[Path, str]]) -> None:
    """Write every (path, text) as UTF-8, or none of them.

    Each text goes to a temporary file beside its path first; only when all are written
    are they renamed into place. An OutputError names the file that could not be
    written and why; the files already there are left as they were and no temporary
    file is left behind."""
    for path, _ in files:  # the one failure a rename would meet after the writes
        if path.is_dir():
            raise OutputError(f"cannot write {path}: it is a directory")
    written: list[tuple[Path, Path]] = []
    try:
        for path, text in files:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            try:
                with tmp.open("x", encoding="utf-8") as stream:
                    written.append((tmp, path))
                    stream.write(text)
            except OSError as exc:
                raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        for tmp, path in written:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in written:
            with contextlib.suppress(OSError):  # renamed into place, or cannot be
                tmp.unlink()
