"""A game's sensor log as it is played: JSON Lines in the public format, each line written
out as its event arrives (before the referee sees it).

Whatever happens to the service afterwards, the raw events up to the last one are on
disk, and `board-ctl replay` on the file gives the game back. A disk that refuses a line
(full) leaves the file at its last whole line; the lines wait and are written, in order,
as soon as it takes them again (`error` says what is wrong meanwhile).
"""

from __future__ import annotations

from pathlib import Path

from board_ctl.core import events as ev
from board_ctl.sensorlog import StartInfo, dumps, event_to_json, start_to_json
from board_ctl.storage import AppendFile


class SensorLogWriter:
    def __init__(self, path: Path, start: StartInfo) -> None:
        self.path = path
        self.file = AppendFile(path, "sensor log", durable=False, truncate=True)
        self.lines = 0
        self._add(dumps(start_to_json(start)))
        self.file.flush()

    @property
    def error(self) -> str | None:
        return self.file.error

    def write(self, event: ev.Event) -> None:
        self._add(dumps(event_to_json(event)))
        self.file.flush()

    def _add(self, line: str) -> None:
        self.file.add((line + "\n").encode("utf-8"))
        self.lines += 1

    def sync(self) -> None:
        """Everything written so far durable (at a game's end: not at the next game's
        start, where the LEDs would wait for it)."""
        self.file.flush()
        self.file.sync()

    def close(self) -> None:
        self.sync()
        self.file.close()
