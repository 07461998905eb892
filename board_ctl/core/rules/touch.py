"""FIDE 4.3-4.5, touch-move: a player who deliberately touches his own piece must move
it, an opponent's piece must capture it (the first one that can be), both: that one
captures this one (4.3.3); the king then a rook touched: castling, if legal, is the move
(4.4.1); castling begun with the rook is no castling, the rook must move (4.4.2); the
king then a rook touched but castling with it illegal: the king must move (castling with
the other rook included), or any legal move if it has none (4.4.3; the older Laws' 5.1
(3) and (4) say the same).

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
            if must_move is None:
                intended = self._illegal_castling(board, lifted, own)
                if intended is not None:  # 4.4.3: the king must move, if it can
                    king, rook = intended
                    if shape.move.from_square == king or not position.movable(king):
                        return None
                    return _alert(mover, (king, rook),
                                  f"king and rook touched, castling with the rook on "
                                  f"{chess.square_name(rook)} is illegal: the king must "
                                  "move (FIDE 4.4.3)")
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


    @staticmethod
    def _illegal_castling(board: chess.Board, lifted: dict[chess.Square, int],
                          own: Touches) -> tuple[chess.Square, chess.Square] | None:
        """4.4.3: the king on its first square touched first, then a rook on a corner of
        its rank (castling begun), castling with that rook being illegal: (king, rook)."""
        mover = board.turn
        king = board.king(mover)
        home = chess.E1 if mover == chess.WHITE else chess.E8
        if king != home or king not in lifted:
            return None
        first_own = min((when for when, sq in own if sq != king), default=None)
        if first_own is not None and first_own < lifted[king] - ROOK_FIRST_MARGIN_US:
            return None  # another piece of his was touched before the king (4.3.1)
        legal = {castling_squares(shape_of(board, m))[1] for m in board.generate_castling_moves()}
        for corner in (chess.H1, chess.A1) if mover == chess.WHITE else (chess.H8, chess.A8):
            if (corner in lifted and corner not in legal and board.piece_at(corner)
                    == chess.Piece(chess.ROOK, mover)
                    and lifted[corner] >= lifted[king] - ROOK_FIRST_MARGIN_US):
                return king, corner
        return None


def _alert(side: chess.Color, squares_: tuple[chess.Square, ...], text: str) -> Finding:
    return Finding("touch-move", side, squares_, f"{NAMES[side]}: {text}")
