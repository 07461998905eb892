"""FIDE 9 and 5.2.3: draws the players ask for. An offer is made after one's move, before
the press (9.1.2.1) and recorded then; it stands until accepted or declined by moving.
Agreement needs a move by each side (5.2.3). A claim of threefold repetition or of the
fifty-move rule may only be made by the player having the move (9.2, 9.3), before he
touches a piece other than that of the move he declares (9.4); the move may be declared
by making it on the board without pressing (9.2.1). A wrong claim gives the opponent
time (9.5.3: 2 minutes, 1 in rapid and blitz); in `casual` those draws are automatic.

Under the older Laws of the seed handbooks (`classic`): a wrong claim adds 5 minutes to the
claimant's used time and loses if that passes his limit (10.13 (2)), and the move he
declared binds him; perpetual check is a ground for a claim (`perpetual.py`); an offer is
made only on one's own turn (10.7, 10.8) and not again after one's offer was declined
until the opponent has offered (000, "提議和棋"); no move is needed before an agreement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from board_ctl.core.profiles import Profile
from board_ctl.core.rules import Action, AddTime, Clear, Finding, Record
from board_ctl.core.rules.perpetual import perpetual_check
from board_ctl.core.squares import NAMES

if TYPE_CHECKING:
    from board_ctl.core.turn import Match


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
    def __init__(self, penalty_seconds: int, *, claimant_seconds: int = 0,
                 perpetual: bool = False, offers_checked: bool = False,
                 agreement_needs_moves: bool = True, declared_binds: bool = False) -> None:
        self.penalty_seconds = penalty_seconds
        # The older Laws (the `classic` profile, rules.md): a wrong claim costs the claimant
        # time instead (10.13 (2)); perpetual check is a ground for a claim; offers are
        # checked for their timing and repetition (10.7-10.8); no 5.2.3; the claimant must
        # play the move he declared (10.13 (2)).
        self.claimant_seconds = claimant_seconds
        self.perpetual = perpetual
        self.offers_checked = offers_checked
        self.agreement_needs_moves = agreement_needs_moves
        self.declared_binds = declared_binds
        self.offer: chess.Color | None = None  # the side whose offer stands
        self.offer_pending: int | None = None  # made with his move on the board, unpressed
        self.claim_pending: int | None = None  # a claim waiting for the move it declares
        self.refused: set[chess.Color] = set()  # sides whose last offer was declined
        self.declared: list[chess.Move] = []  # a wrong claimant's move, still to play
        self.undecided = False  # the last claim judged: perpetual check left open

    @classmethod
    def for_profile(cls, profile: Profile) -> Draws:
        return cls(profile.penalty_seconds, claimant_seconds=profile.claimant_penalty_seconds,
                   perpetual=profile.perpetual_check, offers_checked=profile.offers_checked,
                   agreement_needs_moves=profile.agreement_needs_moves,
                   declared_binds=profile.declared_move_binds)

    def offered(self, side: chess.Color, t: int, with_move_on_board: bool,
                to_move: chess.Color | None = None) -> list[Action]:
        """`side` offers a draw: recorded now, or with the move it was made after. Where
        offers are checked (`to_move`: the side having the move), one made on the
        opponent's time, or again after one's own was declined, is refused."""
        if self.offers_checked and to_move is not None:
            refusal = self._refusal(side, to_move)
            if refusal is not None:
                return [refusal, Clear(refusal.code)]
            self.refused.discard(not side)  # the opponent may offer again
        self.offer = side
        if with_move_on_board:
            self.offer_pending = t  # made after the move, before the press (9.1.2.1)
            return []
        return [Record(f"{NAMES[side]} offers a draw (=)")]

    def _refusal(self, side: chess.Color, to_move: chess.Color) -> Finding | None:
        if side != to_move:
            return Finding("offer-out-of-turn", side, (), f"{NAMES[side]}'s draw offer refused: "
                           "an offer is made on one's own turn, just after one's move and "
                           "before pressing the clock (10.7)")
        if side in self.refused:
            return Finding("offer-repeated", side, (), f"{NAMES[side]}'s draw offer refused: "
                           f"his last offer was declined, and {NAMES[not side]} has not "
                           "offered since (no repeated offers)")
        return None

    def moved(self, mover: chess.Color) -> tuple[int, str] | None:
        """`mover` completed a move: an offer made with it is recorded now ((t, note)); the
        opponent's offer is declined by moving."""
        note = None
        if self.offer_pending is not None and self.offer == mover:
            note = (self.offer_pending, f"{NAMES[mover]} offers a draw (=)")
        self.offer_pending = None
        if self.offer is not None and self.offer != mover:
            self.refused.add(self.offer)
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

    def agreement_refused(self, board: chess.Board) -> str | None:
        """Why an agreement cannot end the game now (5.2.3, where it applies), or None."""
        return self.refused_agreement(board) if self.agreement_needs_moves else None

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

    def claimable(self, board: chess.Board, move: chess.Move | None = None) -> str | None:
        """The draw a claim on `board` (after `move`, if given) is right about: its
        termination, or None; perpetual check too where it is a ground (`undecided` then
        says whether its search was left open)."""
        self.undecided = False
        draw = claimable(board, move)
        if draw is not None or not self.perpetual:
            return draw
        if move is not None:
            board.push(move)
        try:
            proven = perpetual_check(board)
        finally:
            if move is not None:
                board.pop()
        self.undecided = proven is None
        return "perpetual-check" if proven else None

    def wrong(self, side: chess.Color, move: chess.Move | None = None) -> list[Action]:
        """A wrong claim (9.5.3): the alert (shown, then cleared: the game goes on) and
        the opponent's time; under the older Laws the claimant's time instead (10.13 (2):
        5 minutes added to his used time, a loss if that passes his time limit), and the
        move he declared (`move`) is the one he must play."""
        if self.undecided:
            return [Record(f"{NAMES[side]} claimed a draw by perpetual check: the board "
                           "could not decide whether the checks can be escaped; the arbiter "
                           "decides (no penalty meanwhile)")]
        if self.declared_binds and move is not None:
            self.declared = [move]
        if self.claimant_seconds:
            minutes = self.claimant_seconds // 60
            return [Finding("wrong-claim", side, (), f"{NAMES[side]} claimed a draw that the "
                            f"position does not allow: {minutes} minutes are added to his "
                            "used time; the game goes on (10.13 (2))"),
                    Clear("wrong-claim"),
                    AddTime(side, -self.claimant_seconds, f"wrong claim by {NAMES[side]}"),
                    Record(f"wrong draw claim by {NAMES[side]}: {minutes} min added to "
                           f"{NAMES[side]}'s used time (10.13 (2))")]
        actions: list[Action] = [
            Finding("wrong-claim", side, (), f"{NAMES[side]} claimed a draw that the position "
                    "does not allow; the game goes on (FIDE 9.5.3)"),
            Clear("wrong-claim")]
        if self.penalty_seconds:
            actions += [AddTime(not side, self.penalty_seconds, f"wrong claim by {NAMES[side]}"),
                        Record(f"wrong draw claim by {NAMES[side]}: "
                               f"+{self.penalty_seconds // 60} min to {NAMES[not side]}")]
        return actions

    def refuses(self, mover: chess.Color, move: chess.Move,
                released: list[Match]) -> Finding | None:
        """Where a declared move binds (10.13 (2)): the alert if `mover`'s move is not the
        one he declared with his claim: the move on the board when the claim was found
        wrong, or, for a claim made before the move, the first move he then released on
        the board (`released`: the legal placements that stood, FIDE 4.7). None if the move
        may stand (a declared move is then played)."""
        if not self.declared_binds:
            return None
        declared = self.declared
        if not declared and self.claim_pending is not None:
            # (a capture whose square was not seen declares each capture it may be)
            first = next((m for m in released if m.since >= self.claim_pending), None)
            declared = [shape.move for shape in first.shapes] if first is not None else []
        if not declared or any((move.from_square, move.to_square) == (d.from_square,
                                                                      d.to_square)
                               for d in declared):
            self.declared = []
            return None
        self.declared = declared  # (held until it is played)
        shown = declared[0]
        return Finding("declared-move", mover, (shown.from_square, shown.to_square),
                       f"{NAMES[mover]} claimed a draw declaring "
                       f"{chess.square_name(shown.from_square)}-"
                       f"{chess.square_name(shown.to_square)}, and must play it "
                       "(10.10 (1), 10.13 (2)): the position is reinstated")
