"""The game's clock as the referee uses it: the lever clock the board keeps (ChessClock,
whole milliseconds) and, when the board reads an external clock, the validation of the
times it reports with each press (ExternalClock), in the core's whole microseconds.

FIDE 6: the clock goes over at the press that completes a move; 7.5.5 and 9.5.3: time
added to the opponent of a player who broke a rule (and announced to the validator, since
the arbiter sets it on an external clock by hand).
"""

from __future__ import annotations

from typing import NamedTuple

import chess

from board_ctl.core.clock import ChessClock, ClockReading, ExternalClock, PressResult
from board_ctl.core.rules import Finding
from board_ctl.core.squares import named_tuple
from board_ctl.core.timebase import seconds
from board_ctl.core.timecontrol import TimeControl



def reading_running(mover: chess.Color) -> tuple[bool, bool]:
    """(white running, black running) just after ``mover`` pressed."""
    return mover == chess.BLACK, mover == chess.WHITE


class Switched(NamedTuple):
    """The clock went over for a completed move. (A named tuple: one per move.)"""

    result: PressResult | None  # the mover's time after it ([%clk]) and the move's time
    fault: Finding | None = None  # the external clock's times were rejected
    trusted: bool = False  # the external clock's times were accepted


class GameClock:
    def __init__(self, time_control: TimeControl | None, start_side: chess.Color) -> None:
        # The game (and the clock of the side to move) starts at t = 0. Untimed games
        # still measure each move's time.
        self.lever = ChessClock(time_control, start_side=start_side)
        self.lever.start(0.0)
        # An external clock reports its own times with each press: trusted when plausible.
        self.external = ExternalClock(time_control)
        if time_control is not None and time_control.is_timed:
            initial = float(time_control.initial_seconds or 0)
            white_first = start_side == chess.WHITE
            self.external.expect_start(
                ClockReading(initial, initial, white_first, not white_first), 0.0)

    @property
    def now(self) -> int:
        """The latest time the clock was given, in us (0 before any)."""
        ms = self.lever.now_ms
        return 0 if ms is None else ms * 1000

    @property
    def running_side(self) -> chess.Color | None:
        return self.lever.turn

    def flag_deadline(self) -> int | None:
        """When the side to move's flag falls, in us (None untimed)."""
        ms = self.lever.flag_time_ms()  # (None untimed: a time control, or times reported)
        return None if ms is None else ms * 1000

    def switch(self, mover: chess.Color, at: int,
               reported: tuple[int, tuple[float, float]] | None) -> Switched:
        """`mover`'s move completed, the clock going over at `at`; `reported`: the time
        of the press and the times an external clock showed after it, if any. Its times
        replace what the lever clock computed when they are plausible."""
        at_s = at / 1_000_000  # (seconds(at): the lever clock takes seconds and keeps
        lever = self.lever  # whole ms, exact)
        pressed = lever.press(mover, at_s)
        if pressed is None or reported is None:
            return named_tuple(Switched, (pressed, None, False))  # (Switched(pressed))
        when, (white, black) = reported
        reading = ClockReading(white, black, *reading_running(mover))
        # the moves made before this press, which the validator cannot count across a
        # reconnection, decide the period (and so the time this press may add)
        self.external.moves_before(lever.moves_made(chess.WHITE) - (mover == chess.WHITE),
                                   lever.moves_made(chess.BLACK) - (mover == chess.BLACK))
        check = self.external.check(reading, seconds(when))
        if not check.accepted:
            own = (lever.remaining(chess.WHITE, at_s), lever.remaining(chess.BLACK, at_s))
            if own[0] is not None and own[1] is not None:  # the next is judged against these
                self.external.rebase(ClockReading(own[0], own[1], *reading_running(mover)),
                                     seconds(when))
            return Switched(pressed, fault=Finding(
                "clock-fault", None, (), f"the clock's times were not used ({check.reason}); "
                "the board keeps its own: check the clock"))
        lever.set_times(white, black, at_s)
        return Switched(PressResult(reading.time(mover), pressed.elapsed), trusted=True)

    def add_penalty(self, to_side: chess.Color, added: int, t: int) -> None:
        """`added` seconds to `to_side` (7.5.5, 9.5.3), set on an external clock by hand."""
        self.external.allow_added_time(to_side, added)
        self.lever.add_time(to_side, added, seconds(max(t, self.now)))

    def out_of_time(self, side: chess.Color, t: int) -> bool:
        """Whether `side` has no time left at `t` (never, untimed)."""
        return self.lever.remaining(side, seconds(max(t, self.now))) == 0

    def set_by_arbiter(self, white: float, black: float, t: int) -> None:
        """Both clocks show these times from `t` (FIDE 6.10); an external clock's next
        reading is taken as it is, since the arbiter set that clock too."""
        self.lever.set_times(white, black, seconds(max(t, self.now)))
        self.external.forget_last()

    def reconnected(self) -> None:
        """The link was down: an external clock may have run on, or been set, meanwhile."""
        self.external.forget_last()
