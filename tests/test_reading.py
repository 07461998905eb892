"""The reading of a turn (`core/reading.py`): what the sensors saw, explained by one cost
model, class by class of real, messy handling.

- Illegal castling (in check, through or into an attacked square, next to the enemy
  king), both pieces placed and the clock pressed: an illegal move (7.5.1, with its
  penalty), never the legal move of one of the two pieces with the other "displaced"; the
  king, touched first, must make another move (4.4.3). Swept over every such position of
  the corpus, in both physical orders.
"""

from __future__ import annotations

import chess
import pytest

from corpus import corpus
from script import play

NEXT_TO_THE_KING = "8/8/8/8/8/8/1k6/R3K3 w Q - 0 1"  # O-O-O puts the king beside b2's
THROUGH_ATTACK = "5r1k/8/8/8/8/8/8/4K2R w K - 0 1"  # f1 attacked by the rook on f8
OUT_OF_CHECK = "4r2k/8/8/8/8/8/8/4K2R w K - 0 1"  # the rook on e8 gives check
INTO_CHECK = "6rk/8/8/8/8/8/8/4K2R w K - 0 1"  # g1 attacked by the rook on g8


def castling_squares(board: chess.Board, kingside: bool) -> tuple[str, str, str, str]:
    """(king from, king to, rook from, rook to) of castling on this side."""
    rank = "1" if board.turn == chess.WHITE else "8"
    if kingside:
        return "e" + rank, "g" + rank, "h" + rank, "f" + rank
    return "e" + rank, "c" + rank, "a" + rank, "d" + rank


def castling_script(board: chess.Board, kingside: bool, order: str) -> str:
    king, king_to, rook, rook_to = castling_squares(board, kingside)
    side = "w" if board.turn == chess.WHITE else "b"
    if order == "one-hand":  # the king placed, then the rook over it
        return f"-{king} +{king_to} -{rook} +{rook_to} C{side}"
    return f"-{king} @0.3 -{rook} @0.5 +{king_to} @0.3 +{rook_to} C{side}"  # both lifted


def illegal_castlings(board: chess.Board) -> list[bool]:
    """The sides on which the mover has the right to castle and the squares between are
    empty, but castling is illegal (check, an attacked square, the enemy king beside)."""
    found = []
    for kingside in (True, False):
        if not (board.has_kingside_castling_rights(board.turn) if kingside
                else board.has_queenside_castling_rights(board.turn)):
            continue
        king, _, rook, _ = castling_squares(board, kingside)
        if board.king(board.turn) != chess.parse_square(king):
            continue
        between = chess.between(chess.parse_square(king), chess.parse_square(rook))
        if between & board.occupied:
            continue
        move = chess.Move(chess.parse_square(king),
                          chess.parse_square(castling_squares(board, kingside)[1]))
        if not board.is_legal(move):
            found.append(kingside)
    return found


@pytest.mark.parametrize("fen", [NEXT_TO_THE_KING, THROUGH_ATTACK, OUT_OF_CHECK, INTO_CHECK])
@pytest.mark.parametrize("order", ["one-hand", "both-lifted"])
def test_illegal_castling_is_an_illegal_move_and_the_king_must_move(fen: str, order: str
                                                                    ) -> None:
    board = chess.Board(fen)
    (kingside,) = illegal_castlings(board)
    out = play(castling_script(board, kingside, order), fen, time_control="300+2")
    assert out.sans == [] and out.alerts == ["illegal-move"]
    assert len(out.lines("penalty")) == 1
    assert "4.4.3" in out.alert("illegal-move")["text"]
    # Reinstated, then another move: the king's is free of alerts; another piece's, when
    # the king could move, earns a touch-move alert (4.4.3).
    king, king_to, rook, rook_to = castling_squares(board, kingside)
    back = f"-{king_to} +{king} -{rook_to} +{rook} ~1"
    for move in (next(m for m in board.legal_moves if board.piece_type_at(m.from_square)
                      == chess.KING),
                 next((m for m in board.legal_moves if board.piece_type_at(m.from_square)
                       != chess.KING), None)):
        if move is None:
            continue
        replacement = f"-{chess.square_name(move.from_square)} +{chess.square_name(move.to_square)} Cw"
        out = play(" ".join([castling_script(board, kingside, order), "~1", back, replacement]),
                   fen, time_control="300+2")
        assert out.sans == [board.san(move)]
        if board.piece_type_at(move.from_square) == chess.KING:
            assert out.alerts == ["illegal-move"]
        else:
            assert out.alerts == ["illegal-move", "touch-move"]
            assert out.alert("touch-move")["squares"] == [king]


def test_every_illegal_castling_of_the_corpus_is_an_illegal_move() -> None:
    checked = 0
    for game in corpus()[::3]:
        board = game.board()
        for move in game.mainline_moves():
            for kingside in illegal_castlings(board):
                for order in ("one-hand", "both-lifted"):
                    out = play(castling_script(board, kingside, order), board.fen(),
                               time_control="300+2")
                    assert out.sans == [] and out.alerts == ["illegal-move"], (
                        board.fen(), kingside, order, out.sans, out.alerts)
                    checked += 1
            board.push(move)
    assert checked >= 20
