"""Time inside the core: whole microseconds.

Events and effects carry ``t`` in seconds (a float, as the sensor log writes it); the
referee turns each event's time into an integer number of microseconds once, at its
entry, and every deadline inside the core (debounce, the press grace, the mismatch
delay, the game-end hold, flags) is integer arithmetic compared exactly. Floats are
never added to deadlines: at Unix-epoch magnitudes ``(t + 0.1) - t`` is not 0.1, and a
timer compared that way can be due and never fire.

A time whose magnitude exceeds ``MAX_SECONDS`` (about 31,700 years), or that is not a
finite number, is refused with :class:`TimeRangeError`: no game lasts that long, and
every core time then fits a signed 64-bit count of microseconds.
"""

from __future__ import annotations

from board_ctl.errors import BoardCtlError

US_PER_S = 1_000_000
MAX_SECONDS = 10**12
MAX_US = MAX_SECONDS * US_PER_S
NEVER = -(1 << 62)  # before any time the core accepts
FOREVER = 1 << 62  # after any time the core accepts


class TimeRangeError(BoardCtlError, ValueError):
    """A time the core cannot represent: not a finite number, or beyond MAX_SECONDS."""


def to_us(t: float) -> int:
    """Seconds -> whole microseconds (rounded to nearest), or TimeRangeError.

    A log's 6-decimal time comes out exact up to 2^32 s (Unix time in 2106); beyond, a
    float itself no longer resolves a microsecond, and its own value is taken."""
    try:
        if -MAX_SECONDS <= t <= MAX_SECONDS:  # False for NaN; exact for ints of any size
            return round(t * US_PER_S)
    except TypeError:
        pass
    raise TimeRangeError(
        f"a time must be a finite number of seconds within ±{MAX_SECONDS:.0e}, not {t!r}")


def seconds(us: int) -> float:
    """Microseconds -> seconds: the float nearest the exact value (so a log's 6-decimal
    times come back as the very floats they were read as)."""
    return us / US_PER_S


def us(seconds_: float) -> int:
    """A duration constant in seconds -> microseconds (for module constants)."""
    return round(seconds_ * US_PER_S)
