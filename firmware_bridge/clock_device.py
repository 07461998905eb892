"""An emulated external chess clock (a DGT 3000-style clock in Fischer mode), for the
board emulator: it keeps its own time from the lever presses and shows whole seconds.

Deliberately independent of board_ctl.core.clock: it is the device the service
validates, so it must not share the service's arithmetic.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from board_ctl.core import events as ev

_FISCHER = re.compile(r"(\d+)(?:\+(\d+))?")


class ClockDevice:
    """Both sides start with ``base`` seconds; the side to move's time runs; a press by
    the running side stops it, adds ``increment`` and starts the other side's.
    A press by the other side does nothing (its lever is already down)."""

    def __init__(self, base: float, increment: float = 0.0, white_first: bool = True) -> None:
        self.times = {True: float(base), False: float(base)}
        self.increment = float(increment)
        self.running = white_first
        self.since = 0.0  # the running side's time counts from here

    @classmethod
    def parse(cls, text: str) -> ClockDevice:
        """``BASE`` or ``BASE+INCREMENT`` in seconds (the clock's Fischer setting)."""
        match = _FISCHER.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"an external clock is set as BASE or BASE+INCREMENT seconds, "
                             f"not {text!r}")
        return cls(int(match.group(1)), int(match.group(2) or 0))

    def press(self, white: bool, t: float) -> tuple[float, float]:
        """The lever of ``white`` (True) or black goes down at ``t``; returns the display."""
        if white == self.running:
            used = t - self.since
            self.times[white] = max(self.times[white] - used, 0.0) + self.increment
            self.running = not white
            self.since = t
        return self.display(t)

    def display(self, t: float) -> tuple[float, float]:
        """(white, black) as shown at ``t``: whole seconds, cut down, never below 0."""
        shown = dict(self.times)
        shown[self.running] = max(shown[self.running] - (t - self.since), 0.0)
        return float(int(shown[True])), float(int(shown[False]))


def with_clock_times(events: Iterable[ev.Event], clock: ClockDevice) -> Iterator[ev.Event]:
    """The events as a board wired to ``clock`` reports them: each press carries the
    times the clock shows after it."""
    for event in events:
        if isinstance(event, ev.ClockPressed):
            event = dataclasses.replace(event, times=clock.press(event.side, event.t))
        yield event
