"""What the service asks the engine and what it answers: plain values, light to import
(the service loop checks its queue's items against them without loading chess.engine)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import chess

if TYPE_CHECKING:
    import chess.engine


@dataclass(frozen=True)
class Think:
    """Choose the engine's move in `board` (whose side to move is the engine's)."""

    key: object  # handed back with the answer: which position it was asked for
    board: chess.Board
    limit: chess.engine.Limit


@dataclass(frozen=True)
class Suggest:
    """The best move for the person in `board` (a hint), at full strength."""

    key: object
    board: chess.Board
    limit: chess.engine.Limit


@dataclass(frozen=True)
class JudgeDraw:
    """Whether the engine, playing `side`, accepts a draw offered in `board`."""

    key: object
    board: chess.Board
    side: chess.Color
    limit: chess.engine.Limit


Request = Think | Suggest | JudgeDraw


@dataclass(frozen=True)
class EngineReply:
    key: object
    request: Request
    move: chess.Move | None = None  # Think, Suggest
    accept: bool = False  # JudgeDraw
    score_cp: int | None = None  # JudgeDraw: the evaluation it judged on, its side's view
    from_book: bool = False


@dataclass(frozen=True)
class EngineFailed:
    key: object
    request: Request
    reason: str


Deliver = Callable[[object], None]
