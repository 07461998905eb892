"""What the board, the clock and the buttons report. Time arrives inside each event.

Squares are python-chess square numbers (0 = a1 .. 63 = h8); sides are python-chess
colours (True = white).
"""

from __future__ import annotations

from dataclasses import dataclass

import chess


@dataclass(frozen=True, slots=True)
class Lifted:
    """A square's sensor went from occupied to empty (raw, not debounced)."""

    t: float
    square: chess.Square


@dataclass(frozen=True, slots=True)
class Placed:
    """A square's sensor went from empty to occupied (raw, not debounced)."""

    t: float
    square: chess.Square


@dataclass(frozen=True, slots=True)
class ClockPressed:
    """A side pressed its clock lever, ending its turn.

    ``times``: an external clock's display just after the press, (white, black) in
    seconds; None from a lever clock, whose time the service keeps itself.
    """

    t: float
    side: chess.Color
    times: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class PromotionChosen:
    """The promotion selector was set to a piece type (QUEEN, ROOK, BISHOP, KNIGHT)."""

    t: float
    piece: chess.PieceType


@dataclass(frozen=True, slots=True)
class Resigned:
    t: float
    side: chess.Color


@dataclass(frozen=True, slots=True)
class DrawOffered:
    t: float
    side: chess.Color


@dataclass(frozen=True, slots=True)
class DrawAccepted:
    t: float
    side: chess.Color


@dataclass(frozen=True, slots=True)
class DrawClaimed:
    """A claim of threefold repetition or of the fifty-move rule."""

    t: float
    side: chess.Color


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A full scan of the board: the bitboard of occupied squares."""

    t: float
    occupied: chess.Bitboard


@dataclass(frozen=True, slots=True)
class OpponentMoved:
    """The remote side (a computer) chose `move`: it is the game's from now on, and the
    person at the board is shown it to make for it."""

    t: float
    move: chess.Move


@dataclass(frozen=True, slots=True)
class HintAsked:
    """The hint button: the person would like the remote side's suggestion."""

    t: float


@dataclass(frozen=True, slots=True)
class HintGiven:
    """The remote side's suggestion for the person's move, to be lit for him."""

    t: float
    move: chess.Move


@dataclass(frozen=True, slots=True)
class TakebackAsked:
    """The takeback button: the last full move is to be taken back (casual)."""

    t: float


@dataclass(frozen=True, slots=True)
class ArbiterResult:
    """The arbiter's decision: the game ends with `result` ("1-0", "0-1", "1/2-1/2"), or
    the result it already has is corrected. `by`: who decided; `ref`: the order's id
    (an MQTT command's), so a repeated order is recognised after a restart."""

    t: float
    result: str
    reason: str = ""
    by: str = ""
    ref: str = ""


@dataclass(frozen=True, slots=True)
class ClocksSet:
    """The arbiter sets both clocks to `white` and `black` seconds (FIDE 6.10)."""

    t: float
    white: float
    black: float
    by: str = ""
    ref: str = ""


@dataclass(frozen=True, slots=True)
class TagsSet:
    """The game's PGN tags (players, event, round ...) given or corrected; an empty value
    removes a tag."""

    t: float
    tags: tuple[tuple[str, str], ...]
    by: str = ""
    ref: str = ""


ARBITER_EVENTS = (ArbiterResult, ClocksSet, TagsSet)  # orders from outside, not the board


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passes with nothing reported (lets timers fire in a live service)."""

    t: float


Event = (
    Lifted | Placed | ClockPressed | PromotionChosen | Resigned | DrawOffered
    | DrawAccepted | DrawClaimed | Snapshot | OpponentMoved | HintAsked | HintGiven
    | TakebackAsked | ArbiterResult | ClocksSet | TagsSet | Tick
)
