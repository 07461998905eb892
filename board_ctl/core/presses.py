"""A clock press and when it is judged (FIDE 6.2: the press completes the move on the board).

A press is judged at once when the board has settled with the move's piece down. It is
judged CLOCK_GRACE later when a square toggled within PRESS_SKEW of it (a slide's blip, a
bounce, the last placement skewed behind the press), when a piece is still in hand, or
when the move is a promotion (its selector may follow the press); and sooner, as soon as
the opponent lifts one of his pieces that stood still through the press: a fast reply is
never taken for part of the pressed move.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from board_ctl.core.debounce import Debouncer
from board_ctl.core.gameclock import Switched
from board_ctl.core.timebase import NEVER, us

CLOCK_GRACE = 0.3  # s after a press for a placement skewed behind it (6.2.4), or the selector
PRESS_SKEW = 0.05  # s: a toggle this close to a press may belong to a move still landing
CLOCK_GRACE_US, PRESS_SKEW_US = us(CLOCK_GRACE), us(PRESS_SKEW)


@dataclass(slots=True)
class Press:
    """The press completing the mover's move, from the press until the move is pushed."""

    at: int | None = None  # when it was pressed (None: no press completing a move)
    reported: tuple[int, tuple[float, float]] | None = None  # an external clock's times then
    decision: int | None = None  # when a deferred press is judged
    waiting: chess.Bitboard = 0  # the opponent's pieces that stood still at the press
    switched: Switched | None = None  # the clock, already switched (an unseen capture)
    last_raw: int = NEVER  # the latest sensor toggle

    def press(self, t: int, times: tuple[float, float] | None) -> None:
        self.at = t
        self.reported = None if times is None else (t, times)

    def unsettled(self, t: int, debouncer: Debouncer) -> bool:
        """A square toggled just now, or a placement is still settling (perhaps a blip)."""
        return t - self.last_raw < PRESS_SKEW_US or debouncer.placing

    def defer(self, t: int, board: chess.Board, occupied: chess.Bitboard,
              debouncer: Debouncer) -> None:
        """Judge it CLOCK_GRACE later, or when the opponent lifts a piece that stands still
        now (not one a piece in hand may yet take: that lift would be the mover's)."""
        self.decision = t + CLOCK_GRACE_US
        in_hand = board.occupied_co[board.turn] & ~(occupied & debouncer.raw)
        victims = 0
        for move in board.generate_legal_captures(in_hand):
            victims |= chess.BB_SQUARES[move.to_square]
            if board.is_en_passant(move):
                victims |= chess.BB_SQUARES[move.to_square ^ 8]  # the pawn passed by
        self.waiting = debouncer.steady & board.occupied_co[not board.turn] & ~victims

    def reply_lifts(self, square: chess.Square) -> bool:
        """The opponent lifts a piece that stood still through a deferred press."""
        return self.decision is not None and bool(self.waiting & chess.BB_SQUARES[square])

    def forget(self) -> None:
        """The press completes nothing (an illegal attempt, a press without a move)."""
        self.at = self.reported = None
