"""Which sensors are failing, judged on what the debounced sensor does, never on how
often its contacts bounce.

A reed switch bounces several times on every change (0-10 extra pairs of toggles, a
fraction of a millisecond to a few ms apart); that is what debounce is for, and however
many toggles a change makes, it settles once. A failing switch does one of two things:

- it chatters: it keeps toggling without ever holding a state for the settle time, for
  far longer than any bounce or slide blip lasts (CHATTER_SPAN, with at least
  CHATTER_TOGGLES toggles in that unbroken stretch);
- it flickers: its *settled* state flips back and forth more often than hands move a
  piece (FLICKER_CHANGES settled changes within FLICKER_WINDOW), changes that no move
  made accounts for (a move's squares start afresh when it is made: `explained`).

Times are the core's whole microseconds.
"""

from __future__ import annotations

import chess

from board_ctl.core.debounce import DEFAULT_SETTLE_US
from board_ctl.core.timebase import us
from board_ctl.words import count

CHATTER_SPAN = 0.5  # s of unbroken toggling (never still for the settle time)
CHATTER_TOGGLES = 24  # toggles at least, in that stretch
FLICKER_CHANGES = 8  # settled changes of one square (four lift-and-place cycles) ...
FLICKER_WINDOW = 3.0  # ... within this many seconds: no hand moves a piece so


class SensorHealth:
    """Feed it every raw toggle and every settled change; it names the squares whose
    sensor should no longer be believed, with the reason."""

    def __init__(self, settle: int = DEFAULT_SETTLE_US) -> None:
        self.settle = settle
        self.span = us(CHATTER_SPAN)
        self.window = us(FLICKER_WINDOW)
        # square -> [first toggle of the unbroken stretch, latest toggle, toggles in it]
        self._stretch: dict[chess.Square, list[int]] = {}
        self._settled: dict[chess.Square, list[int]] = {}  # its settled changes' times

    def toggled(self, t: int, square: chess.Square) -> str | None:
        """A raw toggle: the reason the sensor is failing, or None."""
        stretch = self._stretch.get(square)
        if stretch is None:
            self._stretch[square] = [t, t, 1]
            return None
        if t - stretch[1] >= self.settle:  # it had held still: anew
            stretch[0] = stretch[1] = t
            stretch[2] = 1
            return None
        stretch[1] = t
        stretch[2] += 1
        if stretch[2] >= CHATTER_TOGGLES and t - stretch[0] >= self.span:
            seconds = (t - stretch[0]) / 1_000_000
            return (f"kept switching ({count(stretch[2], 'time')} in {seconds:.1f} s "
                    "without holding still)")
        return None

    def settled(self, t: int, square: chess.Square) -> str | None:
        """A settled change: the reason the sensor is failing, or None."""
        times = self._settled.get(square)
        if times is None:  # (the common case: a move's squares start afresh, `explained`)
            self._settled[square] = [t]
            return None
        times.append(t)
        if len(times) < FLICKER_CHANGES:
            return None  # (too few, however close: the old ones are dropped when they count)
        window = t - self.window  # (times ascend: those before it never count again)
        while times[0] < window:
            del times[0]
        if len(times) >= FLICKER_CHANGES:
            return (f"changed {count(len(times), 'time')} in {FLICKER_WINDOW:.0f} s with "
                    "no piece moved so fast")
        return None

    def explained(self, squares: chess.Bitboard) -> None:
        """A move accounts for the changes these squares made so far: they are no
        evidence against their sensors (a blitz exchange changes one square many times
        in a few seconds; only what no move explains counts as flicker)."""
        settled = self._settled
        if settled:
            for square in chess.scan_forward(squares):
                settled.pop(square, None)

    def forget(self, square: chess.Square) -> None:
        """The square is no longer watched (found faulty)."""
        self._stretch.pop(square, None)
        self._settled.pop(square, None)
