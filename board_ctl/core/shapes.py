"""What a move does to the occupancy of the board, the only thing the sensors see.

A move's shape: the squares it leaves empty, the squares it fills, and the square whose
piece it captures. A capture leaves only its origin changed, so captures from the same
square share a shape; every other move has a shape of its own (promotions aside).
"""

from __future__ import annotations

from typing import NamedTuple

import chess

from board_ctl.core.squares import named_tuple


class Shape(NamedTuple):
    """(A named tuple: a few are made for every ply, and a frozen dataclass costs a
    setattr per field to make.)"""

    move: chess.Move
    vacated: chess.Bitboard  # occupied before, empty after
    filled: chess.Bitboard  # empty before, occupied after
    captured: chess.Square | None  # the victim's square (en passant: not the destination)
    moved_from: chess.Bitboard  # squares of the mover's pieces that move (king and rook)

    def after(self, occupied: chess.Bitboard) -> chess.Bitboard:
        return (occupied & ~self.vacated) | self.filled

    def allows_partial(self, emptied: chess.Bitboard, filled: chess.Bitboard) -> bool:
        """Whether a board that differs from the start by these squares is on the way.

        Any subset of the move's lifts (the victim's square included) and placements is
        a state the hands pass through, whatever the order.
        """
        victim = chess.BB_SQUARES[self.captured] if self.captured is not None else 0
        if emptied & ~(self.vacated | victim) or filled & ~self.filled:
            return False
        # A piece arrives only after leaving its square, except a promotion's new piece.
        return not filled or bool(emptied & self.moved_from) or bool(self.move.promotion)


    def crossing(self, emptied: chess.Bitboard, filled: chess.Bitboard) -> bool:
        """Whether a board that differs from the start by these squares is the move on
        its way with its piece pushed along the surface, crossing a square of its way
        (`transit`; a slow push closes each one for 100-400 ms, past the debounce, and the
        next may close before the last one opens: two at most)."""
        crossed = filled & ~self.filled
        if not crossed or crossed.bit_count() > 2 or crossed & ~transit(self):
            return False
        victim = chess.BB_SQUARES[self.captured] if self.captured is not None else 0
        return bool(emptied & self.moved_from) and not emptied & ~(self.vacated | victim)


def transit(shape: Shape) -> chess.Bitboard:
    """The squares a piece pushed along the surface crosses on its way: those between its
    origin and its destination on a line (a castling king's too), or, for a knight, those
    of either leg of its L (the long leg first or the short one)."""
    return _TRANSIT[shape.move.from_square][shape.move.to_square]


def _knight_legs(origin: chess.Square, target: chess.Square) -> chess.Bitboard:
    f, r = chess.square_file(origin), chess.square_rank(origin)
    df, dr = chess.square_file(target) - f, chess.square_rank(target) - r
    sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
    if abs(df) == 2:  # (along the file first: one step; along the rank first: two)
        legs = [(f + sf, r), (f + 2 * sf, r), (f, r + sr), (f + sf, r + sr)]
    else:
        legs = [(f, r + sr), (f, r + 2 * sr), (f + sf, r), (f + sf, r + sr)]
    return sum(chess.BB_SQUARES[chess.square(x, y)] for x, y in legs)


_TRANSIT = [[chess.between(a, b) or (_knight_legs(a, b) if chess.BB_KNIGHT_ATTACKS[a]
                                     & chess.BB_SQUARES[b] else 0)
             for b in chess.SQUARES] for a in chess.SQUARES]


def shape_of(board: chess.Board, move: chess.Move) -> Shape:
    frm, to = chess.BB_SQUARES[move.from_square], chess.BB_SQUARES[move.to_square]
    if board.kings & frm and board.is_castling(move):  # (cheap tests first: most moves)
        rank = chess.square_rank(move.from_square)
        kingside = board.is_kingside_castling(move)
        rook_from = chess.square(7 if kingside else 0, rank)
        # python-chess may encode castling as king-takes-rook (Chess960); use the real squares.
        if board.piece_type_at(move.to_square) == chess.ROOK:
            rook_from = move.to_square
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        before = frm | chess.BB_SQUARES[rook_from]
        after = chess.BB_SQUARES[king_to] | chess.BB_SQUARES[rook_to]
        return Shape(move, before & ~after, after & ~before, None, before)
    if move.to_square == board.ep_square and board.is_en_passant(move):
        victim = move.to_square - 8 if board.turn == chess.WHITE else move.to_square + 8
        return Shape(move, frm | chess.BB_SQUARES[victim], to, victim, frm)
    if board.occupied & to:
        return named_tuple(Shape, (move, frm, 0, move.to_square, frm))
    return named_tuple(Shape, (move, frm, to, None, frm))

