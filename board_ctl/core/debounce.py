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

    def toggle(self, t: int, square: chess.Square, occupied: bool) -> None:
        """Record a raw transition. A repeated report of the state it already has is ignored."""
        bit = chess.BB_SQUARES[square]
        if bool(self.raw & bit) == occupied:
            return
        self.raw ^= bit
        if bool(self.settled & bit) == occupied:
            self._since.pop(square, None)  # a bounce back to the settled state: nothing pending
        else:
            self._since[square] = t

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
        return min(self._since.values()) + self.settle if self._since else None

    def advance(self, now: int) -> list[SettledChange]:
        """The changes that have held for `settle` by `now`, oldest first."""
        last = now - self.settle
        if len(self._since) == 1:  # (the common case: one change settling)
            for square, t in self._since.items():
                return [self._settle(square, t)] if t <= last else []
        due = sorted((t, sq) for sq, t in self._since.items() if t <= last)
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
        return [
            SettledChange(0, sq, bool(occupied & chess.BB_SQUARES[sq]))
            for sq in chess.scan_forward(changed)
        ]

    def _settle(self, square: chess.Square, t: int) -> SettledChange:
        del self._since[square]
        self.settled ^= chess.BB_SQUARES[square]
        return SettledChange(t, square, bool(self.settled & chess.BB_SQUARES[square]))
