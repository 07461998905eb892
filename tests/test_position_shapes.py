"""`Position.full` and `Position.partial` (board_ctl/core/position.py) answer from a few
squares' moves, with shortcuts; here they are checked against their definition over all
legal moves: `full(occ)` is every legal move after which the board is occupied so,
`partial(occ)` whether any legal move's lifts and placements, some of them (at least
one), give `occ`.
Occupancies: every move's result, every part of a move on its way, and those with an
extra square lifted or filled (the opponent's piece, a knocked piece), in real games'
positions and in positions with en passant, castling and promotions."""

from __future__ import annotations

import random
from collections.abc import Iterator

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core import inference as infer
from board_ctl.core.position import Position
from board_ctl.core.shapes import shape_of
from board_ctl.core.squares import subsets
from board_ctl.core.turn import Turn
from corpus import corpus

SPECIAL = [
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2",  # its square, no pawn by
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8",  # castling
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 0 8",
    "1r2k3/P7/8/8/8/8/6p1/4K2R w K - 0 1",  # promotions, with a capture
    "1r2k3/P7/8/8/8/8/6p1/4K2R b K - 0 1",
    "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 2",  # en passant, nothing else to capture
]


def occupancies(board: chess.Board, rng: random.Random) -> set[chess.Bitboard]:
    """The board's occupancy after each legal move and on the way to it, and nearby."""
    start = board.occupied
    found = {start}
    for move in board.legal_moves:
        shape = shape_of(board, move)
        victim = chess.BB_SQUARES[shape.captured] if shape.captured is not None else 0
        for lifted in subsets(shape.vacated | victim):
            for placed in subsets(shape.filled):
                found.add((start & ~lifted) | placed)
        found.add(shape.after(start))
    for occ in list(found):  # an extra square changed: a knocked piece, the opponent's lift
        square = rng.randrange(64)
        found.add(occ ^ chess.BB_SQUARES[square])
    return found


def check(board: chess.Board, rng: random.Random) -> None:
    shapes = [shape_of(board, move) for move in board.legal_moves]
    position = Position(board.copy(stack=False))
    for occ in occupancies(board, rng):
        emptied, filled = board.occupied & ~occ, occ & ~board.occupied
        expected_full = {s.move for s in shapes if s.after(board.occupied) == occ}
        assert {s.move for s in position.full(occ)} == expected_full, (board.fen(), occ)
        if occ == board.occupied:
            continue  # (the position itself: read before any move is looked for)
        expected_partial = any(s.allows_partial(emptied, filled) for s in shapes)
        assert position.partial(occ) == expected_partial, (board.fen(), hex(occ))


def test_special_moves() -> None:
    rng = random.Random(1)
    for fen in SPECIAL:
        check(chess.Board(fen), rng)


def games_positions(every_game: int, every_ply: int) -> Iterator[chess.Board]:
    """Positions of the corpus's real games: every n-th game, every m-th ply."""
    for game in corpus()[::every_game]:
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            if ply % every_ply == 0:
                yield board
            board.push(move)


def check_plain_pieces(board: chess.Board, rng: random.Random) -> None:
    """A plain piece's moves read from its attacks (`Position._plain_reach`: neither pawn
    nor king nor pinned, not in check) are python-chess's, in its order; and the board
    read fresh, the moves never generated, is read as when every square's moves are known
    (the long way): the same moves in the same order, the same moves on their way."""
    position = Position(board.copy(stack=False))
    for square in chess.SQUARES:
        reach = position._plain_reach(square)
        if reach >= 0:
            assert [chess.Move(square, to) for to in chess.scan_reversed(reach)] == list(
                board.generate_legal_moves(from_mask=chess.BB_SQUARES[square])), board.fen()
    known = Position(board.copy(stack=False))
    for square in chess.SQUARES:
        known._moves_of(square)
    tried = occupancies(board, rng)
    own = board.occupied_co[board.turn]
    for square in chess.scan_forward(own):  # (each piece lifted, and put on any square it
        # could step to, legal or not)
        lifted = board.occupied & ~chess.BB_SQUARES[square]
        tried.add(lifted)
        for target in chess.scan_forward(chess.BB_KING_ATTACKS[square] & ~board.occupied):
            tried.add(lifted | chess.BB_SQUARES[target])
    for occ in tried:
        fresh = Position(board.copy(stack=False))
        assert [s.move for s in fresh.full(occ)] == [s.move for s in known.full(occ)], (
            board.fen(), hex(occ))
        fresh = Position(board.copy(stack=False))
        if occ != board.occupied:
            assert fresh.partial(occ) == known.partial(occ), (board.fen(), hex(occ))


def test_real_games_positions() -> None:
    rng = random.Random(2)
    for board in games_positions(40, 7):
        check(board, rng)


def test_plain_pieces_in_real_games() -> None:
    rng = random.Random(5)
    for board in games_positions(70, 11):
        check_plain_pieces(board, rng)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_positions(seed: int) -> None:
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(rng.randrange(0, 120)):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    check(board, rng)
    check_plain_pieces(board, rng)


def check_answers(board: chess.Board, rng: random.Random) -> None:
    """`answers` reads the opponent's reply without making the move it answers: its
    verdict is the reply position's own (a reply made or on its way, or the opponent
    holding pieces of his own), for every move and occupancies around the reply."""
    turn = Turn(Position(board.copy(stack=False)), 0)
    for move in list(board.legal_moves)[::3]:
        line = shape_of(board, move)
        after = board.copy(stack=False)
        after.push(move)
        reply = Position(after)
        own = after.occupied_co[after.turn]
        for occ in occupancies(after, rng):
            emptied = after.occupied & ~occ
            held = bool(emptied) and not occ & ~after.occupied and not emptied & ~own
            expected = (bool(reply.full(occ)) or reply.partial(occ) or reply.crossing(occ)
                        or held)
            assert infer.answers(turn, line, occ) == expected, (board.fen(), move, hex(occ))


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_answers_without_making_the_move() -> None:
    rng = random.Random(3)
    for fen in SPECIAL:
        check_answers(chess.Board(fen), rng)
    for board in games_positions(120, 13):
        check_answers(board, rng)


# Positions where python-chess's legality filter drops moves: pins on a file, a diagonal,
# a knight pinned, a pawn pinned that may take its pinner, en passant exposing the king
# along the rank, check by a knight, double check, kings face to face, castling through
# an attacked square.
FILTERED = [
    "4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1",
    "4k3/8/8/8/1b6/8/3B4/4K3 w - - 0 1",
    "4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1",
    "4k3/8/8/8/8/2b5/3P4/4K3 w - - 0 1",
    "8/8/8/K2pP2r/8/8/8/7k w - d6 0 2",
    "8/8/8/3pP3/8/8/8/k3K2r w - d6 0 2",
    "4k3/8/8/8/8/5n2/8/4K3 w - - 0 1",
    "4k3/8/8/8/1b6/8/4r3/4K3 w - - 0 1",
    "8/8/8/3k4/8/3K4/8/8 w - - 0 1",
    "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "4k3/8/8/8/8/8/3q4/4K3 w - - 0 1",
    "4k3/4r3/8/8/8/8/4K3/8 w - - 0 1",  # in check: the step straight away is no escape
    "k7/8/8/8/8/1q6/7P/K7 w - - 0 1",  # not in check, every step of the king attacked
    "4k3/8/8/8/8/8/PP6/RN2K3 w - - 0 1",  # a rook with no move, and no castling
    "4k3/8/8/8/8/8/6PP/4K1NR w K - 0 1",  # a rook with no move but castling
]


def check_moves_by_square(board: chess.Board, position: Position | None = None) -> None:
    """`Position`'s moves of each square are python-chess's legal generation's, the same
    moves in the same order (its shortcut skips the look at checks and pins where no
    move can fail it)."""
    if position is None:
        position = Position(board.copy(stack=False))
    for square in chess.SQUARES:
        expected = list(board.generate_legal_moves(from_mask=chess.BB_SQUARES[square]))
        assert position._moves_of(square) == expected, (board.fen(), chess.square_name(square))


def check_moves_onto_each_square(board: chess.Board) -> None:
    """`Position`'s moves onto each square are python-chess's legal generation's, the same
    moves in the same order (it asks only the pieces that can get there)."""
    position = Position(board.copy(stack=False))
    for square in chess.SQUARES:
        expected = list(board.generate_legal_moves(to_mask=chess.BB_SQUARES[square]))
        found = [shape.move for shape in position.moves_to(chess.BB_SQUARES[square])]
        assert found == expected, (board.fen(), chess.square_name(square))


def test_moves_by_square_where_the_filter_drops_moves() -> None:
    rng = random.Random(4)
    for fen in FILTERED + SPECIAL:
        board = chess.Board(fen)
        for each in (board, board.mirror()):  # (and with Black to move)
            check_moves_by_square(each)
            check_moves_onto_each_square(each)
            check_plain_pieces(each, rng)


def test_moves_by_square_in_real_games() -> None:
    for board in games_positions(12, 2):
        check_moves_by_square(board)
    for board in games_positions(48, 5):
        check_moves_onto_each_square(board)


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_moves_by_square_in_random_games(seed: int) -> None:
    rng = random.Random(seed)
    board = chess.Board()
    for ply in range(rng.randrange(0, 160)):
        check_moves_by_square(board)
        if ply % 6 == 0 or board.is_check() or board.ep_square is not None:
            check_moves_onto_each_square(board)
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))


def check_told_in_check(board: chess.Board, move: chess.Move) -> None:
    """The position after `move`, told whether it is in check by the SAN's suffix (as the
    referee makes it after each move), generates python-chess's moves, square by square."""
    after = board.copy(stack=False)
    san = after.san_and_push(move)
    assert (san[-1] in "+#") == after.is_check(), (board.fen(), san)
    check_moves_by_square(after, Position(after.copy(stack=False), in_check=san[-1] in "+#"))


def test_a_position_told_in_check_by_the_san_in_real_games() -> None:
    """Every move of some real games (checks and mates among them), and every move of the
    positions where python-chess's legality filter drops moves."""
    for game in corpus()[::50]:
        board = game.board()
        for move in game.mainline_moves():
            if board.gives_check(move) or board.ply() % 5 == 0:
                check_told_in_check(board, move)
            board.push(move)
    for fen in FILTERED + SPECIAL:
        board = chess.Board(fen)
        for each in (board, board.mirror()):
            for move in each.legal_moves:
                check_told_in_check(each, move)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_position_told_in_check_by_the_san_in_random_games(seed: int) -> None:
    rng = random.Random(seed)
    board = chess.Board()
    for _ in range(rng.randrange(0, 160)):
        moves = list(board.legal_moves)
        if not moves:
            break
        checking = [m for m in moves if board.gives_check(m)]
        move = rng.choice(checking if checking and rng.random() < 0.5 else moves)
        if rng.random() < 0.3 or board.gives_check(move):
            check_told_in_check(board, move)
        board.push(move)
