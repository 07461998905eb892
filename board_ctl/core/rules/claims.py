"""FIDE 9 and 5.2.3: draws the players ask for. An offer is made after one's move, before
the press (9.1.2.1) and recorded then; it stands until accepted or declined by moving.
Agreement needs a move by each side (5.2.3). A claim of threefold repetition or of the
fifty-move rule may only be made by the player having the move (9.2, 9.3), before he
touches a piece other than that of the move he declares (9.4); the move may be declared
by making it on the board without pressing (9.2.1). A wrong claim gives the opponent
time (9.5.3: 2 minutes, 1 in rapid and blitz); in `casual` those draws are automatic.
"""

from __future__ import annotations

import chess

from board_ctl.core.rules import Action, AddTime, Clear, Finding, Record
from board_ctl.core.squares import NAMES


def claimable(board: chess.Board, move: chess.Move | None = None) -> str | None:
    """The claimable draw on `board` (after `move`, if given): its termination or None."""
    if move is not None:
        board.push(move)
    try:
        if board.is_repetition(3):
            return "threefold-repetition"
        if board.is_fifty_moves():
            return "fifty-moves"
        return None
    finally:
        if move is not None:
            board.pop()


class Draws:
    def __init__(self, penalty_seconds: int) -> None:
        self.penalty_seconds = penalty_seconds
        self.offer: chess.Color | None = None  # the side whose offer stands
        self.offer_pending: int | None = None  # made with his move on the board, unpressed
        self.claim_pending: int | None = None  # a claim waiting for the move it declares

    def offered(self, side: chess.Color, t: int, with_move_on_board: bool) -> list[Action]:
        """`side` offers a draw: recorded now, or with the move it was made after."""
        self.offer = side
        if with_move_on_board:
            self.offer_pending = t  # made after the move, before the press (9.1.2.1)
            return []
        return [Record(f"{NAMES[side]} offers a draw (=)")]

    def moved(self, mover: chess.Color) -> tuple[int, str] | None:
        """`mover` completed a move: an offer made with it is recorded now ((t, note)); the
        opponent's offer is declined by moving."""
        note = None
        if self.offer_pending is not None and self.offer == mover:
            note = (self.offer_pending, f"{NAMES[mover]} offers a draw (=)")
        self.offer_pending = None
        if self.offer is not None and self.offer != mover:
            self.offer = None
        return note

    def can_accept(self, side: chess.Color) -> bool:
        return self.offer is not None and self.offer != side

    @staticmethod
    def refused_agreement(board: chess.Board) -> str | None:
        """5.2.3: each side must have moved."""
        if len(board.move_stack) < 2:
            return "draw agreement refused: each side must have moved (FIDE 5.2.3)"
        return None

    @staticmethod
    def void(side: chess.Color, board: chess.Board, touched: list[tuple[int, chess.Square]],
             declared_from: chess.Bitboard) -> str | None:
        """Why `side`'s claim is void before it is judged (9.2, 9.3, 9.4), or None."""
        if side != board.turn:
            return (f"{NAMES[side]}'s draw claim ignored: only the player having the move "
                    "may claim (FIDE 9.2, 9.3)")
        if any(not declared_from & chess.BB_SQUARES[sq] for _, sq in touched):
            return f"{NAMES[side]}'s draw claim void: a piece was touched first (FIDE 9.4)"
        return None

    def wrong(self, side: chess.Color) -> list[Action]:
        """A wrong claim (9.5.3): the alert (shown, then cleared: the game goes on) and
        the opponent's time."""
        actions: list[Action] = [
            Finding("wrong-claim", side, (), f"{NAMES[side]} claimed a draw that the position "
                    "does not allow; the game goes on (FIDE 9.5.3)"),
            Clear("wrong-claim")]
        if self.penalty_seconds:
            actions += [AddTime(not side, self.penalty_seconds, f"wrong claim by {NAMES[side]}"),
                        Record(f"wrong draw claim by {NAMES[side]}: "
                               f"+{self.penalty_seconds // 60} min to {NAMES[not side]}")]
        return actions
