"""The chess clock, kept as pure state: times arrive as arguments (seconds, float).

Internally every time is an integer number of milliseconds: an argument ``t`` becomes
``round(t * 1000)`` (Python's round, so a log's millisecond timestamps are taken
exactly and finer ones are rounded the same way on every machine). Every time returned
is ``ms / 1000``, so it is exact to the millisecond and ``GameNode.set_clock()`` /
``set_emt()`` of python-chess (which print up to 3 decimals) write it exactly, e.g.
5397.5 -> ``[%clk 1:29:57.5]``.

- :class:`ChessClock`: the lever clock the service keeps from presses.
- :class:`ExternalClock`: validates the times a clock reports over serial (DGT-style).
- :func:`flag_result`: the result when a flag falls (FIDE 6.9).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import chess

from board_ctl.core.squares import named_tuple
from board_ctl.core.timebase import MAX_SECONDS
from board_ctl.core.timecontrol import MAX_CLOCK_SECONDS, TimeControl, TimeControlError
from board_ctl.errors import BoardCtlError

_T = TypeVar("_T")

SNAPSHOT_FORMAT = 1
SIDE_NAMES = {chess.WHITE: "white", chess.BLACK: "black"}
_SIDES_BY_NAME = {name: side for side, name in SIDE_NAMES.items()}



class ClockError(BoardCtlError, ValueError):
    """A clock used out of order (time going backwards, started twice) or a bad snapshot."""


def to_ms(seconds: float) -> int:
    """Seconds (float) -> integer milliseconds, the clock's only internal unit."""
    if type(seconds) is float and -MAX_SECONDS <= seconds <= MAX_SECONDS:
        return round(seconds * 1000)  # (the common case, checked in one step)
    if not _is_number(seconds) or abs(seconds) > MAX_SECONDS:
        raise ClockError(f"a time must be a finite number of seconds within ±{MAX_SECONDS:.0e}, "
                         f"not {seconds!r}")
    return round(seconds * 1000)


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value)


def _seconds(ms: int) -> float:
    return ms / 1000


class PressResult(NamedTuple):
    """What a press reports for the move it completes (unpacks as ``remaining, elapsed``)."""

    remaining: float | None
    """The pressing side's time after the press, increment/delay/next period included:
    the move's ``[%clk]``. None when untimed."""
    elapsed: float
    """Time the turn took, pauses excluded: the move's ``[%emt]``."""


class ChessClock:
    """A two-sided clock driven by presses.

    Lifecycle: ``ChessClock(tc)`` -> ``start(t)`` (``start_side``'s clock runs) ->
    ``press(side, t)`` per move; ``pause``/``resume`` stop time for both players.
    Times ``t`` passed to one clock must not go backwards (ClockError), except at
    ``resume``, which may begin a new time base (after a reboot).

    A side's flag falls when its remaining time reaches 0, i.e. at :meth:`flag_time`.
    The clock never shows less than 0; the service decides what a fallen flag means
    (:func:`flag_result`). Moves are counted per side from this clock's start, not from
    a FEN's move number.
    """

    def __init__(self, tc: TimeControl | None, start_side: chess.Color = chess.WHITE) -> None:
        self.tc = tc if tc is not None else TimeControl()
        self.start_side = start_side
        initial = to_ms(self.tc.initial_seconds or 0)
        self._remaining_ms = {chess.WHITE: initial, chess.BLACK: initial}
        self._moves = {chess.WHITE: 0, chess.BLACK: 0}
        self._fell_at_ms: dict[chess.Color, int | None] = {chess.WHITE: None, chess.BLACK: None}
        self._turn: chess.Color | None = None  # None until started
        self._paused = False
        self._turn_used_ms = 0  # the current turn's time before the latest (re)start of its run
        self._run_since_ms: int | None = None  # None while paused or not started
        self._now_ms: int | None = None  # the latest time this clock was given
        self._external = False  # an external clock's readings set the times (set_times)
        # A clock can run out: a timed control, or times an external clock reported. (An
        # attribute, kept with `_external`: it is asked for every event.)
        self.timed = self.tc.is_timed

    @property
    def turn(self) -> chess.Color | None:
        """The side whose turn it is (its clock runs unless paused); None before start."""
        return self._turn

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def running(self) -> bool:
        """True when a clock is counting now (started, not paused)."""
        return self._turn is not None and not self._paused

    @property
    def now(self) -> float | None:
        """The latest time given to this clock (None before any)."""
        return None if self._now_ms is None else _seconds(self._now_ms)

    @property
    def now_ms(self) -> int | None:
        """:attr:`now` in whole milliseconds, as kept."""
        return self._now_ms

    def moves_made(self, side: chess.Color) -> int:
        """Presses that completed a move of ``side`` on this clock."""
        return self._moves[side]

    def remaining(self, side: chess.Color, t: float) -> float | None:
        """``side``'s time at ``t`` (never below 0; delay accounted), None when untimed."""
        t_ms = self._check_time(t)
        if not self.timed:
            return None
        return _seconds(self._remaining_at(side, t_ms))

    def turn_elapsed(self, t: float) -> float:
        """Time the current turn has taken so far at ``t``, pauses excluded (0 before start)."""
        return _seconds(self._turn_used_at(self._check_time(t)))

    def flag_time(self) -> float | None:
        """The time at which the side to move's flag falls if nobody presses.

        None when untimed, not started or paused. It may lie in the past: the flag has
        fallen at that exact time.
        """
        ms = self.flag_time_ms()
        return None if ms is None else _seconds(ms)

    def flag_fell_at(self, side: chess.Color, t: float) -> float | None:
        """When ``side``'s flag fell, if it has by ``t`` (it stays fallen after later
        increments or penalties); None otherwise."""
        t_ms = self._check_time(t)
        fell = self._fell_at_ms[side]
        if fell is None and side == self._turn:
            pending = self.flag_time_ms()
            if pending is not None and pending <= t_ms:
                fell = pending
        return None if fell is None else _seconds(fell)

    # ------------------------------------------------------------------ actions

    def start(self, t: float) -> None:
        """Start ``start_side``'s clock at ``t`` (White's at t = 0 in a normal game)."""
        if self._turn is not None:
            raise ClockError("the clock was already started")
        self._now_ms = self._check_time(t)
        self._turn = self.start_side
        self._turn_used_ms = 0
        self._run_since_ms = self._now_ms
        self._paused = False

    def press(self, side: chess.Color, t: float) -> PressResult | None:
        """``side`` ends its turn at ``t``; the opponent's clock starts.

        Ignored (returns None) unless ``side``'s clock is running. The turn is charged
        (minus the simple delay); then the period's increment, or Bronstein's
        min(delay, time used), is added, and the next period's time when this move
        completes a period (FIDE: at the press). Sandclock: the time used goes to the
        opponent. A flag that fell during the turn stays recorded (:meth:`flag_fell_at`).
        """
        t_ms = self._advance(t)
        if self._turn != side or self._paused:
            return None
        run_since = self._run_since_ms  # (self._turn_used_at, inline)
        used = self._turn_used_ms + (max(t_ms - run_since, 0) if run_since is not None else 0)
        self._moves[side] += 1
        timed = self.timed
        if timed:
            self._remaining_ms[side] = self._after_turn(side, used)
        self._turn = not side
        self._turn_used_ms = 0
        self._run_since_ms = t_ms
        return named_tuple(PressResult, (self._remaining_ms[side] / 1000 if timed else None,
                                         used / 1000))

    def add_time(self, side: chess.Color, seconds: float, t: float) -> float | None:
        """Add ``seconds`` to ``side``'s clock at ``t`` (FIDE 7.5.5/9.5.3: +2 min, A.3: +1 min
        to the opponent). Negative values take time away (the seed-legacy +5 min to the
        claimant's used time), never below 0. Returns ``side``'s new time, None when untimed."""
        t_ms = self._advance(t)
        if not self.timed:
            return None
        delta = to_ms(seconds)
        if side == self._turn:
            # Keep what this turn has already been charged, so the display moves by delta.
            charged = self._remaining_ms[side] - self._remaining_at(side, t_ms)
            self._remaining_ms[side] = max(self._remaining_ms[side] + delta, charged)
        else:
            self._remaining_ms[side] = max(self._remaining_ms[side] + delta, 0)
        return _seconds(self._remaining_at(side, t_ms))

    def set_times(self, white: float, black: float, t: float) -> None:
        """Show ``white`` and ``black`` seconds at ``t``: the times an external clock
        reported (validated by :class:`ExternalClock`). The turn goes on from there, its
        time used so far (``[%emt]``) unchanged. Makes an untimed clock timed."""
        t_ms = self._advance(t)
        self._external = self.timed = True
        wanted = {chess.WHITE: to_ms(white), chess.BLACK: to_ms(black)}
        runner = self._turn if self.running else None
        used = self._turn_used_at(t_ms)
        if runner is not None and self.tc.sandclock is not None:
            # the sand this turn has moved so far is added back by _remaining_at
            wanted = {runner: wanted[runner] + used, not runner: wanted[not runner] - used}
        elif runner is not None:
            wanted[runner] += max(used - self._simple_delay_ms(runner), 0)
        self._remaining_ms = {side: max(ms, 0) for side, ms in wanted.items()}

    def pause(self, t: float) -> None:
        """Stop both clocks at ``t`` (arbiter, power cut). No-op if not running."""
        t_ms = self._advance(t)
        if not self.running or self._run_since_ms is None:
            return
        self._turn_used_ms += t_ms - self._run_since_ms
        self._run_since_ms = None
        self._paused = True

    def resume(self, t: float) -> None:
        """Restart the side to move's clock at ``t``; the paused time is charged to nobody.

        ``t`` starts a new time base: it is not compared with earlier times, so a clock
        restored after a reboot resumes on the new monotonic clock. No-op if not paused.
        """
        if not self._paused:
            return
        self._now_ms = to_ms(t)
        self._run_since_ms = self._now_ms
        self._paused = False

    def observe(self, t: float) -> None:
        """Note that time has reached ``t``: records a flag fallen by then, and makes
        :attr:`now` (hence a snapshot) reflect ``t`` (a journal heartbeat)."""
        self._advance(t)

    # ------------------------------------------------------------------ persistence

    def snapshot(self) -> dict[str, Any]:
        """The exact state as JSON-safe values (ints, strings, bools, None).

        ``from_snapshot`` of it continues exactly like the uninterrupted clock. After a
        power cut: ``c = ChessClock.from_snapshot(d); c.pause(c.now); c.resume(t_boot)``
        charges nobody for the time from the snapshot's ``now`` to ``t_boot``.
        """
        return {
            "format": SNAPSHOT_FORMAT,
            "time_control": str(self.tc),
            "start_side": SIDE_NAMES[self.start_side],
            "remaining_ms": {SIDE_NAMES[s]: ms for s, ms in self._remaining_ms.items()},
            "moves": {SIDE_NAMES[s]: n for s, n in self._moves.items()},
            "fell_at_ms": {SIDE_NAMES[s]: ms for s, ms in self._fell_at_ms.items()},
            "turn": None if self._turn is None else SIDE_NAMES[self._turn],
            "paused": self._paused,
            "turn_used_ms": self._turn_used_ms,
            "run_since_ms": self._run_since_ms,
            "now_ms": self._now_ms,
            "external": self._external,
        }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> ChessClock:
        """Rebuild a clock from :meth:`snapshot` output. Raises ClockError if malformed."""
        try:
            if data["format"] != SNAPSHOT_FORMAT:
                raise ClockError(
                    f"clock snapshot format {data['format']!r} is not {SNAPSHOT_FORMAT}"
                )
            clock = cls(TimeControl.parse(data["time_control"]), _side_named(data["start_side"]))
            clock._remaining_ms = _per_side(data["remaining_ms"], _whole)
            clock._moves = _per_side(data["moves"], _whole)
            clock._fell_at_ms = _per_side(data["fell_at_ms"], _optional_whole)
            clock._turn = None if data["turn"] is None else _side_named(data["turn"])
            clock._paused = _flag(data["paused"])
            clock._turn_used_ms = _whole(data["turn_used_ms"])
            clock._run_since_ms = _optional_whole(data["run_since_ms"])
            clock._now_ms = _optional_whole(data["now_ms"])
            clock._external = _flag(data.get("external", False))
            clock.timed = clock.tc.is_timed or clock._external
        except KeyError as exc:
            raise ClockError(f"clock snapshot lacks {exc.args[0]!r}") from None
        except (TypeError, TimeControlError) as exc:
            raise ClockError(f"bad clock snapshot: {exc}") from None
        running = clock._turn is not None and not clock._paused
        if running != (clock._run_since_ms is not None):
            raise ClockError("bad clock snapshot: run_since_ms must be set exactly while running")
        return clock

    # ------------------------------------------------------------------ internals

    def _check_time(self, t: float) -> int:
        t_ms = to_ms(t)
        if self._now_ms is not None and t_ms < self._now_ms:
            raise ClockError(f"time went backwards: {t_ms / 1000} s after {self._now_ms / 1000} s")
        return t_ms

    def _advance(self, t: float) -> int:
        """Move ``now`` to ``t``, first recording a flag that fell on the way."""
        t_ms = to_ms(t)  # (self._check_time, inline: every press comes here)
        if self._now_ms is not None and t_ms < self._now_ms:
            self._check_time(t)  # (raises)
        if self.timed:  # (untimed, no flag falls)
            pending = self.flag_time_ms()
            if self._turn is not None and pending is not None and pending <= t_ms:
                if self._fell_at_ms[self._turn] is None:
                    self._fell_at_ms[self._turn] = pending
        self._now_ms = t_ms
        return t_ms

    def _turn_used_at(self, t_ms: int) -> int:
        if self._run_since_ms is None:
            return self._turn_used_ms
        return self._turn_used_ms + max(t_ms - self._run_since_ms, 0)

    def _simple_delay_ms(self, side: chess.Color) -> int:
        if not self.tc.periods:
            return 0
        return to_ms(self.tc.period_for_move(self._moves[side] + 1).simple_delay)

    def _remaining_at(self, side: chess.Color, t_ms: int) -> int:
        stored = self._remaining_ms[side]
        if self._turn is None:
            return stored
        used = self._turn_used_at(t_ms)
        if self.tc.sandclock is not None:
            runner = self._turn
            flowed = min(used, self._remaining_ms[runner])  # sand stops when one bulb is empty
            return stored - flowed if side == runner else stored + flowed
        if side != self._turn:
            return stored
        charged = max(used - self._simple_delay_ms(side), 0)
        return max(stored - charged, 0)

    def flag_time_ms(self) -> int | None:
        """:meth:`flag_time` in whole milliseconds, as kept (for integer deadlines)."""
        if not self.timed or self._run_since_ms is None:
            return None  # (untimed, not started, or paused)
        side = self._turn
        assert side is not None
        available = self._remaining_ms[side] + self._simple_delay_ms(side)
        return self._run_since_ms + available - self._turn_used_ms

    def _after_turn(self, side: chess.Color, used: int) -> int:
        """``side``'s time once its turn of ``used`` ms ends with a press."""
        stored = self._remaining_ms[side]
        if self.tc.sandclock is not None:
            flowed = min(used, stored)
            self._remaining_ms[not side] += flowed
            return stored - flowed
        if not self.tc.periods:  # timed only by an external clock's readings
            return max(stored - used, 0)
        move = self._moves[side]  # already counts this move
        period = self.tc.period_for_move(move)
        charged = max(used - to_ms(period.simple_delay), 0)
        after = max(stored - charged, 0)
        after += to_ms(period.increment) + min(to_ms(period.bronstein_delay), used)
        return after + to_ms(self.tc.seconds_added_after_move(move))


def _side_named(name: Any) -> chess.Color:
    if name not in _SIDES_BY_NAME:
        raise ClockError(f"bad clock snapshot: side {name!r} is not 'white' or 'black'")
    return _SIDES_BY_NAME[name]


def _whole(value: Any) -> int:
    if type(value) is not int:
        raise ClockError(
            f"bad clock snapshot: expected whole milliseconds or a count, got {value!r}"
        )
    return value


def _optional_whole(value: Any) -> int | None:
    return None if value is None else _whole(value)


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise ClockError(f"bad clock snapshot: expected true or false, got {value!r}")
    return value


def _per_side(data: Any, convert: Callable[[Any], _T]) -> dict[chess.Color, _T]:
    if not isinstance(data, Mapping) or set(data) != set(_SIDES_BY_NAME):
        raise ClockError(
            f"bad clock snapshot: expected {{'white': ..., 'black': ...}}, got {data!r}"
        )
    return {side: convert(data[name]) for name, side in _SIDES_BY_NAME.items()}


# ---------------------------------------------------------------------- external clock


@dataclass(frozen=True, slots=True)
class ClockReading:
    """What an external clock (e.g. a DGT 3000) reports: each side's remaining seconds
    as displayed, and which clocks are running."""

    white: float
    black: float
    white_running: bool
    black_running: bool

    def time(self, side: chess.Color) -> float:
        return self.white if side == chess.WHITE else self.black

    @property
    def running_side(self) -> chess.Color | None:
        """The side whose clock runs; None when both are stopped (or, invalidly, both run)."""
        if self.white_running == self.black_running:
            return None
        return chess.WHITE if self.white_running else chess.BLACK


@dataclass(frozen=True, slots=True)
class ReadingCheck:
    """The verdict on one reading.

    ``code``: accepted ``first``, ``ok``, ``resync``; rejected ``invalid``,
    ``both-running``, ``stale``, ``stopped-changed``, ``too-fast``,
    ``gain-without-press``, ``gain-too-large``. ``reason`` says it in words.
    ``last_good`` is the reading to trust after this check (the new one if accepted).
    """

    accepted: bool
    code: str
    reason: str
    last_good: ClockReading | None


class ExternalClock:
    """Trust but validate the times an external clock reports.

    A reading is compared with the last good one and the time ``t`` (seconds, the
    service's monotonic clock) each was received at. Rejected:

    - negative, non-finite or impossibly large times (more than 999:59:59: ``invalid``),
      both clocks running (``both-running``),
      a reading received before the last good one (``stale``);
    - a side's time falling while its clock was stopped in both readings
      (``stopped-changed``), or falling faster than real time: one side by more than the
      elapsed time, or both together by more (``too-fast``; only one clock runs at once);
    - a side's time rising without its press (running -> the opponent running), without
      sandclock flow and without announced added time (``gain-without-press``), or by more
      than its press can add: the period's increment or Bronstein delay plus the next
      period's time when that press completes a period (``gain-too-large``). With no known
      time control (None, ``?``, ``-``) a press may add any amount.

    Every comparison allows ``tolerance`` seconds (display rounding, serial latency).
    ``resync_after`` consecutive rejected readings that are consistent with each other are
    accepted (``resync``): the clock was set by hand, or lever events were missed.
    """

    def __init__(
        self, tc: TimeControl | None = None, tolerance: float = 1.0, resync_after: int = 3
    ) -> None:
        if resync_after < 1:
            raise ValueError(f"resync_after must be at least 1, not {resync_after}")
        self.tc = tc
        self._tolerance_ms = to_ms(tolerance)
        self._resync_after = resync_after
        self._last: tuple[ClockReading, int] | None = None
        self._presses = {chess.WHITE: 0, chess.BLACK: 0}
        self._credit_ms = {chess.WHITE: 0, chess.BLACK: 0}
        self._debit_ms = {chess.WHITE: 0, chess.BLACK: 0}  # time taken away, not yet seen
        self._suspects: list[tuple[ClockReading, int]] = []
        self._started_early_ok = False  # the next reading may show time used before t

    @property
    def last_good(self) -> ClockReading | None:
        return None if self._last is None else self._last[0]

    @property
    def last_good_time(self) -> float | None:
        return None if self._last is None else _seconds(self._last[1])

    def presses(self, side: chess.Color) -> int:
        """Presses seen in accepted readings (running side changing to the opponent)."""
        return self._presses[side]

    def expect_start(self, reading: ClockReading, t: float) -> None:
        """The clock is set to ``reading`` when the game starts at ``t``; the players may
        have started it a little before, so the first reading may show more time used
        than has passed (only its gains are checked)."""
        self._last = (reading, to_ms(t))
        self._started_early_ok = True

    def rebase(self, reading: ClockReading, t: float) -> None:
        """Compare the next reading with ``reading`` at ``t`` (the times the caller kept
        after rejecting one): with readings only at presses, the last good one may be
        several presses old, and which clocks ran since is unknown."""
        self._last = (reading, to_ms(t))

    def forget_last(self) -> None:
        """Judge the next reading as a first one: the link was down (a reconnection, a
        power cut) and the clock may have run, or been set, meanwhile."""
        self._last = None
        self._suspects = []

    def moves_before(self, white: int, black: int) -> None:
        """The moves each side completed before the next reading (its press is not among
        them), when the caller knows better: after :meth:`forget_last` the presses are not
        seen in the readings, and the period a press ends depends on the count."""
        self._presses = {chess.WHITE: white, chess.BLACK: black}

    def allow_added_time(self, side: chess.Color, seconds: float) -> None:
        """Announce time the service added to ``side`` (a penalty set over serial), so the
        jump it causes is accepted; negative: time taken from it (the older Laws' wrong
        claim, 10.13 (2)), so the drop it causes is."""
        ms = to_ms(seconds)
        if ms >= 0:
            self._credit_ms[side] += ms
        else:
            self._debit_ms[side] -= ms

    def check(self, reading: ClockReading, t: float) -> ReadingCheck:
        """Judge ``reading`` received at ``t``; an accepted one becomes the last good."""
        t_ms = to_ms(t)
        malformed = self._malformed(reading)
        if malformed is not None:
            return self._reject(*malformed)
        if self._last is None:
            return self._accept(reading, t_ms, "first", "first reading")
        last, last_t = self._last
        if t_ms < last_t:
            return self._reject(
                "stale",
                f"received at {t_ms / 1000} s, before the last good reading ({last_t / 1000} s)",
            )
        problem = self._jump(last, last_t, reading, t_ms)
        if problem is None:
            return self._accept(reading, t_ms, "ok", "ok")
        # A run of mutually consistent readings means the clock really is there now.
        if self._suspects and self._jump(*self._suspects[-1], reading, t_ms) is None:
            self._suspects.append((reading, t_ms))
        else:
            self._suspects = [(reading, t_ms)]
        if len(self._suspects) >= self._resync_after:
            why = f"resynchronised after {len(self._suspects)} consistent readings ({problem[1]})"
            return self._accept(reading, t_ms, "resync", why)
        return self._reject(*problem)

    # ------------------------------------------------------------------ internals

    def _malformed(self, reading: ClockReading) -> tuple[str, str] | None:
        for side in (chess.WHITE, chess.BLACK):
            value = reading.time(side)
            if not _is_number(value) or value < 0:
                return "invalid", f"{SIDE_NAMES[side]}'s time {value!r} is not a time"
            if value > MAX_CLOCK_SECONDS:  # (and 1e308 s would overflow in milliseconds)
                return "invalid", (f"{SIDE_NAMES[side]}'s time {value!r} s is more than a "
                                   f"clock shows ({MAX_CLOCK_SECONDS} s)")
        if reading.white_running and reading.black_running:
            return "both-running", "both clocks are running"
        return None

    def _press_bonus_ms(self, side: chess.Color) -> int | None:
        """Most time ``side``'s next press can add; None when unknown (unbounded)."""
        if self.tc is None or not self.tc.is_timed:
            return None
        if not self.tc.periods:  # sandclock: a press adds nothing to the presser
            return 0
        move = self._presses[side] + 1
        period = self.tc.period_for_move(move)
        next_period = self.tc.seconds_added_after_move(move)
        return to_ms(period.increment + period.bronstein_delay + next_period)

    def _jump(
        self, last: ClockReading, last_t: int, new: ClockReading, t_ms: int
    ) -> tuple[str, str] | None:
        tolerance = self._tolerance_ms
        elapsed = t_ms - last_t
        change = {s: to_ms(new.time(s)) - to_ms(last.time(s)) for s in (chess.WHITE, chess.BLACK)}
        # (time taken away by the arbiter is no time used: set aside first)
        loss = {s: max(-change[s] - self._debit_ms[s], 0) for s in change}
        for side in (chess.WHITE, chess.BLACK):
            name = SIDE_NAMES[side]
            could_run = side in (last.running_side, new.running_side)
            if self._started_early_ok and side == last.running_side:
                continue  # (its clock may have been started before the game)
            if loss[side] > tolerance and not could_run:
                fell = loss[side] / 1000
                return "stopped-changed", f"{name}'s clock was stopped but its time fell {fell} s"
            if loss[side] > elapsed + tolerance:
                return "too-fast", f"{name}'s time fell {loss[side] / 1000} s in {elapsed / 1000} s"
        early = self._started_early_ok
        if loss[chess.WHITE] + loss[chess.BLACK] > elapsed + tolerance and not early:
            return "too-fast", (
                f"both times fell ({loss[chess.WHITE] / 1000} s + {loss[chess.BLACK] / 1000} s) in "
                f"{elapsed / 1000} s: only one clock runs at a time"
            )
        for side in (chess.WHITE, chess.BLACK):
            gain = change[side]
            if gain <= tolerance:
                continue
            name = SIDE_NAMES[side]
            pressed = last.running_side == side and new.running_side == (not side)
            allowed = self._credit_ms[side]
            if self.tc is not None and self.tc.sandclock is not None:
                allowed += loss[not side]  # the sand the opponent used flows here
            if pressed:
                bonus = self._press_bonus_ms(side)
                if bonus is None:
                    continue
                allowed += bonus
            if gain <= allowed + tolerance:
                continue
            if allowed == 0:
                why = f"{name}'s time rose {gain / 1000} s without a press, increment or penalty"
                return "gain-without-press", why
            why = f"{name}'s time rose {gain / 1000} s; at most {allowed / 1000} s was possible"
            return "gain-too-large", why
        return None

    def _accept(self, reading: ClockReading, t_ms: int, code: str, reason: str) -> ReadingCheck:
        if self._last is not None:
            last = self._last[0]
            for side in (chess.WHITE, chess.BLACK):
                gain = to_ms(reading.time(side)) - to_ms(last.time(side))
                if last.running_side == side and reading.running_side == (not side):
                    bonus = self._press_bonus_ms(side) or 0
                    gain -= bonus
                    self._presses[side] += 1
                self._credit_ms[side] = max(self._credit_ms[side] - max(gain, 0), 0)
                if self._debit_ms[side]:  # (a drop beyond what its run can explain: taken)
                    ran = t_ms - self._last[1] if side in (last.running_side,
                                                             reading.running_side) else 0
                    self._debit_ms[side] = max(self._debit_ms[side] - max(-gain - ran, 0), 0)
        self._last = (reading, t_ms)
        self._suspects = []
        self._started_early_ok = False
        return ReadingCheck(True, code, reason, reading)

    def _reject(self, code: str, reason: str) -> ReadingCheck:
        return ReadingCheck(False, code, reason, self.last_good)


# ---------------------------------------------------------------------- flag fall


def flag_result(board: chess.Board, flagged_side: chess.Color) -> tuple[str, str]:
    """(result, termination) when ``flagged_side``'s flag falls: a loss, or a draw when
    the opponent cannot mate by any legal series of moves (FIDE 6.9; python-chess's
    ``has_insufficient_material``, which is never true while that side can still mate)."""
    if board.has_insufficient_material(not flagged_side):
        return "1/2-1/2", "time-forfeit"
    return ("0-1" if flagged_side == chess.WHITE else "1-0"), "time-forfeit"
