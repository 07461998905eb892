"""Firing the referee's timers in time order, with no way to spin.

Each firing must make progress: the timer that fired is no longer due at that moment.
One that still is (a bug) is not fired again: in debug mode it raises TimerStall;
otherwise it is logged and left out until the next event while the other timers go on.
At most MAX_FIRINGS fire per call: a settle per square, and the handful of others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from board_ctl.core.timebase import seconds
from board_ctl.errors import BoardCtlError

log = logging.getLogger(__name__)

MAX_FIRINGS = 64 + 8
Timer = tuple[int, Callable[[int], None]]  # (deadline in us, what fires then)


class TimerStall(BoardCtlError, RuntimeError):
    """A timer fired and left itself due at the same moment (a bug)."""


def fire_due(t: int, armed: Callable[[], list[Timer]], at: Callable[[int], None],
             debug: bool = False, after: Callable[[int], None] | None = None) -> int:
    """Fire every timer `armed()` lists as due by `t`, earliest first, asking again after
    each firing (a firing arms and disarms others); `at(when)` is told the time before
    each, `after(when)` after each. Returns how many fired."""
    fired: set[tuple[int, object]] = set()
    stalled: set[tuple[int, object]] = set()
    while len(fired) < MAX_FIRINGS:
        earliest: tuple[int, Callable[[int], None], tuple[int, object]] | None = None
        for when, fire in armed():
            if when > t or (earliest is not None and when >= earliest[0]):
                continue
            key = (when, getattr(fire, "__func__", fire))
            if key in fired:  # fired at this very moment, and due again
                if key not in stalled:
                    stalled.add(key)
                    _stall(when, fire, debug)
                continue
            earliest = (when, fire, key)
        if earliest is None:
            return len(fired)
        when, fire, key = earliest
        fired.add(key)
        at(when)
        fire(when)
        if after is not None:
            after(when)
    _stall(t, fire_due, debug)
    return len(fired)


def _stall(when: int, fire: Callable[..., object], debug: bool) -> None:
    name = getattr(fire, "__name__", repr(fire))
    message = (f"timer {name} due at {seconds(when)} s made no progress: left out until "
               "the next event")
    if debug:
        raise TimerStall(message)
    log.error("%s", message)
