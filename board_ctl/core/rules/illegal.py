"""FIDE 7.5: an illegal move completed by pressing the clock. The position before it is
reinstated and the same piece must move (7.5.1, with 4.3); a press without a move counts
as an illegal move (7.5.3); the first one gives the opponent time (7.5.5: 2 minutes, 1 in
rapid and blitz), the second loses. In `casual` an illegal placement is flagged at once
and nothing is counted.

Nothing is said before the press (12.6): an attempt may still become legal.
"""

from __future__ import annotations

import chess

from board_ctl.core.position import Position
from board_ctl.core.profiles import Profile
from board_ctl.core.rules import Action, AddTime, End, Finding, Record
from board_ctl.core.rules.endings import Endings
from board_ctl.core.squares import NAMES, names, squares


class IllegalMoves:
    def __init__(self, profile: Profile, against_computer: bool = False) -> None:
        self.profile = profile
        self.counts = {chess.WHITE: 0, chess.BLACK: 0}
        # Against a computer a press without a move wrongs nobody: it does nothing.
        self.against_computer = against_computer

    @property
    def at_once(self) -> bool:
        """casual: an illegal placement is flagged as soon as it is seen."""
        return self.profile.illegal_at_once

    @property
    def press_without_move_counts(self) -> bool:
        return self.profile.clock_without_move_is_illegal and not self.against_computer

    @staticmethod
    def attempt(position: Position, occupied: chess.Bitboard,
                landed: tuple[chess.Square, ...], first: chess.Square | None = None
                ) -> tuple[Finding, chess.Square | None]:
        """The alert for the attempt the board shows at the press, from `position`, with
        the squares its pieces were seen landing on (`landed`, unseen in the occupancy);
        and the piece that must move (7.5.1 with 4.3), if one of the mover's was lifted:
        of those that left their squares, the one lifted `first` (castling touched
        king-first: the king, 4.4.3; rook-first: the rook, 4.4.2)."""
        mover = position.board.turn
        emptied = position.occupied & ~occupied
        filled = occupied & ~position.occupied
        for square in landed:
            filled |= chess.BB_SQUARES[square]
        board = position.board
        own = emptied & board.occupied_co[mover]
        # Castling begun with the king and found illegal: another move of the king (4.4.3).
        castling = (first is not None and own & board.kings & chess.BB_SQUARES[first]
                    and own & board.rooks)
        then = ("castling begun with the king, the king must make another move (FIDE 7.5.1, "
                "4.4.3)" if castling else "the same piece must move (FIDE 7.5.1)")
        finding = Finding(
            "illegal-move", mover, squares(emptied | filled),
            f"{NAMES[mover]}: illegal move ({names(squares(emptied))} -> "
            f"{names(squares(filled))}): the position before it is reinstated and {then}")
        if first is not None and own & chess.BB_SQUARES[first]:
            return finding, first
        return finding, (squares(own)[0] if own else None)

    @staticmethod
    def press_without_move(mover: chess.Color) -> Finding:
        return Finding("clock-no-move", mover, (), f"{NAMES[mover]}: the clock was pressed "
                       "without a move (FIDE 7.5.3)")

    @staticmethod
    def placement(mover: chess.Color, changed: chess.Bitboard) -> Finding:
        """casual: an illegal placement, flagged at once."""
        return Finding("illegal-move", mover, squares(changed),
                       "this placement is not a legal move; put the piece back")

    def sanction(self, board: chess.Board, finding: Finding) -> list[Action]:
        """An illegal move (or press without a move) of the side to move on `board`
        completed: the alert, and what it costs (7.5.5)."""
        mover = board.turn
        profile = self.profile
        actions: list[Action] = [finding]
        if not profile.penalty_seconds and profile.illegal_moves_to_lose is None:
            return actions  # (casual: nothing is counted)
        self.counts[mover] += 1
        limit = profile.illegal_moves_to_lose
        if limit is not None and self.counts[mover] >= limit:
            return actions + [End(Endings.win_for(board, not mover), "rules-infraction")]
        if profile.penalty_seconds:
            actions += [AddTime(not mover, profile.penalty_seconds,
                                f"{finding.code} by {NAMES[mover]}"),
                        Record(f"{finding.code} by {NAMES[mover]}: "
                               f"+{profile.penalty_seconds // 60} min to {NAMES[not mover]} "
                               "(FIDE 7.5.5)")]
        return actions
