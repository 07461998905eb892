"""Per-square debounce: a raw change counts once the square has held it for `settle` us.

Contact bounce (toggles a few ms apart) and the blips of squares a slid piece passes over
(occupied for tens of ms) never reach the settled state. A real change reaches it
`settle` after its last raw toggle, which is the only delay debounce adds.

Times are whole microseconds (board_ctl.core.timebase): a deadline is due exactly when
`now >= toggle + settle`, with no rounding at any magnitude.
"""

from __future__ import annotations

from typing import NamedTuple

import chess

from board_ctl.core.squares import named_tuple

DEFAULT_SETTLE_US = 100_000  # slide blips last 'tens of ms'; ~100 ms is the most a move may wait
DEFAULT_SETTLE = DEFAULT_SETTLE_US / 1_000_000  # the same, in seconds


class SettledChange(NamedTuple):
    t: int  # us: when the square took its final raw state (not when it settled)
    square: chess.Square
    occupied: bool



class Debouncer:
    def __init__(self, occupied: chess.Bitboard, settle: int = DEFAULT_SETTLE_US) -> None:
        if type(settle) is not int or settle < 0:
            raise ValueError(f"settle must be whole microseconds >= 0, not {settle!r}")
        self.settle = settle
        self.raw = occupied
        self.settled = occupied
        self._since: dict[chess.Square, int] = {}  # square -> time of its last raw toggle
        self.deadline: int | None = None  # when the earliest pending change settles

    def toggle(self, t: int, square: chess.Square, occupied: bool) -> bool:
        """Record a raw transition; True when it undid a change still settling (a bounce
        back, a blip's end). A repeated report of the state it already has is ignored."""
        bit = chess.BB_SQUARES[square]
        if (not self.raw & bit) is not occupied:  # (it has that state already)
            return False
        self.raw ^= bit
        since = self._since
        if (not self.settled & bit) is not occupied:  # (back to the settled state)
            if since.pop(square, None) is not None:  # a bounce back: nothing pending there
                self._new_deadline()
                return True
        else:
            since[square] = t
            due = t + self.settle
            if self.deadline is None or due < self.deadline:
                self.deadline = due
        return False

    def _new_deadline(self) -> None:
        since = self._since
        self.deadline = min(since.values()) + self.settle if since else None

    @property
    def pending(self) -> bool:
        return bool(self._since)

    # A square is pending exactly where the raw reading differs from the settled one.

    @property
    def placing(self) -> bool:
        """A placement is still settling (it may yet prove a slide's blip)."""
        return bool(self.raw & ~self.settled)

    @property
    def lifting(self) -> chess.Bitboard:
        """Squares going empty, still settling."""
        return self.settled & ~self.raw

    @property
    def steady(self) -> chess.Bitboard:
        """Squares settled occupied with no change pending."""
        return self.settled & self.raw

    def next_deadline(self) -> int | None:
        return self.deadline

    def advance(self, now: int) -> list[SettledChange]:
        """The changes that have held for `settle` by `now`, oldest first."""
        last = now - self.settle
        since = self._since
        if len(since) == 1:  # (the common case: one change settling, done inline)
            for square, t in since.items():
                if t > last:
                    return []
                since.clear()
                self.deadline = None
                bit = chess.BB_SQUARES[square]
                self.settled ^= bit
                return [named_tuple(SettledChange, (t, square, bool(self.settled & bit)))]
        due = sorted((t, sq) for sq, t in since.items() if t <= last)
        return [self._settle(sq, t) for t, sq in due]

    def flush(self) -> list[SettledChange]:
        """Settle every pending change now (the hand has left the board: a clock press)."""
        due = sorted((t, sq) for sq, t in self._since.items())
        return [self._settle(sq, t) for t, sq in due]

    def reset(self, occupied: chess.Bitboard) -> list[SettledChange]:
        """Take a full scan as the truth; returns the settled squares it changed."""
        changed = occupied ^ self.settled
        self.raw = self.settled = occupied
        self._since.clear()
        self.deadline = None
        return [
            SettledChange(0, sq, bool(occupied & chess.BB_SQUARES[sq]))
            for sq in chess.scan_forward(changed)
        ]

    def _settle(self, square: chess.Square, t: int) -> SettledChange:
        del self._since[square]
        self._new_deadline()
        bit = chess.BB_SQUARES[square]
        self.settled ^= bit
        return SettledChange(t, square, bool(self.settled & bit))
