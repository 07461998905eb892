"""A game's sensor log as it is played: JSON Lines in the public format, flushed per line.

Whatever happens to the service afterwards, the raw events up to the last one are on
disk, and `board-ctl replay` on the file gives the game back.
"""

from __future__ import annotations

import os
from pathlib import Path

from board_ctl.core import events as ev
from board_ctl.sensorlog import StartInfo, dumps, event_to_json, start_to_json


class SensorLogWriter:
    def __init__(self, path: Path, start: StartInfo) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8", buffering=1)  # line-buffered
        self._file.write(dumps(start_to_json(start)) + "\n")
        self.lines = 1

    def write(self, event: ev.Event) -> None:
        self._file.write(dumps(event_to_json(event)) + "\n")
        self.lines += 1

    def close(self) -> None:
        if self._file.closed:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
