"""Inference on its own (board_ctl/core/inference.py): a position, a turn's raw events and
the settled occupancy in; the reading out. No referee, no debounce."""

from __future__ import annotations

import chess

from board_ctl.core import inference as infer
from board_ctl.core.inference import ILLEGAL, Answer, Context
from board_ctl.core.position import Position
from board_ctl.core.turn import Turn

S = 1_000_000  # us
TWO_TARGETS = "4k3/8/8/8/2p1p3/3B4/8/4K3 w - - 0 1"  # Bd3 takes c4 or e4


def turn_of(fen: str = chess.STARTING_FEN) -> Turn:
    return Turn(Position(chess.Board(fen)), 0)


def ctx(occupied: chess.Bitboard, t: int = 5 * S, **kwargs: object) -> Context:
    return Context(t, occupied, 100_000, kwargs.pop("clock", True),  # type: ignore[arg-type]
                   kwargs.pop("pressing", False), **kwargs)  # type: ignore[arg-type]


def after(fen: str, *ucis: str) -> chess.Bitboard:
    board = chess.Board(fen)
    for uci in ucis:
        board.push_uci(uci)
    return board.occupied


def test_the_position_a_move_made_and_a_move_on_its_way() -> None:
    turn = turn_of()
    start = chess.Board().occupied
    assert infer.explain(turn, ctx(start)) == infer.AGREES and turn.match is None
    reading = infer.explain(turn, ctx(after(chess.STARTING_FEN, "e2e4"), t=2 * S))
    assert reading.agrees and turn.match is not None
    assert [s.move.uci() for s in turn.match.shapes] == ["e2e4"] and turn.match.since == 2 * S
    # the pawn lifted again: on its way (a partial move), the match left
    reading = infer.explain(turn, ctx(start & ~chess.BB_E2, t=4 * S))
    assert reading == infer.EXPLAINED and turn.match is None and len(turn.seen) == 1
    assert turn.seen[0].left_at == 4 * S
    # two of the opponent's pieces gone: nothing legal explains it
    assert infer.explain(turn_of(), ctx(start & ~chess.BB_E7 & ~chess.BB_D7)) == \
        infer.UNEXPLAINED


def test_a_move_that_stood_a_second_is_released() -> None:
    turn = turn_of()
    infer.explain(turn, ctx(after(chess.STARTING_FEN, "g1f3"), t=S))
    infer.explain(turn, ctx(chess.Board().occupied & ~chess.BB_G1, t=S + infer.RELEASED_AFTER_US))
    assert [m.shapes[0].move.uci() for m in turn.released] == ["g1f3"]


def test_the_capture_square_is_read_from_the_raw_events() -> None:
    turn = turn_of(TWO_TARGETS)
    shapes = turn.position.full(turn.position.occupied & ~chess.BB_D3)
    assert sorted(s.move.uci() for s in shapes) == ["d3c4", "d3e4"]
    assert infer.choose(turn, shapes) is None  # nothing tells them apart
    turn.raw(1 * S, chess.D3, False)
    turn.raw(1 * S + 300_000, chess.E4, False)  # the swap's 20 ms blip on e4
    turn.raw(1 * S + 320_000, chess.E4, True)
    assert infer.capture_evidence(turn, chess.D3) == ([chess.E4], [])
    chosen = infer.choose(turn, shapes)
    assert not isinstance(chosen, type(ILLEGAL)) and chosen is not None
    assert chosen.move.uci() == "d3e4"


def test_a_victim_taken_first_tells_the_square_too() -> None:
    turn = turn_of(TWO_TARGETS)
    turn.raw(1 * S, chess.C4, False)
    turn.raw(2 * S, chess.D3, False)
    assert infer.capture_evidence(turn, chess.D3) == ([], [chess.C4])


def test_at_a_press_a_capture_landing_elsewhere_is_illegal() -> None:
    # The bishop lifted and put down on an enemy square it cannot take (e8, the king).
    turn = turn_of(TWO_TARGETS)
    turn.raw(1 * S, chess.D3, False)
    turn.raw(1 * S + 100_000, chess.E8, False)
    turn.raw(1 * S + 200_000, chess.E8, True)
    shapes = turn.position.full(turn.position.occupied & ~chess.BB_D3)
    assert infer.choose(turn, shapes, pressing=True) is ILLEGAL
    assert infer.choose(turn, shapes, pressing=False) is None  # perhaps the opponent's touch


def test_the_opponent_starting_completes_the_move() -> None:
    turn = turn_of()
    infer.explain(turn, ctx(after(chess.STARTING_FEN, "e2e4"), t=S))
    board = after(chess.STARTING_FEN, "e2e4") & ~chess.BB_E7  # Black's pawn in hand
    reading = infer.explain(turn, ctx(board, t=3 * S, clock=False))
    assert isinstance(reading.answer, Answer)
    assert [s.move.uci() for s in reading.answer.fitting] == ["e2e4"]
    assert reading.answer.cutoff == 3 * S  # (the board left the move then)


def test_pieces_in_hand_are_an_attempt_not_a_mismatch() -> None:
    position = Position(chess.Board())
    start = position.occupied
    assert infer.in_hand(position, start & ~chess.BB_E2)  # one piece in hand
    assert infer.in_hand(position, (start & ~chess.BB_E2) | chess.BB_E5)  # put down anywhere
    assert not infer.in_hand(position, start & ~chess.BB_E7)  # the opponent's piece
    assert not infer.in_hand(position, start & ~chess.BB_E2 & ~chess.BB_D2 & ~chess.BB_C2)


def test_a_faulty_sensor_is_read_the_way_that_explains_the_board() -> None:
    # f3's switch is dead: the knight left g1, and f3 reads empty.
    turn = turn_of()
    sensed = chess.Board().occupied & ~chess.BB_G1
    assert infer.read_faulty(turn, sensed, chess.BB_F3) == sensed  # in hand, until the press
    assert infer.read_faulty(turn, sensed, chess.BB_F3, deciding=True) == sensed | chess.BB_F3
    assert infer.faulty_may_hide_a_move(turn.position, chess.BB_F3)
    assert not infer.faulty_may_hide_a_move(turn.position, chess.BB_E5)


def test_a_stuck_origin_is_the_one_square_that_makes_a_legal_move() -> None:
    open_game = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2"
    turn = turn_of(open_game)
    turn.raw(S, chess.H5, True)  # the queen seen arriving; d1 never reported
    found = infer.one_flip(turn, turn.position.occupied | chess.BB_H5)
    assert found is not None and found[0] == chess.D1
    assert [s.move.uci() for s in found[1]] == ["d1h5"]
    # f3: the knight from g1 or the pawn from f2, both unseen: no guess
    turn = turn_of()
    turn.raw(S, chess.F3, True)
    assert infer.one_flip(turn, chess.Board().occupied | chess.BB_F3) is None


def test_moves_made_unseen_are_found_when_only_one_fits() -> None:
    turn = turn_of()
    # e4 and e5: e4, the reply being read as the next turn's move
    found = infer.moves_unseen(turn, after(chess.STARTING_FEN, "e2e4", "e7e5"))
    assert [s.move.uci() for s in found or []] == ["e2e4"]
    # e4 and e5 with White's knight in hand: both sides moved, the third begun
    found = infer.moves_unseen(turn, after(chess.STARTING_FEN, "e2e4", "e7e5") & ~chess.BB_G1)
    assert [s.move.uci() for s in found or []] == ["e2e4", "e7e5"]
    # e4, e5, Nf3 could as well be Nf3, e5, e4: no guess
    assert infer.moves_unseen(turn, after(chess.STARTING_FEN, "e2e4", "e7e5", "g1f3")) is None
    assert infer.moves_unseen(turn, chess.Board().occupied & ~chess.BB_A2 & ~chess.BB_H7
                              | chess.BB_A5 | chess.BB_H2) is None
