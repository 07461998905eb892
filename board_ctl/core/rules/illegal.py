"""FIDE 7.5: an illegal move completed by pressing the clock. The position before it is
reinstated and the same piece must move (7.5.1, with 4.3); a press without a move counts
as an illegal move (7.5.3); the first one gives the opponent time (7.5.5: 2 minutes, 1 in
rapid and blitz), the second loses. In `casual` an illegal placement is flagged at once
and nothing is counted.

Nothing is said before the press (12.6): an attempt may still become legal.

Under the older Laws of the seed handbooks (`classic`) the position is reinstated (8.1)
with no penalty, except for the king moved into check ("送王", 000: "the third loses"):
each is counted per player, the count shown (`king-exposed`, its squares lit on the
offender's first rank), and the last one loses.
"""

from __future__ import annotations

import chess

from board_ctl.core.position import Position
from board_ctl.core.profiles import Profile
from board_ctl.core.rules import Action, AddTime, End, Finding, Record
from board_ctl.core.rules.endings import Endings
from board_ctl.core.squares import NAMES, names, squares
from board_ctl.words import count as _count


class IllegalMoves:
    def __init__(self, profile: Profile, against_computer: bool = False) -> None:
        self.profile = profile
        self.counts = {chess.WHITE: 0, chess.BLACK: 0}
        self.exposures = {chess.WHITE: 0, chess.BLACK: 0}  # kings moved into check
        # The king's step into check the attempt being judged shows (set by `attempt`,
        # taken by `sanction`), where such steps are counted.
        self._exposure: chess.Move | None = None
        # Against a computer a press without a move wrongs nobody: it does nothing.
        self.against_computer = against_computer

    @property
    def at_once(self) -> bool:
        """casual: an illegal placement is flagged as soon as it is seen."""
        return self.profile.illegal_at_once

    @property
    def press_without_move_counts(self) -> bool:
        return self.profile.clock_without_move_is_illegal and not self.against_computer

    def attempt(self, position: Position, occupied: chess.Bitboard,
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
        self._exposure = (king_into_check(board, emptied, filled)
                          if self.profile.king_exposures_to_lose else None)
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

    def press_without_move(self, mover: chess.Color) -> Finding:
        self._exposure = None
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
        exposure, self._exposure = self._exposure, None
        if exposure is not None and profile.king_exposures_to_lose:
            actions += self._exposed(board, exposure)
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

    def _exposed(self, board: chess.Board, step: chess.Move) -> list[Action]:
        """The king moved into check ("送王"): counted; the count shown; the last loses."""
        mover = board.turn
        self.exposures[mover] += 1
        count, limit = self.exposures[mover], self.profile.king_exposures_to_lose
        assert limit is not None
        text = (f"{NAMES[mover]} moved the king into check "
                f"({chess.square_name(step.from_square)} -> {chess.square_name(step.to_square)})"
                f", the {_ORDINALS.get(count, f'{count}th')} time")
        if count >= limit:
            return [Finding("king-exposed", mover, count_squares(mover, count),
                            f"{text}: the game is lost (送王, {times(limit)})"),
                    End(Endings.win_for(board, not mover), "rules-infraction")]
        return [Finding("king-exposed", mover, count_squares(mover, count),
                        f"{text} of {limit}: the {_ORDINALS.get(limit, f'{limit}th')} loses "
                        "(送王)")]


_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def count_squares(side: chess.Color, count: int) -> tuple[chess.Square, ...]:
    """Where the LEDs show `side`'s count: that many squares of his first rank, from his
    left-hand corner (a1 on for White, h8 on for Black)."""
    shown = min(count, 8)
    if side == chess.WHITE:
        return tuple(chess.square(file, 0) for file in range(shown))
    return tuple(chess.square(7 - file, 7) for file in range(shown))


def king_into_check(board: chess.Board, emptied: chess.Bitboard,
                    filled: chess.Bitboard) -> chess.Move | None:
    """The king's move the attempt shows, if it puts (or leaves) the king in check: the
    mover's king alone left its square and one square was filled (or taken, seen by the
    landing) one step away, where the king stands attacked; or the king and a corner rook
    of its rank left for the squares castling would give them, the king's attacked ("送王":
    the king went into a square the enemy controls). None for anything else."""
    mover = board.turn
    king = board.king(mover)
    if king is None or chess.popcount(filled) not in (1, 2):
        return None
    if emptied == chess.BB_SQUARES[king] and chess.popcount(filled) == 1:
        target = chess.lsb(filled)
        step = chess.Move(king, target)
        if chess.BB_KING_ATTACKS[king] & filled and board.color_at(target) != mover:
            return step if board.is_into_check(step) else None
        return None
    # castling: the king two files towards a corner rook of its rank, the rook beside it
    rank = chess.square_rank(king)
    for corner, step_file in ((chess.square(7, rank), 1), (chess.square(0, rank), -1)):
        target = king + 2 * step_file
        if (board.piece_type_at(corner) != chess.ROOK or board.color_at(corner) != mover
                or not 0 <= chess.square_file(king) + 2 * step_file <= 7
                or emptied != chess.BB_SQUARES[king] | chess.BB_SQUARES[corner]
                or filled != chess.BB_SQUARES[target] | chess.BB_SQUARES[king + step_file]):
            continue
        after = (board.occupied & ~emptied) | filled
        if board.attackers_mask(not mover, target, after):
            return chess.Move(king, target)
    return None


def times(n: int) -> str:
    """'1 time', '3 times'."""
    return _count(n, "time")
