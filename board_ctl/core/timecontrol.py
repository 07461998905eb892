"""Time controls in PGN ``TimeControl`` form (PGN standard 9.6.1), extended for delays.

Grammar (whole seconds everywhere; ``str(tc)`` gives the canonical form back)::

    control  := "?" | "-" | "*" SECONDS | period (":" period)*
    period   := [MOVES "/"] SECONDS [bonus]
    bonus    := "+" SECONDS      Fischer increment, added after each move of the period
              | "d" SECONDS      simple (US) delay: the first N seconds of each turn are free
              | "b" SECONDS      Bronstein delay: after each move, min(N, time used) is given back

- ``?`` unknown, ``-`` no time control (both untimed), ``*180`` a sandclock (hourglass):
  each side starts with 180 s and the time one side uses is added to the other's.
- ``40/5400+30:1800+30``: 40 moves in 90 min, then 30 min for the rest of the game, with
  30 s per move from move one. A period's time is added when the last move of the
  previous period is completed (at the press). A last period that has a move count repeats
  (``40/7200:20/3600`` is 20 moves per hour after move 40; ``40/9000`` every 40 moves).
- A period has at most one bonus; ``+0``/``d0``/``b0`` mean none, and leading zeros are
  accepted; both are dropped from the canonical form (``300+0`` -> ``300``).
- Every field is bounded by what a clock can show: times (a period's, a bonus, a
  sandclock's) at most 999:59:59 (``MAX_CLOCK_SECONDS``), a move count at most 999, and
  at most 20 periods. A larger value is refused naming the field, never carried on to
  overflow later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from board_ctl.errors import BoardCtlError

FideCategory = Literal["standard", "rapid", "blitz"]
ProfileName = Literal["fide", "rapid", "blitz", "casual"]

# RULES.md section 4 / FIDE A.1, B.1: the time for 60 moves decides the category.
BLITZ_MAX_SECONDS = 10 * 60  # blitz: <= 10 min
STANDARD_MIN_SECONDS = 60 * 60  # standard: >= 60 min; rapid in between
CATEGORY_MOVES = 60

MAX_CLOCK_SECONDS = 999 * 3600 + 59 * 60 + 59  # 999:59:59, the most an H:MM:SS display shows
MAX_MOVES = 999  # a period's move count (three digits)
MAX_PERIODS = 20
_TIME_FIELDS = {"seconds": "the period's time", "increment": "the increment",
                "simple_delay": "the delay", "bronstein_delay": "the delay"}

_PERIOD = re.compile(
    r"(?:(?P<moves>[0-9]+)/)?(?P<seconds>[0-9]+)(?:(?P<kind>[+db])(?P<bonus>[0-9]+))?"
)
_PERIOD_FORM = "[moves/]seconds[+increment | dDELAY | bDELAY], e.g. 40/5400+30, 300, 300d5, 300b5"


class TimeControlError(BoardCtlError, ValueError):
    """A TimeControl value that cannot be understood, or an impossible Period."""

    def __init__(self, message: str, text: str | None = None) -> None:
        self.text = text
        super().__init__(f"TimeControl {_shown(text)}: {message}" if text is not None else message)


def _shown(text: object, limit: int = 40) -> str:
    """A value as it appears in a message: quoted, and cut short when it is long."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


@dataclass(frozen=True, slots=True)
class Period:
    """One period: ``seconds`` for ``moves`` moves (None: the rest of the game).

    At most one of ``increment``, ``simple_delay``, ``bronstein_delay`` is non-zero.
    """

    seconds: int
    moves: int | None = None
    increment: int = 0
    simple_delay: int = 0
    bronstein_delay: int = 0

    def __post_init__(self) -> None:
        for name in ("seconds", "increment", "simple_delay", "bronstein_delay"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise TimeControlError(
                    f"Period.{name} must be a whole number of seconds >= 0, not {_shown(value)}"
                )
            if value > MAX_CLOCK_SECONDS:
                raise TimeControlError(
                    f"Period.{name} ({_TIME_FIELDS[name]}) is at most {MAX_CLOCK_SECONDS} s "
                    f"(999:59:59, the most a clock shows), not {_shown(value)}"
                )
        if self.seconds < 1:
            raise TimeControlError("a period needs at least 1 second")
        if self.moves is not None and (type(self.moves) is not int or self.moves < 1):
            raise TimeControlError(
                f"Period.moves must be None or at least 1, not {_shown(self.moves)}")
        if self.moves is not None and self.moves > MAX_MOVES:
            raise TimeControlError(
                f"Period.moves (the move count) is at most {MAX_MOVES}, not {_shown(self.moves)}")
        if sum(1 for b in (self.increment, self.simple_delay, self.bronstein_delay) if b) > 1:
            raise TimeControlError(
                "a period has at most one of increment, simple delay, Bronstein delay"
            )

    @property
    def bonus_per_move(self) -> int:
        """Most time a move can gain (increment or delay): what FIDE A.1 multiplies by 60."""
        return self.increment + self.simple_delay + self.bronstein_delay

    def __str__(self) -> str:
        text = f"{self.moves}/{self.seconds}" if self.moves is not None else str(self.seconds)
        if self.increment:
            text += f"+{self.increment}"
        elif self.simple_delay:
            text += f"d{self.simple_delay}"
        elif self.bronstein_delay:
            text += f"b{self.bronstein_delay}"
        return text


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A whole time control. Build with :meth:`parse`; ``str()`` is the canonical PGN form.

    Exactly one shape: ``periods`` (timed), ``sandclock`` seconds, ``unknown`` (``?``),
    or none of them (``-``, no time control).
    """

    periods: tuple[Period, ...] = ()
    sandclock: int | None = None
    unknown: bool = False

    def __post_init__(self) -> None:
        shapes = sum((bool(self.periods), self.sandclock is not None, self.unknown))
        if shapes > 1:
            raise TimeControlError(
                "a time control is periods, a sandclock or unknown, not several"
            )
        if self.sandclock is not None and (type(self.sandclock) is not int or self.sandclock < 1):
            raise TimeControlError(
                f"a sandclock needs at least 1 second, not {_shown(self.sandclock)}")
        if self.sandclock is not None and self.sandclock > MAX_CLOCK_SECONDS:
            raise TimeControlError(
                f"a sandclock's time is at most {MAX_CLOCK_SECONDS} s (999:59:59, the most a "
                f"clock shows), not {_shown(self.sandclock)}")
        if len(self.periods) > MAX_PERIODS:
            raise TimeControlError(
                f"at most {MAX_PERIODS} periods, not {len(self.periods)}")
        for index, period in enumerate(self.periods[:-1]):
            if period.moves is None:
                raise TimeControlError(
                    f"period {index + 2} '{self.periods[index + 1]}' can never start: "
                    f"period {index + 1} '{period}' has no move count"
                )

    # ------------------------------------------------------------------ construction

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse a PGN TimeControl value (surrounding whitespace ignored).

        Raises TimeControlError, saying which period and which part is wrong.
        """
        if not isinstance(text, str):
            raise TimeControlError(f"expected a string, not {type(text).__name__}")
        stripped = text.strip()
        if not stripped:
            raise TimeControlError("empty; use '-' for no time control or '?' for unknown", text)
        if stripped == "?":
            return cls(unknown=True)
        if stripped == "-":
            return cls()
        if stripped.startswith("*"):
            digits = stripped[1:]
            if ":" in digits:
                raise TimeControlError("a sandclock cannot be combined with other periods", text)
            if not digits.isdigit() or not digits.isascii():
                raise TimeControlError("a sandclock is '*' and whole seconds, e.g. *180", text)
            seconds = _bounded(digits, MAX_CLOCK_SECONDS, "the sandclock's time", "", text)
            if seconds < 1:
                raise TimeControlError("a sandclock needs at least 1 second", text)
            return cls(sandclock=seconds)
        if stripped.count(":") >= MAX_PERIODS:
            raise TimeControlError(f"at most {MAX_PERIODS} periods", text)
        periods = tuple(
            _parse_period(part, index, text)
            for index, part in enumerate(stripped.split(":"), start=1)
        )
        try:
            return cls(periods=periods)
        except TimeControlError as exc:
            raise TimeControlError(str(exc), text) from None

    def __str__(self) -> str:
        if self.unknown:
            return "?"
        if self.sandclock is not None:
            return f"*{self.sandclock}"
        if not self.periods:
            return "-"
        return ":".join(str(p) for p in self.periods)

    # ------------------------------------------------------------------ queries

    @property
    def is_timed(self) -> bool:
        """True when a clock can run out (periods or a sandclock)."""
        return bool(self.periods) or self.sandclock is not None

    @property
    def initial_seconds(self) -> int | None:
        """Each side's time at the start, None when untimed."""
        if self.sandclock is not None:
            return self.sandclock
        return self.periods[0].seconds if self.periods else None

    def period_for_move(self, move_number: int) -> Period:
        """The period in which a side makes its ``move_number``-th move (1-based).

        Only for controls with periods.
        """
        if not self.periods:
            raise TimeControlError(f"'{self}' has no periods")
        if move_number < 1:
            raise ValueError(f"move numbers start at 1, not {move_number}")
        moves_before = 0
        for period in self.periods:
            if period.moves is None or move_number <= moves_before + period.moves:
                return period
            moves_before += period.moves
        return self.periods[-1]  # a last period with a move count repeats

    def seconds_added_after_move(self, move_number: int) -> int:
        """Time added when a side completes its ``move_number``-th move: the next period's
        time when that move ends a period, else 0. (Increments are not included.)"""
        if not self.periods:
            return 0
        moves_before = 0
        for index, period in enumerate(self.periods):
            if period.moves is None:
                return 0
            end = moves_before + period.moves
            if move_number == end:
                return self.periods[min(index + 1, len(self.periods) - 1)].seconds
            if move_number < end:
                return 0
            moves_before = end
        last = self.periods[-1]
        assert last.moves is not None  # the loop returned for a last period without one
        # Past the written periods the last one repeats.
        return last.seconds if (move_number - moves_before) % last.moves == 0 else 0

    def seconds_for_moves(self, moves: int = CATEGORY_MOVES) -> int | None:
        """Time a side gets for its first ``moves`` moves: every period that starts by then,
        plus each move's increment or delay (FIDE A.1 'base + 60 x increment')."""
        if self.sandclock is not None:
            return self.sandclock
        if not self.periods:
            return None
        total = self.periods[0].seconds
        for move in range(1, moves + 1):
            total += self.period_for_move(move).bonus_per_move
            if move < moves:  # time added after the last counted move is not for these moves
                total += self.seconds_added_after_move(move)
        return total

    @property
    def fide_category(self) -> FideCategory | None:
        """FIDE category by the time for 60 moves: standard >= 60 min, blitz <= 10 min,
        rapid in between (RULES.md section 4). None when untimed. Delays count as
        increments (FIDE does not define them)."""
        seconds = self.seconds_for_moves()
        if seconds is None:
            return None
        if seconds >= STANDARD_MIN_SECONDS:
            return "standard"
        if seconds <= BLITZ_MAX_SECONDS:
            return "blitz"
        return "rapid"

    @property
    def suggested_profile(self) -> ProfileName:
        """The rule profile (core.profiles) that fits: fide, rapid, blitz; casual if untimed."""
        category = self.fide_category
        if category is None:
            return "casual"
        return "fide" if category == "standard" else category


def _bounded(digits: str, limit: int, field: str, where: str, text: str) -> int:
    """Whole digits as a number no larger than `limit` (checked before converting: a
    value of thousands of digits is refused as too large, not failed on)."""
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(limit)) or int(significant) > limit:
        unit = "" if field == "the move count" else " s"
        hint = "" if unit == "" else " (999:59:59, the most a clock shows)"
        raise TimeControlError(
            f"{where + ': ' if where else ''}{field} is at most {limit}{unit}{hint}, "
            f"not {_shown(significant, 24)[1:-1]}", text)
    return int(significant)


def _parse_period(part: str, index: int, text: str) -> Period:
    where = f"period {index} {_shown(part)}"
    if not part:
        raise TimeControlError(
            f"period {index} is empty (two ':' in a row, or one at an end)", text
        )
    if "*" in part:
        raise TimeControlError(f"{where}: a sandclock ('*') stands alone", text)
    if "." in part:
        raise TimeControlError(f"{where}: times are whole seconds, no fractions", text)
    match = _PERIOD.fullmatch(part)
    if match is None or not part.isascii():
        raise TimeControlError(f"{where}: expected {_PERIOD_FORM}", text)
    moves = (_bounded(match["moves"], MAX_MOVES, "the move count", where, text)
             if match["moves"] is not None else None)
    seconds = _bounded(match["seconds"], MAX_CLOCK_SECONDS, "the period's time", where, text)
    if moves == 0:
        raise TimeControlError(f"{where}: the move count must be at least 1", text)
    if seconds == 0:
        raise TimeControlError(f"{where}: the period's time must be at least 1 second", text)
    kind = match["kind"]
    what = {"+": "the increment", "d": "the delay", "b": "the delay"}.get(kind, "")
    bonus = (_bounded(match["bonus"], MAX_CLOCK_SECONDS, what, where, text)
             if match["bonus"] is not None else 0)
    return Period(
        seconds=seconds,
        moves=moves,
        increment=bonus if kind == "+" else 0,
        simple_delay=bonus if kind == "d" else 0,
        bronstein_delay=bonus if kind == "b" else 0,
    )
