"""The laws the referee enforces, one family per module, each a small object the referee
feeds committed moves, touches or claims; each returns what it finds (alerts, penalties,
results) and never acts on the game itself. The profile selects and parameterises them.

| module | laws |
| --- | --- |
| touch.py | 4.3-4.5 touch-move; 4.4 castling begun with the king, not the rook |
| completed.py | 4.7 a piece released on a square was then moved on |
| illegal.py | 7.5 illegal moves and presses without a move: reinstate, penalty, loss |
| displaced.py | 7.4 pieces knocked over or displaced; a piece lifted out of turn |
| claims.py | 9 draw offers and agreement (5.2.3), threefold and fifty-move claims; the older Laws' offers and claims |
| perpetual.py | the older Laws' perpetual check: the test a claim must pass |
| endings.py | 5 mate, stalemate, dead position, fivefold, 75 moves; 6.9 flags |
| lateness.py | 6.7.1 the default time (the older Laws' 10.15) |
| remote.py | a side played from elsewhere (a computer): its move shown, made by the person unjudged |
"""

from __future__ import annotations

from dataclasses import dataclass

import chess


@dataclass(frozen=True, slots=True)
class Finding:
    """An alert a rule raises: its code, the offending side, the squares to light."""

    code: str
    side: chess.Color | None
    squares: tuple[chess.Square, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Clear:
    """An alert that no longer holds."""

    code: str


@dataclass(frozen=True, slots=True)
class Record:
    """A note for the game record."""

    text: str


@dataclass(frozen=True, slots=True)
class AddTime:
    """Time for `side`, its opponent having broken a rule (7.5.5, 9.5.3)."""

    side: chess.Color
    seconds: int
    reason: str


@dataclass(frozen=True, slots=True)
class End:
    """The game ends (the PGN result and the termination of the sensor-log spec)."""

    result: str
    termination: str


Action = Finding | Clear | Record | AddTime | End
"""What a rule asks the referee to do; the referee applies them in order."""
