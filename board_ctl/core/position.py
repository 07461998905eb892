"""A position as the sensors see it: the shapes of its legal moves (what each does to the
occupancy), worked out only where asked and cached for the turn.

`full(occupied)`: the legal moves after which the board is occupied exactly so (a move
made, waiting to be completed). `partial(occupied)`: whether a legal move is on its way
to this occupancy (any subset of its lifts and placements, in any order).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

import chess

from board_ctl.core.shapes import Shape, shape_of
from board_ctl.core.squares import PROMOTIONS

Key = tuple[int, int]  # (vacated, filled): the occupancy change that identifies a shape


class Position:
    """A position, and the shapes of its legal moves, worked out only where asked."""

    __slots__ = ("board", "occupied", "_by_move", "_full", "_from", "_to")

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self.occupied = board.occupied
        self._by_move: dict[chess.Move, Shape] = {}
        self._full: dict[Key, list[Shape]] = {}
        self._from: dict[chess.Square, list[Shape]] = {}
        self._to: dict[chess.Square, list[Shape]] = {}

    def moves_from(self, mask: chess.Bitboard) -> Iterator[Shape]:
        """Legal moves from these squares (cached square by square: the board asks often)."""
        return self._cached(self._from, mask, "from_mask")

    def moves_to(self, mask: chess.Bitboard) -> Iterator[Shape]:
        """Legal moves onto these squares, cached the same way."""
        return self._cached(self._to, mask, "to_mask")

    def _cached(self, cache: dict[chess.Square, list[Shape]], mask: chess.Bitboard,
                side: str) -> Iterator[Shape]:
        for square in chess.scan_forward(mask):
            found = cache.get(square)
            if found is None:
                moves = self.board.generate_legal_moves(**{side: chess.BB_SQUARES[square]})
                found = cache[square] = list(map(self.shape, moves))
            yield from found

    def shape(self, move: chess.Move) -> Shape:
        """The shape of a legal move of this position."""
        shape = self._by_move.get(move)
        if shape is None:
            shape = self._by_move[move] = shape_of(self.board, move)
        return shape

    def full(self, occupied: chess.Bitboard) -> list[Shape]:
        """The legal moves after which the board is occupied exactly so."""
        key = (self.occupied & ~occupied, occupied & ~self.occupied)
        found = self._full.get(key)
        if found is None:
            found = self._full[key] = [
                shape for shape in map(self.shape, self._moves_for(*key))
                if shape.vacated == key[0] and shape.filled == key[1]
            ]
        return found

    def _moves_for(self, vacated: chess.Bitboard, filled: chess.Bitboard) -> Iterable[chess.Move]:
        """The few legal moves that can have this shape, without generating all of them."""
        board = self.board
        if vacated.bit_count() == 1:
            origin = chess.lsb(vacated)
            if filled.bit_count() == 1:  # a quiet move, a promotion: test the moves directly
                target = chess.lsb(filled)
                if board.pawns & vacated and chess.square_rank(target) in (0, 7):
                    moves = [chess.Move(origin, target, piece) for piece in PROMOTIONS]
                else:
                    moves = [chess.Move(origin, target)]
                return [move for move in moves if board.is_legal(move)]
            if not filled:
                return board.generate_legal_captures(from_mask=vacated)
            return ()
        if vacated.bit_count() == 2 and filled:  # castling, en passant
            return board.generate_legal_moves(from_mask=vacated)
        return ()

    def partial(self, occupied: chess.Bitboard) -> bool:
        """Whether a legal move is on its way to this occupancy."""
        emptied, filled = self.occupied & ~occupied, occupied & ~self.occupied
        board = self.board
        own = board.occupied_co[board.turn]
        if not filled and emptied & own == emptied and emptied.bit_count() == 1:
            if not emptied & board.rooks:  # the common case: one own piece in hand
                return any(board.generate_legal_moves(from_mask=emptied))
        # Moves of the lifted pieces; captures of lifted victims; a promotion's new piece
        # placed before the pawn is lifted; castling begun with the rook.
        targets = emptied & ~own
        if not emptied & own:
            targets |= filled
        if board.ep_square is not None and targets:
            targets |= chess.BB_SQUARES[board.ep_square]
        lifted = emptied & own
        if lifted & board.rooks:
            lifted |= board.kings & own
        shapes = itertools.chain(self.moves_from(lifted), self.moves_to(targets))
        return any(shape.allows_partial(emptied, filled) for shape in shapes)

    def movable(self, square: chess.Square) -> bool:
        if square in self._from:
            return bool(self._from[square])
        return any(self.board.generate_legal_moves(from_mask=chess.BB_SQUARES[square]))

    def capturable(self, square: chess.Square) -> bool:
        board, bit = self.board, chess.BB_SQUARES[square]
        if any(board.generate_legal_moves(to_mask=bit)):
            return bool(board.occupied & bit)
        return any(self.shape(m).captured == square for m in board.generate_legal_ep())
