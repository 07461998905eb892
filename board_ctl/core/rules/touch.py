"""FIDE 4.3-4.5, touch-move: a player who deliberately touches his own piece must move
it, an opponent's piece must capture it (the first one that can be), both: that one
captures this one (4.3.3); the king then a rook touched: castling, if legal, is the move
(4.4.1); castling begun with the rook is no castling, the rook must move (4.4.2).

The board sees a touch as a lift that outlasted the debounce (a settled lift); a touch
without a lift is beyond a presence board.
"""

from __future__ import annotations

import chess

from board_ctl.core.position import Position
from board_ctl.core.rules import Finding
from board_ctl.core.shapes import Shape, shape_of
from board_ctl.core.squares import NAMES, squares
from board_ctl.core.timebase import NEVER, us

ROOK_FIRST_MARGIN = 0.3  # s: a rook lifted this much before the king was touched first
ROOK_FIRST_MARGIN_US = us(ROOK_FIRST_MARGIN)

Touches = list[tuple[int, chess.Square]]  # (time of the settled lift, square)


def castling_squares(shape: Shape) -> tuple[chess.Square, chess.Square]:
    """(king, rook) origins of a castling shape."""
    king = shape.move.from_square
    rook = next(sq for sq in squares(shape.moved_from) if sq != king)
    return king, rook


class TouchMove:
    """Judges the move made against the pieces touched in the turn."""

    def __init__(self, enforced: bool = True, enemy_pieces: bool = True) -> None:
        self.enforced = enforced
        # Against a computer the person handles its pieces all the time (making its
        # moves): touching them obliges nothing (4.3.2, 4.3.3 are not applied).
        self.enemy_pieces = enemy_pieces

    def check(self, position: Position, touched: Touches, must_move: chess.Square | None,
              shape: Shape) -> Finding | None:
        """The touch-move alert the move `shape` deserves, made from `position` (whose
        board is the game's, before the move), or None."""
        if not self.enforced:
            return None
        board = position.board
        mover = board.turn
        moved = shape.moved_from | (chess.BB_SQUARES[shape.captured]
                                    if shape.captured is not None else 0)
        if must_move is None and shape.moved_from == chess.BB_SQUARES[shape.move.from_square]:
            # (not castling, which moves the rook too) The common case: only the pieces
            # of the move itself were touched.
            for _, sq in touched:
                if not moved & chess.BB_SQUARES[sq]:
                    break
            else:
                return None
        ordered = sorted(touched)
        own = [(when, sq) for when, sq in ordered
               if board.color_at(sq) == mover and position.movable(sq)]
        enemy = [(when, sq) for when, sq in ordered
                 if board.color_at(sq) == (not mover) and position.capturable(sq)
                 and self.enemy_pieces]
        if must_move is not None and position.movable(must_move):
            own.insert(0, (NEVER, must_move))
        lifted = dict((sq, when) for when, sq in reversed(touched))
        if must_move is not None:  # (touched before all else: an illegal move's, 4.4.3)
            lifted[must_move] = NEVER
        if board.is_castling(shape.move):
            king, rook = castling_squares(shape)
            if rook in lifted and (king not in lifted
                                   or lifted[rook] < lifted[king] - ROOK_FIRST_MARGIN_US):
                return Finding("touch-move", mover, (rook,),
                               f"{NAMES[mover]} touched the rook before the king: no castling "
                               "with that rook; the rook must move (FIDE 4.4.2)")
        else:
            castle = self._must_castle(board, lifted)
            if castle is not None:
                return castle
        # 4.3.3: an own and an enemy piece touched (the first of each, in either order):
        # that one must take this one, if it legally can.
        if own and enemy:
            attacker, victim = own[0][1], enemy[0][1]
            if any(shape_of(board, m).captured == victim
                   for m in board.generate_legal_moves(chess.BB_SQUARES[attacker])):
                if (shape.move.from_square, shape.captured) != (attacker, victim):
                    return _alert(mover, (attacker, victim),
                                  f"the piece on {chess.square_name(attacker)} must "
                                  f"capture on {chess.square_name(victim)} (FIDE 4.3.3)")
                return None
        # Otherwise the first piece touched that can be moved or captured (4.3.1, 4.3.2).
        first = min(own + enemy, default=None)
        if first is None:
            return None
        square = first[1]
        if board.color_at(square) == mover and not shape.moved_from & chess.BB_SQUARES[square]:
            return _alert(mover, (square,), f"the touched piece on "
                          f"{chess.square_name(square)} must move (FIDE 4.3.1)")
        if board.color_at(square) != mover and shape.captured != square:
            return _alert(mover, (square,), f"the touched piece on "
                          f"{chess.square_name(square)} must be captured (FIDE 4.3.2)")
        return None

    @staticmethod
    def _must_castle(board: chess.Board, lifted: dict[chess.Square, int]) -> Finding | None:
        """4.4.1: the king, then a rook, touched: castling with it, if legal, is the move."""
        king = board.king(board.turn)
        if king is None or king not in lifted:
            return None
        for castle in board.generate_castling_moves():
            _, rook = castling_squares(shape_of(board, castle))
            if rook in lifted and lifted[rook] >= lifted[king] - ROOK_FIRST_MARGIN_US:
                return _alert(board.turn, (king, rook),
                              f"king and rook touched: castling ({board.san(castle)}) "
                              "was legal and must be played (FIDE 4.4.1)")
        return None


def _alert(side: chess.Color, squares_: tuple[chess.Square, ...], text: str) -> Finding:
    return Finding("touch-move", side, squares_, f"{NAMES[side]}: {text}")
