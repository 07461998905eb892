"""Each family of laws on its own (board_ctl/core/rules/): a position, the touches or the
claim, and the rule's verdict; no referee, no sensor events."""

from __future__ import annotations

import chess
import pytest

from board_ctl.core.position import Position
from board_ctl.core.profiles import PROFILES
from board_ctl.core.rules import AddTime, Clear, End, Finding, Record
from board_ctl.core.rules.claims import Draws, claimable
from board_ctl.core.rules.completed import MoveChanged
from board_ctl.core.rules.displaced import MISMATCH_AFTER_US, Displaced
from board_ctl.core.rules.endings import Endings
from board_ctl.core.rules.illegal import IllegalMoves
from board_ctl.core.rules.touch import ROOK_FIRST_MARGIN_US, TouchMove
from board_ctl.core.shapes import shape_of
from board_ctl.core.turn import Match

S = 1_000_000  # us
ITALIAN = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"


def shape(fen: str, uci: str):  # type: ignore[no-untyped-def]
    board = chess.Board(fen)
    return shape_of(board, chess.Move.from_uci(uci))


def touches(*squares: str) -> list[tuple[int, chess.Square]]:
    return [(i * S, chess.parse_square(sq)) for i, sq in enumerate(squares, start=1)]


# ---------------------------------------------------------------------- 4.3-4.5 touch-move


@pytest.mark.parametrize("fen, touched, move, alert_squares, law", [
    (chess.STARTING_FEN, ("e2", "d2", "d4"), "d2d4", ("e2",), "4.3.1"),  # own piece first
    (chess.STARTING_FEN, ("e2", "e4"), "e2e4", None, None),  # only the move's piece
    (chess.STARTING_FEN, ("a1", "e2", "e4"), "e2e4", None, None),  # a1 cannot move (4.5)
    ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2", ("d5", "g1", "f3"),
     "g1f3", ("d5",), "4.3.2"),  # an enemy piece touched, capturable, not captured
    ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2", ("d5", "e4"),
     "e4d5", None, None),  # touched and captured
    ("rnbqkbnr/ppp1pppp/8/3p4/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 2", ("c3", "d5", "e4"),
     "e4d5", ("c3", "d5"), "4.3.3"),  # own + enemy: that one must take this one
    (ITALIAN, ("e1", "h1", "e1"), "e1f1", ("e1", "h1"), "4.4.1"),  # king, rook: castle
    (ITALIAN, ("e1", "h1"), "e1g1", None, None),  # castled, king first
])
def test_touch_move(fen: str, touched: tuple[str, ...], move: str,
                    alert_squares: tuple[str, ...] | None, law: str | None) -> None:
    board = chess.Board(fen)
    found = TouchMove().check(Position(board), touches(*touched), None, shape(fen, move))
    if alert_squares is None:
        assert found is None
    else:
        assert found is not None and found.code == "touch-move"
        assert found.squares == tuple(chess.parse_square(s) for s in alert_squares)
        assert f"FIDE {law}" in found.text and found.side == board.turn


def test_castling_begun_with_the_rook_is_no_castling() -> None:
    board = chess.Board(ITALIAN)
    rook_first = [(S, chess.H1), (S + ROOK_FIRST_MARGIN_US + 1, chess.E1)]
    found = TouchMove().check(Position(board), rook_first, None, shape(ITALIAN, "e1g1"))
    assert found is not None and "FIDE 4.4.2" in found.text and found.squares == (chess.H1,)
    # within the margin both were taken together: castling stands
    together = [(S, chess.H1), (S + ROOK_FIRST_MARGIN_US, chess.E1)]
    assert TouchMove().check(Position(board), together, None, shape(ITALIAN, "e1g1")) is None


def test_after_an_illegal_move_the_same_piece_must_move() -> None:
    board = chess.Board()
    found = TouchMove().check(Position(board), [], chess.G1, shape(chess.STARTING_FEN, "e2e4"))
    assert found is not None and found.squares == (chess.G1,)
    assert TouchMove(enforced=False).check(Position(board), touches("e2", "d2"), None,
                                           shape(chess.STARTING_FEN, "d2d4")) is None


# ---------------------------------------------------------------------- 4.7 the completed move


def test_a_released_move_then_changed_is_flagged() -> None:
    board = chess.Board()
    released = [Match([shape(chess.STARTING_FEN, "g1f3")], S)]
    found = MoveChanged().check(board, released, shape(chess.STARTING_FEN, "g1h3"))
    assert found == Finding("move-changed", chess.WHITE, (chess.F3, chess.H3),
                            "White released the piece on f3 (Nf3) and then moved it to h3 "
                            "(FIDE 4.7)")
    assert MoveChanged(enforced=False).check(board, released,
                                             shape(chess.STARTING_FEN, "g1h3")) is None


def test_a_release_the_final_move_only_extends_is_no_change() -> None:
    # The pawn set on b8 and released, then replaced by the promoted piece: the same move.
    fen = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
    released = [Match([shape(fen, "b7b8q")], S)]
    assert MoveChanged().check(chess.Board(fen), released, shape(fen, "b7b8n")) is None


# ---------------------------------------------------------------------- 7.5 illegal moves


def test_an_illegal_move_costs_time_then_the_game() -> None:
    rule = IllegalMoves(PROFILES["fide"])
    board = chess.Board()
    finding, must_move = rule.attempt(Position(board), board.occupied ^ chess.BB_E2 ^ chess.BB_E5,
                                      ())
    assert finding.code == "illegal-move" and must_move == chess.E2
    assert "(e2 -> e5)" in finding.text and "FIDE 7.5.1" in finding.text
    first = rule.sanction(board, finding)
    assert first[0] == finding
    assert first[1] == AddTime(chess.BLACK, 120, "illegal-move by White")
    assert isinstance(first[2], Record) and "+2 min to Black" in first[2].text
    second = rule.sanction(board, rule.press_without_move(chess.WHITE))
    assert second[1:] == [End("0-1", "rules-infraction")]
    assert rule.counts == {chess.WHITE: 2, chess.BLACK: 0}


def test_the_win_is_a_draw_when_the_winner_cannot_mate() -> None:
    rule = IllegalMoves(PROFILES["rapid"])
    board = chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")  # Black: a bare king
    rule.counts[chess.WHITE] = 1
    assert rule.sanction(board, rule.press_without_move(chess.WHITE))[-1] == End(
        "1/2-1/2", "rules-infraction")


def test_casual_counts_nothing() -> None:
    rule = IllegalMoves(PROFILES["casual"])
    finding = rule.press_without_move(chess.WHITE)
    assert rule.sanction(chess.Board(), finding) == [finding] and rule.at_once
    assert IllegalMoves(PROFILES["rapid"]).sanction(chess.Board(), finding)[1].seconds == 60


# ---------------------------------------------------------------------- 7.4 displaced pieces


def test_a_mismatch_is_due_after_its_delay_and_clears_when_explained() -> None:
    rule = Displaced()
    assert rule.deadline(alerted=False) is None
    rule.unexplained(3 * S, 0)
    rule.unexplained(4 * S, 0)  # (still since the first)
    assert rule.deadline(alerted=False) == 3 * S + MISMATCH_AFTER_US
    assert rule.deadline(alerted=True) is None
    board = chess.Board()
    assert rule.explained(board, board.occupied, alerted=True) == [Clear("position-mismatch")]
    assert rule.explained(board, board.occupied, alerted=True) == []  # (nothing differed)


def test_an_opponents_piece_lifted_and_put_back_is_a_touch_out_of_turn() -> None:
    rule = Displaced()
    board = chess.Board()
    rule.unexplained(S, chess.BB_G8)
    found = rule.explained(board, board.occupied, alerted=False)
    assert [type(a) for a in found] == [Finding, Clear]
    assert found[0].code == "wrong-side" and found[0].side == chess.BLACK


def test_the_mismatch_says_what_to_put_back_and_what_to_remove() -> None:
    finding = Displaced.mismatch(chess.BB_E2 | chess.BB_D2, chess.BB_D2 | chess.BB_E3)
    assert finding.squares == (chess.E2, chess.E3)
    assert finding.text == "restore the position: put back the pieces on e2; remove the " \
                           "pieces from e3"


# ---------------------------------------------------------------------- 9 draws


def repeated() -> chess.Board:
    board = chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8"] * 2:
        board.push_uci(uci)
    return board


def test_claims_are_judged_on_the_position_or_the_declared_move() -> None:
    board = repeated()
    assert claimable(board) == "threefold-repetition"
    board.pop()
    assert claimable(board) is None
    assert claimable(board, chess.Move.from_uci("f6g8")) == "threefold-repetition"
    assert board.peek() == chess.Move.from_uci("f3g1")  # (the board is left as it was)
    assert claimable(chess.Board("8/8/8/4k3/8/8/8/4K2R w K - 100 80")) == "fifty-moves"


def test_a_claim_is_void_out_of_turn_or_after_a_touch() -> None:
    draws, board = Draws(120), repeated()
    assert "only the player having the move" in (draws.void(chess.BLACK, board, [], 0) or "")
    assert "touched first" in (draws.void(chess.WHITE, board, touches("e2"), 0) or "")
    assert draws.void(chess.WHITE, board, touches("g1"), chess.BB_G1) is None


def test_a_wrong_claim_gives_the_opponent_time() -> None:
    actions = Draws(120).wrong(chess.WHITE)
    assert [type(a) for a in actions] == [Finding, Clear, AddTime, Record]
    assert actions[2] == AddTime(chess.BLACK, 120, "wrong claim by White")
    assert [type(a) for a in Draws(0).wrong(chess.WHITE)] == [Finding, Clear]


def test_an_offer_stands_until_declined_by_moving() -> None:
    draws = Draws(120)
    assert draws.offered(chess.WHITE, S, with_move_on_board=True) == []
    assert draws.moved(chess.WHITE) == (S, "White offers a draw (=)")
    assert draws.can_accept(chess.BLACK) and not draws.can_accept(chess.WHITE)
    assert draws.moved(chess.BLACK) is None and not draws.can_accept(chess.BLACK)
    assert Draws.refused_agreement(chess.Board()) is not None


# ---------------------------------------------------------------------- 5, 6.9 game ends


@pytest.mark.parametrize("fen, ending", [
    ("7k/8/8/8/8/8/5Q2/6K1 b - - 0 1", None),
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", ("1-0", "checkmate")),
    ("7k/5Q2/5K2/8/8/8/8/8 b - - 0 1", ("1/2-1/2", "stalemate")),
    ("7k/8/8/8/8/8/8/B6K b - - 0 1", ("1/2-1/2", "insufficient-material")),
    ("8/8/8/4k3/8/8/8/4K2R b K - 150 80", ("1/2-1/2", "seventy-five-moves")),
])
def test_the_position_ends_the_game(fen: str, ending: tuple[str, str] | None) -> None:
    assert Endings().after_move(chess.Board(fen)) == ending


def test_claimable_draws_end_the_game_only_in_casual() -> None:
    board = repeated()
    assert Endings().after_move(board) is None
    assert Endings(auto_claimable_draws=True).after_move(board) == ("1/2-1/2",
                                                                   "threefold-repetition")


def test_flags_and_wins() -> None:
    board = chess.Board("4k3/8/8/8/8/8/4P3/4K3 b - - 0 1")
    finding, end = Endings.flag(board, chess.BLACK)
    assert isinstance(finding, Finding) and finding.squares == (chess.E8,)
    assert end == End("1-0", "time-forfeit")
    assert Endings.flag(board, chess.WHITE)[1] == End("1/2-1/2", "time-forfeit")  # 6.9
    assert Endings.win_for(board, chess.WHITE) == "1-0"
    assert Endings.win_for(board, chess.BLACK) == "1/2-1/2"
    mate = chess.Board("7k/8/5QK1/8/8/8/8/8 w - - 0 1")
    assert Endings.ends_game(mate, chess.Move.from_uci("f6g7"))
    assert Endings.ends_game(mate, chess.Move.from_uci("f6f7"))  # stalemate
    assert not Endings.ends_game(mate, chess.Move.from_uci("f6a1"))
    assert mate.fen().startswith("7k/8/5QK1")  # (the board is left as it was)
