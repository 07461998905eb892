"""Small helpers over python-chess bitboards and the names the referee writes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import chess

NAMES = {chess.WHITE: "White", chess.BLACK: "Black"}

# A named tuple made without its own __new__, a Python-level call: on the referee's hot
# paths, named_tuple(Shape, (move, vacated, ...)) is Shape(move, vacated, ...), every field
# given in order.
named_tuple = tuple.__new__
PROMOTIONS = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)


def squares(bits: chess.Bitboard) -> tuple[chess.Square, ...]:
    return tuple(chess.scan_forward(bits))


def bits(squares_: Iterable[chess.Square]) -> chess.Bitboard:
    out = 0
    for square in squares_:
        out |= chess.BB_SQUARES[square]
    return out


def subsets(bits_: chess.Bitboard) -> Iterator[chess.Bitboard]:
    """Every subset of these squares, the empty one first."""
    subset = 0
    while True:
        yield subset
        subset = (subset - bits_) & bits_
        if not subset:
            return


def names(squares_: Iterable[chess.Square]) -> str:
    return ", ".join(chess.square_name(s) for s in squares_)
