"""The game-end hold's cheap pre-check (`rules/endings.cannot_end`): a sure "the game goes
on" read from bitboards must never be said of a move that ends the game, checked against
python-chess itself on every legal move of real games and of random games that end."""

from __future__ import annotations

import random

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core.position import Position
from board_ctl.core.rules.endings import Endings, cannot_end, may_repeat
from board_ctl.core.shapes import shape_of
from corpus import corpus


def ends(board: chess.Board, move: chess.Move) -> bool:
    """python-chess's answer: mate, stalemate or insufficient material after the move."""
    after = board.copy(stack=False)
    after.push(move)
    return not any(after.generate_legal_moves()) or after.is_insufficient_material()


def check_every_move(board: chess.Board) -> tuple[int, int]:
    """(moves said to go on, legal moves); fails on a move said to go on that ends it."""
    said = total = 0
    for move in board.legal_moves:
        total += 1
        if cannot_end(board, move):
            said += 1
            assert not ends(board, move), f"{board.fen()} {move.uci()}"
    return said, total


ENDING_MOVES = [
    ("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),  # back-rank mate
    ("7k/5K2/8/8/8/8/8/6Q1 w - - 0 1", "g1g7"),  # mate, the queen guarded by the king
    ("1k6/8/1K6/8/8/8/8/7R w - - 0 1", "h1h8"),  # mate on the edge
    ("k7/8/1K6/8/8/8/8/7Q w - - 0 1", "h1b7"),  # mate, the king's step taken by the queen
    ("7k/8/6Q1/8/8/8/8/6K1 w - - 0 1", "g6f7"),  # the queen boxes the king: stalemate
    ("k7/P7/1K6/8/8/8/8/8 w - - 0 1", "b6a6"),  # stalemate by the king's step
    ("4k3/4P3/8/4K3/8/8/8/8 w - - 0 1", "e5e6"),  # pawn blocked, king boxed: stalemate
    ("8/8/8/8/8/5k2/4p3/4K3 b - - 0 1", "f3e3"),  # stalemate by black
    ("7k/8/5K2/8/8/8/8/6n1 w - - 0 1", "f6g6"),  # (no capture) king and knight vs king
    ("7k/8/6K1/8/8/8/6R1/7b b - - 0 1", "h1g2"),  # the bishop takes the last rook: dead
]


@pytest.mark.parametrize("fen, uci", ENDING_MOVES)
def test_a_move_that_ends_the_game_is_never_said_to_go_on(fen: str, uci: str) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert move in board.legal_moves
    assert ends(board, move)  # (the example is one)
    assert not cannot_end(board, move)


def test_the_endings_object_asks_the_same() -> None:
    board = chess.Board()
    move = chess.Move.from_uci("e2e4")
    assert Endings.cannot_end(board, move) is cannot_end(board, move) is True


def test_most_moves_of_real_games_need_no_full_look() -> None:
    """Every legal move of a sample of the corpus's positions (the pre-check is only
    worth having if it answers nearly always)."""
    games = corpus()[::12]
    said = total = 0
    for game in games:
        board = game.board()
        for ply, move in enumerate(game.mainline_moves()):
            if ply % 3 == 0:
                s, n = check_every_move(board)
                said, total = said + s, total + n
            board.push(move)
    assert total > 10_000
    assert said / total > 0.95


@pytest.mark.slow
def test_every_legal_move_of_every_corpus_position() -> None:
    said = total = 0
    for game in corpus():
        board = game.board()
        for move in game.mainline_moves():
            s, n = check_every_move(board)
            said, total = said + s, total + n
            board.push(move)
    assert said / total > 0.95


@settings(max_examples=3, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_games_to_their_end(seed: int) -> None:
    """Random play ends in mates, stalemates and bare kings far more often than real
    games: every position's every move, to the end."""
    random_game_to_its_end(seed)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_many_random_games_to_their_end(seed: int) -> None:
    random_game_to_its_end(seed)


def random_game_to_its_end(seed: int) -> None:
    rng = random.Random(seed)
    board = chess.Board()
    while not board.is_game_over(claim_draw=False) and board.ply() < 400:
        check_every_move(board)
        move = rng.choice(list(board.legal_moves))
        same_end_after(board, move)
        board.push(move)


def same_end_after(board: chess.Board, move: chess.Move) -> None:
    """The referee's end-of-move check told the pre-check's answer says what it says
    without it (the repetitions and the move count are still looked at)."""
    made = shape_of(board, move)
    goes_on = cannot_end(board, move)
    board.push(move)  # (taken back below: the repetitions need the game's moves)
    try:
        for endings in (Endings(), Endings(auto_claimable_draws=True)):
            assert endings.after_move(Position(board), made, goes_on) == \
                endings.after_move(Position(board), made), f"{board.fen()} {move.uci()}"
    finally:
        board.pop()


def test_the_end_of_move_check_told_the_game_goes_on() -> None:
    """Along real games (repetitions and long reversible stretches included)."""
    for game in corpus()[::3]:
        board = game.board()
        for move in game.mainline_moves():
            same_end_after(board, move)
            board.push(move)


def shuffling_game(rng: random.Random, plies: int) -> chess.Board:
    """A random game that repeats itself: now and then both sides play a reversible move
    and take it back, once or several times over (the position recurs three, five or
    more times), between random moves (captures and pawn moves among them, which end
    what can repeat)."""
    board = chess.Board()
    while len(board.move_stack) < plies and not board.is_game_over():
        moves = list(board.legal_moves)
        quiet = [m for m in moves if not board.is_irreversible(m)]
        if quiet and rng.random() < 0.3:
            there = rng.choice(quiet)
            board.push(there)
            replies = [m for m in board.legal_moves if not board.is_irreversible(m)]
            if not replies:
                continue
            reply = rng.choice(replies)
            board.push(reply)
            cycle = [chess.Move(there.to_square, there.from_square),
                     chess.Move(reply.to_square, reply.from_square), there, reply]
            for move in cycle * rng.randrange(1, 4):
                if not board.is_legal(move):
                    break
                board.push(move)
        else:
            board.push(rng.choice(moves))
    return board


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_repetition_look_skips_only_positions_that_cannot_repeat(seed: int) -> None:
    """`may_repeat` looks back only as far as the last capture or pawn move: whenever
    python-chess finds a repetition (three or five times) at a ply, so does it, in games
    that repeat often."""
    rng = random.Random(seed)
    game = shuffling_game(rng, rng.randrange(40, 160))
    board = chess.Board()
    repeated = 0
    for move in game.move_stack:
        board.push(move)
        for count in (3, 5):
            if board.is_repetition(count):
                repeated += 1
                assert may_repeat(board, count), (board.fen(), count)
    assert len(board.move_stack) < 40 or repeated, "no repetition: the test's game is wrong"
