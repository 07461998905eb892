"""What the core asks the world to do or to record. Produced, never consumed, by the core."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess


class Colour(enum.IntEnum):
    """Square LED colours; the values are the wire codes of the firmware protocol."""

    OFF = 0
    RED = 1  # an error: where a piece must leave, or an illegal destination
    GREEN = 2  # where a piece must go back to
    BLUE = 3  # the touched piece that must move (touch-move)
    YELLOW = 4  # candidates to choose between (ambiguous capture)
    WHITE = 5  # results: both kings on a draw (the losing king is red)
    ORANGE = 6  # a suspect or unexplained square


class Blink(enum.IntEnum):
    STEADY = 0
    SLOW = 1
    FAST = 2


class Buzzer(enum.IntEnum):
    SILENT = 0
    CHIRP = 1  # a short beep: an alert was raised
    ALARM = 2  # repeated beeps: an alert that needs the arbiter now
    RESULT = 3  # a long tone: the game ended


class Remote(enum.IntEnum):
    """What the status LEDs say of the remote side (a computer opponent)."""

    NONE = 0
    THINKING = 1  # it is choosing its move
    SHOWN = 2  # its move is lit on the squares: make it for it
    HINT = 7  # a suggestion for the person is lit on the squares


@dataclass(frozen=True, slots=True)
class SquareLight:
    square: chess.Square
    colour: Colour
    blink: Blink = Blink.STEADY


@dataclass(frozen=True, slots=True)
class StatusLights:
    """The Pi's own status LEDs."""

    white_to_move: bool = False
    black_to_move: bool = False
    alert: Blink | None = None  # None: off
    game_over: bool = False
    remote: Remote = Remote.NONE
    promotion: chess.PieceType | None = None  # the piece the shown move promotes to


@dataclass(frozen=True, slots=True)
class LedFrame:
    """Everything the LEDs show at time t; squares not listed are dark."""

    t: float
    squares: tuple[SquareLight, ...]
    status: StatusLights
    buzzer: Buzzer = Buzzer.SILENT
    guidance: tuple[tuple[chess.Square, chess.Square], ...] = ()  # (from, to): pieces to move back


@dataclass(frozen=True, slots=True)
class MoveMade:
    t: float
    ply: int
    move: chess.Move
    san: str
    clock: float | None = None  # the mover's time left after the move ([%clk]); None untimed
    elapsed: float | None = None  # the time the move took ([%emt])
    # The other readings of what the sensors saw, as likely as this one: the record is
    # flagged (the report's "uncertain", a PGN comment) and the LEDs ask.
    uncertain: tuple[chess.Move, ...] = ()


@dataclass(frozen=True, slots=True)
class Alert:
    t: float
    code: str
    side: chess.Color | None
    squares: tuple[chess.Square, ...]
    text: str


@dataclass(frozen=True, slots=True)
class AlertCleared:
    t: float
    code: str


@dataclass(frozen=True, slots=True)
class Penalty:
    """Time given to `to_side` because its opponent broke a rule (FIDE 7.5.5, 9.5.3)."""

    t: float
    to_side: chess.Color
    seconds: int
    reason: str


@dataclass(frozen=True, slots=True)
class Note:
    """Something the game record should say that is not an alert (a draw offer, say)."""

    t: float
    text: str


@dataclass(frozen=True, slots=True)
class GameOver:
    t: float
    result: str  # "1-0", "0-1", "1/2-1/2"
    termination: str  # "checkmate", "stalemate", ... (see the sensor-log spec)


@dataclass(frozen=True, slots=True)
class TakenBack:
    """The last `plies` moves were taken back (a takeback against a computer)."""

    t: float
    plies: int


@dataclass(frozen=True, slots=True)
class TagsChanged:
    """The game's PGN tags as now set (an empty value: the tag is removed)."""

    t: float
    tags: tuple[tuple[str, str], ...]


Effect = (MoveMade | Alert | AlertCleared | LedFrame | Penalty | Note | GameOver | TagsChanged
          | TakenBack)
