"""The crash-safe journal of a game: every record on disk before its effect is shown.

One JSON object a line, the sensor-log and game-report objects themselves plus a CRC-32
of the line, appended and fsync'd: a power cut leaves at worst a torn last line, which
the reader detects, reports and drops, recovering everything before it. Because the
referee is pure and deterministic, the journal's events alone rebuild the game exactly
(position, moves, clocks, penalties, touched pieces); its effect lines are the record
of what was shown, for people and for checking.

Records:
    {"ev": "start", "profile": ..}  the game's start (sensor-log `start` object, and profile)
    {"t": .., "ev": "lift", ...}    every sensor/clock/button event (sensor-log objects)
    {"t": .., "kind": "move", ...}  every effect (game-report objects, LED frames excepted)
    {"t": .., "kind": "resume"}     the service restarted here (power cut, crash)
    {"t": .., "kind": "end"}        the game is over and archived
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from board_ctl.core import events as ev
from board_ctl.core.effects import Effect, LedFrame
from board_ctl.errors import BoardCtlError, SensorLogError
from board_ctl.record import report_object
from board_ctl.sensorlog import StartInfo, event_to_json, parse_line, start_to_json


class JournalError(BoardCtlError, OSError):
    """A journal that cannot be written or read at all."""


def _canonical(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def encode_record(obj: dict[str, Any]) -> str:
    """The line for a record: its canonical JSON with the CRC-32 of that JSON added."""
    text = _canonical(obj)
    crc = zlib.crc32(text.encode("utf-8"))
    return f'{text[:-1]},"crc":"{crc:08x}"}}\n' if obj else f'{{"crc":"{crc:08x}"}}\n'


def decode_record(line: str) -> dict[str, Any] | None:
    """The record of a complete, intact line; None for a torn or corrupt one."""
    if not line.endswith("\n"):
        return None  # the write was cut short
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("crc"), str):
        return None
    crc = obj.pop("crc")
    if f"{zlib.crc32(_canonical(obj).encode('utf-8')):08x}" != crc:
        return None
    return obj


@dataclass
class Recovered:
    """What a journal holds, as far as it is intact."""

    start: StartInfo
    events: list[ev.Event]
    effects: list[dict[str, Any]]
    profile: str = "fide"
    resumes: int = 0
    ended: bool = False
    last_t: float = 0.0
    intact_lines: int = 0
    problems: list[str] = field(default_factory=list)


def read_journal(path: Path) -> Recovered:
    """Read a journal up to its last complete record, saying what was dropped and why."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read journal {path}: {exc}") from exc
    lines = raw.decode("utf-8", errors="replace").splitlines(keepends=True)
    recovered = Recovered(StartInfo(), [], [])
    for number, line in enumerate(lines, start=1):
        record = decode_record(line)
        if record is None:
            what = "torn (cut short by a power cut or crash)" if number == len(lines) \
                else "corrupt (its checksum does not match)"
            recovered.problems.append(
                f"journal {path}: line {number} of {len(lines)} is {what}; recovered the "
                f"game up to line {number - 1}, dropping {len(lines) - number + 1} line(s)")
            break
        recovered.intact_lines = number
        _take(recovered, record, number)
    return recovered


def _take(recovered: Recovered, record: dict[str, Any], number: int) -> None:
    if "ev" in record:
        try:
            item = parse_line(json.dumps(record), number)
        except SensorLogError as exc:
            recovered.problems.append(f"journal line {number}: {exc}")
            return
        if isinstance(item, StartInfo):
            recovered.start = item
            recovered.profile = str(record.get("profile", "fide"))
        elif item is not None:
            recovered.events.append(item)
            recovered.last_t = max(recovered.last_t, item.t)
    elif record.get("kind") == "resume":
        recovered.resumes += 1
    elif record.get("kind") == "end":
        recovered.ended = True
    elif record.get("kind") == "time":  # the clock was running at least until then
        recovered.last_t = max(recovered.last_t, float(record.get("t", 0.0)))
    elif "kind" in record:
        recovered.effects.append(record)
        recovered.last_t = max(recovered.last_t, float(record.get("t", 0.0)))


class JournalWriter:
    """Appends records and makes them durable (fsync) before the caller shows them."""

    def __init__(self, path: Path, stream: IO[str]) -> None:
        self.path = path
        self._stream = stream

    @classmethod
    def create(cls, path: Path, start: StartInfo, profile: str = "fide") -> JournalWriter:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            stream = path.open("x", encoding="utf-8")
        except OSError as exc:
            raise JournalError(f"cannot create journal {path}: {exc}") from exc
        writer = cls(path, stream)
        writer.write([start_to_json(start) | {"profile": profile}])
        _fsync_directory(path.parent)  # the new file's name is durable too
        return writer

    @classmethod
    def resume(cls, path: Path, recovered: Recovered, t: float) -> JournalWriter:
        """Go on writing a recovered journal: cut off a torn tail first, then mark the restart."""
        try:
            with path.open("rb+") as raw:
                good = b"".join(raw.read().splitlines(keepends=True)[: recovered.intact_lines])
                raw.seek(0)
                raw.truncate()
                raw.write(good)
                raw.flush()
                os.fsync(raw.fileno())
            stream = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise JournalError(f"cannot reopen journal {path}: {exc}") from exc
        writer = cls(path, stream)
        writer.write([{"t": round(t, 6), "kind": "resume"}])
        return writer

    def write(self, records: Iterable[dict[str, Any]]) -> None:
        text = "".join(encode_record(record) for record in records)
        if not text:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
            os.fsync(self._stream.fileno())
        except OSError as exc:
            raise JournalError(f"cannot write journal {self.path}: {exc}") from exc

    def record(self, event: ev.Event | None, effects: Iterable[Effect]) -> None:
        """One event and what it caused, durably, in one write."""
        records = [event_to_json(event)] if event is not None else []
        records += [line for effect in effects if not isinstance(effect, LedFrame)
                    if (line := report_object(effect)) is not None]
        self.write(records)

    def mark_time(self, t: float) -> None:
        """Time has reached ``t`` with nothing to record: after a power cut the thinking
        time up to here is still charged (only the time the power was off is not)."""
        self.write([{"t": round(t, 6), "kind": "time"}])

    def end(self, t: float) -> None:
        self.write([{"t": round(t, 6), "kind": "end"}])

    def close(self) -> None:
        if not self._stream.closed:
            self._stream.close()


def _fsync_directory(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # not every file system lets a directory be synced; the data is synced anyway
    finally:
        os.close(fd)
