"""A game's journal, read as it grows, turned into what the hall sees of the game.

The journal (board_ctl/journal.py) is the durable record: every event and its effects on
disk before the LEDs show them. The publisher reads it, never the service's memory, so
what it publishes is what a restart would find, in the order it happened; a journal
line's number is the `seq` of what it publishes, the same every time it is republished.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import chess

from board_ctl.core.effects import (
    Alert,
    AlertCleared,
    Effect,
    GameOver,
    MoveMade,
    Note,
    Penalty,
    TagsChanged,
)
from board_ctl.journal import decode_record
from board_ctl.record import GameRecord
from board_ctl.sensorlog import SIDES

log = logging.getLogger(__name__)

_READ = 1 << 16


class JournalTail:
    """The complete records appended to a journal since the last read, with their line
    numbers (a line still being written waits for the next read)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.line = 0  # the number of the last line returned
        self._stream: IO[bytes] | None = None
        self._partial = b""

    def read(self, limit: int = 1000) -> list[tuple[int, dict[str, Any]]]:
        if self._stream is None:
            try:
                self._stream = self.path.open("rb")
            except FileNotFoundError:
                return []
        out: list[tuple[int, dict[str, Any]]] = []
        while len(out) < limit:
            chunk = self._stream.read(_READ)
            if not chunk:
                break
            lines = (self._partial + chunk).split(b"\n")
            self._partial = lines.pop()
            for raw in lines:
                self.line += 1
                record = decode_record(raw.decode("utf-8", errors="replace") + "\n")
                if record is None:
                    log.warning("%s: line %d is corrupt; not published", self.path, self.line)
                    continue
                out.append((self.line, record))
        return out

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _other_readings(uncertain: object) -> tuple[chess.Move, ...]:
    """A move line's `uncertain` readings after the one recorded (none if malformed)."""
    if not isinstance(uncertain, list) or len(uncertain) > 16:
        return ()
    try:
        return tuple(chess.Move.from_uci(uci) for uci in uncertain[1:] if isinstance(uci, str))
    except ValueError:  # (chess.InvalidMoveError)
        return ()


def effect_of(record: dict[str, Any]) -> Effect | None:
    """The effect a journal's report line records (the inverse of record.report_object)."""
    t = float(record.get("t", 0.0))
    match record.get("kind"):
        case "move":
            return MoveMade(t, int(record["ply"]), chess.Move.from_uci(record["uci"]),
                            str(record["san"]), record.get("clock"), record.get("elapsed"),
                            _other_readings(record.get("uncertain")))
        case "alert":
            side = record.get("side")
            return Alert(t, str(record["code"]), SIDES[side] if side in SIDES else None,
                         tuple(chess.parse_square(s) for s in record.get("squares", [])),
                         str(record.get("text", "")))
        case "clear":
            return AlertCleared(t, str(record["code"]))
        case "result":
            return GameOver(t, str(record["result"]), str(record.get("termination", "")))
        case "penalty":
            return Penalty(t, SIDES[record["to"]], int(record["seconds"]),
                           str(record.get("reason", "")))
        case "note":
            return Note(t, str(record.get("text", "")))
        case "tags":
            return TagsChanged(t, tuple(sorted(record.get("tags", {}).items())))
    return None


@dataclass
class OpenAlert:
    code: str
    side: str | None
    squares: list[str]
    text: str
    t: float
    acknowledged_by: str | None = None


@dataclass
class GameModel:
    """A game as its journal has it so far: position, moves, open alerts, tags, result,
    and its record (for the PGN)."""

    game_id: str
    start_fen: str = chess.STARTING_FEN
    board: chess.Board = field(default_factory=chess.Board)
    record: GameRecord = field(default_factory=GameRecord)
    alerts: dict[str, OpenAlert] = field(default_factory=dict)
    last_clock: dict[str, float | None] = field(
        default_factory=lambda: {"white": None, "black": None})
    ended: bool = False  # its journal's end line
    version: int = 0  # counts the changes the state or PGN show

    @property
    def result(self) -> GameOver | None:
        return self.record.result

    @property
    def tags(self) -> dict[str, str]:
        return self.record.tags

    def take(self, record: dict[str, Any]) -> Effect | None:
        """One journal record; the effect it holds (None for an event or a mark)."""
        if record.get("ev") == "start":
            self.start_fen = str(record.get("fen", chess.STARTING_FEN))
            self.board = chess.Board(self.start_fen)
            self.record = GameRecord(self.start_fen, dict(record.get("tags", {})),
                                     record.get("time_control"))
            self.version += 1
            return None
        kind = record.get("kind")
        if kind == "end":
            self.ended = True
            return None
        if kind == "ack":
            alert = self.alerts.get(str(record.get("code")))
            if alert is not None:
                alert.acknowledged_by = str(record.get("by") or "arbiter")
                self.version += 1
            return None
        try:
            effect = effect_of(record)
        except (KeyError, ValueError, TypeError) as exc:
            log.warning("journal of %s: a %s line not understood (%s)", self.game_id, kind, exc)
            return None
        if effect is None:
            return None
        self.record.add(effect)
        self.version += 1
        match effect:
            case MoveMade(move=move, clock=clock):
                mover = "white" if self.board.turn == chess.WHITE else "black"
                self.last_clock[mover] = clock
                self.board.push(move)
            case Alert():
                self.alerts[effect.code] = OpenAlert(
                    effect.code, record.get("side"), list(record.get("squares", [])),
                    effect.text, effect.t)
            case AlertCleared(code=code):
                self.alerts.pop(code, None)
        return effect

    def started(self) -> dt.date | None:
        try:
            return dt.datetime.strptime(self.game_id[:15], "%Y%m%d-%H%M%S").date()
        except ValueError:
            return None

    def pgn(self) -> str:
        return self.record.pgn_text(self.started())
