"""The `classic` profile: the older Laws of the seed handbooks (docs/rules.md, "The
classic profile"). Every row of its table from sensor events through the whole referee,
then its selection (config, command line, the sensor log's start line), the journal, the
PGN and the simulator's renderings of real games under it."""

from __future__ import annotations

import dataclasses
import io
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.core.rules.illegal import count_squares, king_into_check
from board_ctl.core.rules.perpetual import cannot_escape, checking_side, perpetual_check
from board_ctl.replay import replay_log
from board_ctl.sensorlog import load_sensor_log, read_sensor_log
from conftest import missing_tool, read_jsonl, read_pgn
from script import play

REPO = Path(__file__).resolve().parents[1]

# Black's rook on d2 holds the second rank: the white king steps from e1 into check on e2.
ROOK_ON_D2 = "4k3/8/8/8/8/8/3r4/4K3 w - - 0 1"
INTO_CHECK = "-e1 +e2 Cw ~2 -e2 +e1 ~1 "  # the step, pressed; the king put back
CYCLE = "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Cb "  # knights out and back
# White's queen checks on f6 and g5 for ever: Black (a queen and a rook up) cannot escape.
PERPETUAL = "5r1k/5p1p/8/6Q1/8/8/qr3PPP/7K w - - 0 1"
CHECKS = "-g5 +f6 Cw -h8 +g8 Cb -f6 +g5 Cw -g8 +h8 Cb "  # Qf6+ Kg8 Qg5+ Kh8
# The same, but Black's queen on b2 can take the checking queen on f6 or e5: an escape.
ESCAPABLE = "5r1k/5p1p/8/6Q1/8/8/rq3PPP/7K w - - 0 1"


def classic(script: str, fen: str = chess.STARTING_FEN, time_control: str | None = "600",
            profile: str = "classic"):  # type: ignore[no-untyped-def]
    return play(script, fen, profile=profile, time_control=time_control)


def frames_lit(out, colour: str) -> list[list[str]]:  # type: ignore[no-untyped-def]
    """The squares lit `colour` in each LED frame that lights any."""
    lit = [sorted(sq for sq, (c, _) in f["squares"].items() if c == colour)
           for f in out.lines("leds")]
    return [squares for squares in lit if squares]


# ---------------------------------------------------------------- the king moved into check


def test_a_king_moved_into_check_three_times_loses() -> None:
    out = classic(INTO_CHECK * 3, ROOK_ON_D2)
    assert out.alerts == ["illegal-move", "king-exposed"] * 3
    counts = [a for a in out.lines("alert") if a["code"] == "king-exposed"]
    assert [a["squares"] for a in counts] == [["a1"], ["a1", "b1"], ["a1", "b1", "c1"]]
    assert "first time of 3" in counts[0]["text"] and "second time of 3" in counts[1]["text"]
    assert "third time: the game is lost" in counts[2]["text"]
    assert out.result == ("0-1", "rules-infraction")
    assert out.lines("penalty") == []  # no time for it, and none for the first two
    # the LEDs show the count, white on White's first rank, beside the restore guidance
    assert ["a1"] in frames_lit(out, "white") and ["a1", "b1"] in frames_lit(out, "white")
    restoring = next(f for f in out.lines("leds") if f["guidance"])
    assert restoring["squares"]["e1"] == ["green", "slow"]
    assert restoring["squares"]["e2"] == ["red", "slow"]
    assert out.lines("leds")[-1]["squares"] == {"e1": ["red", "steady"]}  # the loser's king
    assert 'Termination "rules infraction"' in out.record.pgn_text()


def test_under_fide_the_second_illegal_move_already_loses() -> None:
    out = classic(INTO_CHECK * 3, ROOK_ON_D2, profile="fide")
    assert out.alerts == ["illegal-move", "illegal-move"]
    assert out.result == ("0-1", "rules-infraction") and len(out.lines("penalty")) == 1


def test_kings_moved_into_check_are_counted_per_player() -> None:
    # White's rook on d7 holds Black's second rank as Black's on d2 holds White's.
    fen = "4k3/3R4/8/8/8/8/3r4/4K3 w - - 0 1"
    out = classic("-e1 +e2 Cw ~1 -e2 +e1 ~1 -e1 +f1 Cw "   # White: 1st, then Kf1
                  "-e8 +e7 Cb ~1 -e7 +e8 ~1 -e8 +f8 Cb "   # Black: 1st, then Kf8
                  "-f1 +f2 Cw ~1 -f2 +f1 ~1 -f1 +g1 Cw "   # White: 2nd, then Kg1
                  "-f8 +f7 Cb ~1 -f7 +f8 ~1 -f8 +g8 Cb", fen)  # Black: 2nd, then Kg8
    assert out.sans == ["Kf1", "Kf8", "Kg1", "Kg8"] and out.result is None
    counts = [(a["side"], a["squares"]) for a in out.lines("alert") if a["code"] == "king-exposed"]
    assert counts == [("white", ["a1"]), ("black", ["h8"]), ("white", ["a1", "b1"]),
                      ("black", ["h8", "g8"])]  # each on his own first rank, from his left
    assert out.lines("penalty") == []


@pytest.mark.parametrize("script", ["-e2 -e1 +e2 Cw", "-e1 -e2 +e2 Cw",
                                    "-e1 @0.03 -e2 @0.02 +e2 Cw"])
def test_a_king_taking_a_defended_piece_is_moved_into_check(script: str) -> None:
    out = classic(script, "4r1k1/8/8/8/8/8/4p3/4K3 w - - 0 1")  # the rook on e8 defends e2
    assert out.alerts == ["illegal-move", "king-exposed"] and out.sans == []


def test_a_king_capture_not_seen_landing_is_not_counted() -> None:
    # The king sweeps the defended pawn off e2 with nothing seen on e2: the king may as
    # well be in hand at the press. Reinstated as an illegal move; no count rests on it.
    out = classic("-e1 ~0.5 Cw", "4r1k1/8/8/8/8/8/4p3/4K3 w - - 0 1")
    assert out.alerts == ["illegal-move"]


def test_castling_into_check_is_a_king_moved_into_check() -> None:
    """The rule's own reading of the squares (the referee's reading of an illegal castling
    is another matter: today it may take the board for a legal king move)."""
    board = chess.Board("rnbqk2r/pppp1ppp/8/2b5/8/8/PPPPP1PP/RNBQK2R w KQkq - 0 1")  # g1 attacked
    emptied, filled = chess.BB_E1 | chess.BB_H1, chess.BB_G1 | chess.BB_F1
    assert king_into_check(board, emptied, filled) == chess.Move.from_uci("e1g1")
    safe = chess.Board("rnbqk2r/pppp1ppp/8/8/8/8/PPPPPPPP/RNBQK2R w KQkq - 0 1")
    assert king_into_check(safe, emptied, filled) is None  # (legal castling: no step into check)
    # a step to a square nothing attacks, a piece other than the king: not counted
    assert king_into_check(chess.Board(ROOK_ON_D2), chess.BB_E1, chess.BB_F1) is None
    assert count_squares(chess.BLACK, 3) == (chess.H8, chess.G8, chess.F8)


def test_other_illegal_moves_are_reinstated_without_penalty_or_count() -> None:
    # The rook on a1 jumps diagonally to b2, three times: reinstated each time, nothing more.
    out = classic("-a1 +b2 Cw ~1 -b2 +a1 ~1 " * 3 + "-a1 +a7 Cw", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1")
    assert out.alerts == ["illegal-move"] * 3 and out.sans == ["Ra7"]
    assert out.result is None and out.lines("penalty") == []
    assert any(f["guidance"] == [["b2", "a1"]] for f in out.lines("leds"))


def test_a_pinned_piece_exposing_the_king_is_an_illegal_move_not_counted() -> None:
    # The bishop on e2 is pinned by the rook on e8; moving it is illegal, no king step.
    out = classic("-e2 +d3 Cw ~1 -d3 +e2 ~1 " * 3, "4r1k1/8/8/8/8/8/4B3/4K3 w - - 0 1")
    assert out.alerts == ["illegal-move"] * 3 and out.result is None


def test_a_press_without_a_move_costs_nothing() -> None:
    out = classic("-e2 +e4 Cw Cb ~1 Cb ~1 Cb ~1 -e7 +e5 Cb")
    assert out.alerts == ["clock-no-move"] * 3 and out.sans == ["e4", "e5"]
    assert out.lines("penalty") == [] and out.result is None


# ---------------------------------------------------------------- wrong claims (10.13 (2))


def white_clocks(out) -> list[float]:  # type: ignore[no-untyped-def]
    return [m["clock"] for m in out.lines("move") if m["ply"] % 2 == 1]


def test_a_wrong_claim_takes_five_minutes_from_the_claimant() -> None:
    out = classic(CYCLE + "Xw -e2 +e4 Cw -e7 +e5 Cb -d2 +d4 Cw")
    plain = classic(CYCLE + "~0.4 -e2 +e4 Cw -e7 +e5 Cb -d2 +d4 Cw")  # the same, unclaimed
    assert out.alerts == ["wrong-claim"] and out.result is None
    assert out.lines("penalty")[0]["to"] == "white"
    assert out.lines("penalty")[0]["seconds"] == -300
    assert "10.13 (2)" in out.alert("wrong-claim")["text"]
    # White's clock after his next move: five minutes less than without the claim
    assert white_clocks(out)[-1] == pytest.approx(white_clocks(plain)[-1] - 300)
    assert [m["clock"] for m in out.lines("move") if m["ply"] % 2 == 0] == \
        [m["clock"] for m in plain.lines("move") if m["ply"] % 2 == 0]  # Black's untouched


def test_a_wrong_claim_that_empties_the_claimants_clock_loses() -> None:
    out = classic(CYCLE + "Xw -e2 +e4 Cw", time_control="290")
    assert out.alerts == ["wrong-claim", "flag"]
    assert out.result == ("0-1", "time-forfeit")


def test_a_wrong_claim_against_a_lone_king_that_empties_the_clock_draws() -> None:
    # 10.5: a lone king cannot win. White (king and rook) claims wrongly with 200 s left.
    out = classic("-a1 +a2 Cw -h8 +g8 Cb -a2 +a3 Xw ~0.4 Cw", "7k/8/8/8/8/8/8/R3K3 w - - 0 1",
                  time_control="200")
    assert out.result == ("1/2-1/2", "time-forfeit")


def test_a_right_claim_ends_the_game_drawn() -> None:
    out = classic(CYCLE * 2 + "Xw")
    assert out.result == ("1/2-1/2", "threefold-repetition") and out.alerts == []


def test_an_external_clock_set_back_five_minutes_is_believed() -> None:
    """The arbiter takes the five minutes off the claimant's clock by hand: its next
    reading shows them gone, and the board takes it (no clock fault)."""
    # presses at 2.2, 3.4, 4.6, 5.8 (each side 0.4 s a token); the claim with e4 on the
    # board at 7.0, White's press at 7.4; each display after the press
    script = ("-g1 +f3 Cw/597.8/600 -g8 +f6 Cb/597.8/598.8 -f3 +g1 Cw/596.6/598.8 "
              "-f6 +g8 Cb/596.6/597.6 -e2 +e4 Xw Cw/295.0/597.6 -e7 +e5 Cb/295.0/596.4")
    out = classic(script)
    assert "clock-fault" not in out.alerts and out.alerts == ["wrong-claim"]
    assert white_clocks(out)[-1] == pytest.approx(295.0)


# ---------------------------------------------------------------- the declared move (10.10 (1))


def test_the_move_declared_with_a_wrong_claim_must_be_played() -> None:
    # e4 made on the board, the claim, found wrong: White tries e3 instead; the position
    # is reinstated, then he plays e4.
    out = classic(CYCLE + "-e2 +e4 Xw ~1 -e4 +e3 Cw ~1 -e3 +e2 ~1 -e2 +e4 Cw")
    assert out.alerts == ["wrong-claim", "declared-move"]
    assert out.sans[-1] == "e4" and len(out.sans) == 5
    declared = out.alert("declared-move")
    assert declared["squares"] == ["e2", "e4"] and "must play it" in declared["text"]
    restore = next(f for f in out.lines("leds") if f["guidance"])
    assert restore["guidance"] == [["e3", "e2"]]


def test_a_claim_before_the_move_holds_the_player_to_the_move_he_makes() -> None:
    # The claim, then e4 released on the board (it stood 1.5 s), then changed to e3.
    out = classic(CYCLE + "Xw -e2 +e4 ~1.5 -e4 +e3 Cw ~1 -e3 +e2 ~1 -e2 +e4 Cw")
    assert out.alerts == ["declared-move", "wrong-claim"]
    assert out.sans[-1] == "e4" and out.lines("penalty")[0]["seconds"] == -300
    # under FIDE the changed move stands (4.7 says it; 9.5.3 is left to the arbiter)
    fide = classic(CYCLE + "Xw -e2 +e4 ~1.5 -e4 +e3 Cw", profile="fide")
    assert fide.sans[-1] == "e3" and "declared-move" not in fide.alerts


def test_a_claim_before_the_move_is_judged_on_the_move() -> None:
    out = classic(CYCLE + "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw Xb -f6 +g8")
    assert out.result == ("1/2-1/2", "threefold-repetition") and out.alerts == []


# ---------------------------------------------------------------- perpetual check


def test_perpetual_check_claimed_by_the_checker_is_drawn() -> None:
    out = classic(CHECKS + "Xw", PERPETUAL)
    assert out.result == ("1/2-1/2", "perpetual-check") and out.alerts == []
    assert out.sans == ["Qf6+", "Kg8", "Qg5+", "Kh8"]


def test_perpetual_check_claimed_by_the_defender_with_his_move_declared() -> None:
    # Black claims with Kh8 on the board, unpressed: the position after it has stood before.
    out = classic("-g5 +f6 Cw -h8 +g8 Cb -f6 +g5 Cw -g8 +h8 Xb", PERPETUAL)
    assert out.result == ("1/2-1/2", "perpetual-check") and out.sans[-1] == "Kh8"


def test_a_perpetual_check_claim_the_defender_could_escape_is_wrong() -> None:
    # Black's queen could take the checking queen: the claim, with Qf6+ declared, is wrong.
    out = classic(CHECKS + "Xw -g5 +f6 Cw", ESCAPABLE)
    assert out.alerts == ["wrong-claim"] and out.result is None
    assert out.lines("penalty")[0]["seconds"] == -300


def test_checks_that_did_not_come_round_are_no_perpetual_check() -> None:
    # Qf6+ Kg8, then Kg1 Qa3 Kh1 Qa2 and Kg1 again, declared with the claim: the position
    # after it has stood before, but White's moves in between gave no check.
    out = classic("-g5 +f6 Cw -h8 +g8 Cb -h1 +g1 Cw -a2 +a3 Cb -g1 +h1 Cw -a3 +a2 Cb "
                  "-h1 +g1 Xw Cw", PERPETUAL)
    assert out.alerts == ["wrong-claim"] and out.result is None


def test_fide_has_no_perpetual_check() -> None:
    out = classic(CHECKS + "Xw -g5 +f6 Cw", PERPETUAL, profile="fide")
    assert out.alerts == ["wrong-claim"] and out.result is None


def script_of(board: chess.Board, moves: list[chess.Move]) -> str:
    """Sensor tokens for quiet moves and captures, each pressed."""
    tokens = []
    for move in moves:
        side = "w" if board.turn == chess.WHITE else "b"
        frm, to = chess.square_name(move.from_square), chess.square_name(move.to_square)
        assert not (move.promotion or board.is_castling(move) or board.is_en_passant(move))
        tokens += ([f"-{to}"] if board.is_capture(move) else []) + [f"-{frm}", f"+{to}", f"C{side}"]
        board.push(move)
    return " ".join(tokens)


def test_a_perpetual_check_the_board_cannot_decide_goes_to_the_arbiter() -> None:
    """A real game's checks in a crowded middlegame: past the search's bound the claim
    is neither upheld nor penalised: a note for the arbiter, and the game goes on."""
    from corpus import corpus

    game = corpus()[197]
    moves = list(game.mainline_moves())[:64]  # the position after ply 64 has stood before
    board = game.board()
    for move in moves[:56]:
        board.push(move)
    assert perpetual_check(_after(game, 64)) is None  # (what the test is about)
    out = classic(script_of(board.copy(), moves[56:]) + " Xw", board.fen(), time_control=None)
    assert out.result is None and out.alerts == [] and out.lines("penalty") == []
    assert any("the arbiter decides" in n["text"] for n in out.lines("note"))


def _after(game: chess.pgn.Game, plies: int) -> chess.Board:
    board = game.board()
    for move in list(game.mainline_moves())[:plies]:
        board.push(move)
    return board


def _whole_graph(board: chess.Board, checker: chess.Color, cap: int) -> bool | None:
    """An independent reading of condition 2: every position reachable with the checker
    checking, then the largest set closed under "a check into the set" / "every reply
    into the set", by repeated deletion. None past `cap` positions."""
    def key(b: chess.Board) -> object:
        return b._transposition_key()  # (python-chess's own, for its repetitions)

    children: dict[object, list[object]] = {}
    ours: dict[object, bool] = {}
    todo = [board.copy(stack=False)]
    while todo:
        position = todo.pop()
        k = key(position)
        if k in children:
            continue
        if len(children) >= cap:
            return None
        ours[k] = position.turn == checker
        children[k] = []
        for move in position.legal_moves:
            if ours[k] and not position.gives_check(move):
                continue
            after = position.copy(stack=False)
            after.push(move)
            children[k].append(key(after))
            todo.append(after)
    alive = set(children)
    while True:
        dead = {k for k in alive
                if not (any if ours[k] else all)(c in alive for c in children[k])}
        if not dead:
            return key(board) in alive
        alive -= dead


def _edge_king(rng: random.Random) -> chess.Board:
    """A king on his back rank behind a pawn or three, a queen or a rook checking it, and
    perhaps one more black piece: the positions perpetual checks come from."""
    board = chess.Board(None)
    king = rng.choice([chess.A8, chess.B8, chess.F8, chess.G8, chess.H8])
    board.set_piece_at(king, chess.Piece(chess.KING, chess.BLACK))
    for step in rng.sample([-1, 0, 1], rng.randint(1, 3)):
        if 0 <= chess.square_file(king) + step <= 7:
            board.set_piece_at(king - 8 + step, chess.Piece(chess.PAWN, chess.BLACK))
    board.set_piece_at(rng.randrange(8), chess.Piece(chess.KING, chess.WHITE))
    free = [sq for sq in range(8, 48) if board.piece_at(sq) is None]
    board.set_piece_at(rng.choice(free), chess.Piece(rng.choice([chess.QUEEN, chess.ROOK]),
                                                     chess.WHITE))
    if rng.random() < 0.5:
        free = [sq for sq in range(16, 56) if board.piece_at(sq) is None]
        board.set_piece_at(rng.choice(free), chess.Piece(
            rng.choice([chess.ROOK, chess.BISHOP, chess.KNIGHT]), chess.BLACK))
    board.turn = rng.choice(chess.COLORS)
    return board


@pytest.mark.slow
def test_the_escape_search_agrees_with_the_whole_graph() -> None:
    """Positions perpetual checks come from, placed at random: wherever both give a
    verdict, the search's is that of an independent reading of the whole graph."""
    rng = random.Random(11)
    verdicts = []
    for _ in range(200):
        board = _edge_king(rng)
        if not board.is_valid() or board.is_game_over():
            continue
        oracle = _whole_graph(board, chess.WHITE, cap=1500)
        if oracle is None:
            continue
        found = cannot_escape(board, chess.WHITE)
        assert found in (oracle, None), board.fen()
        verdicts.append(found)
        if verdicts.count(True) >= 3 and verdicts.count(False) >= 3:
            break
    assert verdicts.count(True) >= 3 and verdicts.count(False) >= 3, verdicts


def test_the_checking_side_is_read_from_the_repetition() -> None:
    board = chess.Board(PERPETUAL)
    for san in ("Qf6+", "Kg8", "Qg5+", "Kh8"):
        board.push_san(san)
    assert checking_side(board) == [chess.WHITE]
    board = chess.Board()
    for san in ("Nf3", "Nf6", "Ng1", "Ng8"):
        board.push_san(san)
    assert checking_side(board) == []  # a repetition, without checks


# ---------------------------------------------------------------- draw offers (10.7-10.9)


def test_a_second_offer_after_a_refusal_is_blocked() -> None:
    out = classic("-e2 +e4 Ow Cw -e7 +e5 Cb -g1 +f3 Ow Cw -b8 +c6 Cb", time_control=None)
    assert out.alerts == ["offer-repeated"]
    assert [n["text"] for n in out.lines("note")] == ["White offers a draw (=)"]
    assert out.record.pgn_text().count("(=)") == 1


def test_an_offer_is_allowed_again_once_the_opponent_has_offered() -> None:
    out = classic("-e2 +e4 Ow Cw -e7 +e5 Ob Cb -g1 +f3 Ow Cw Ab", time_control=None)
    assert out.alerts == [] and out.result == ("1/2-1/2", "agreement")


def test_an_offer_out_of_turn_is_refused_with_a_warning() -> None:
    # White presses his clock, then offers: it is Black's time now (10.7, 10.8).
    out = classic("-e2 +e4 Cw Ow Ab -e7 +e5 Cb")
    assert out.alerts == ["offer-out-of-turn"] and out.result is None
    assert out.lines("note") == []
    assert out.lines("clear")[0]["code"] == "offer-out-of-turn"  # a warning, shown and gone
    assert play("-e2 +e4 Cw -e7 +e5 Cb Ow Ab", profile="fide").result is not None


def test_an_offer_before_ones_move_stands_until_the_move() -> None:
    # 10.9: offered with his own clock running, before moving; the opponent may wait.
    out = classic("-e2 +e4 Cw Ob -e7 +e5 Cb Aw", time_control=None)
    assert out.result == ("1/2-1/2", "agreement") and out.alerts == []


def test_an_agreement_needs_no_move_by_each_side() -> None:
    out = classic("-e2 +e4 Ow Cw Ab")
    assert out.result == ("1/2-1/2", "agreement")
    assert play("-e2 +e4 Ow Cw Ab").result is None  # FIDE 5.2.3


# ---------------------------------------------------------------- castling touched (001 5.1)


BOTH_CASTLE = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 2 8"


def test_castling_begun_with_the_rook_is_a_rook_move() -> None:
    out = classic("-h1 ~0.5 -e1 +g1 +f1 Cw", BOTH_CASTLE)
    assert out.alerts == ["touch-move"] and "4.4.2" in out.alert("touch-move")["text"]


@pytest.mark.parametrize("profile", ["classic", "fide"])
def test_castling_found_illegal_with_the_king_unable_to_move_frees_the_player(
        profile: str) -> None:
    # The king on e1 walled in (d1, d2, e2, f2 his own; f1 attacked by the knight on h2),
    # castling short illegal through f1: king and rook touched, any legal move may follow.
    fen = "4k3/8/8/8/8/8/3PPP1n/3QK2R w K - 0 1"
    out = classic("-e1 ~0.3 -h1 ~0.3 +h1 +e1 ~0.5 -d2 +d4 Cw", fen, profile=profile)
    assert out.sans == ["d4"] and out.alerts == []


def test_castling_found_illegal_the_king_must_move_if_it_can() -> None:
    fen = "4k3/8/8/8/8/8/3P1P1n/3QK2R w K - 0 1"  # e2 free for the king
    out = classic("-e1 ~0.3 -h1 ~0.3 +h1 +e1 ~0.5 -d2 +d4 Cw", fen)
    assert out.alerts == ["touch-move"] and "4.4.3" in out.alert("touch-move")["text"]
    assert classic("-e1 ~0.3 -h1 ~0.3 +h1 ~0.3 +e2 Cw", fen).alerts == []


# ---------------------------------------------------------------- lateness (10.15)


def test_the_side_to_move_that_never_comes_loses_at_the_default_time() -> None:
    from board_ctl.replay import replay_events
    from board_ctl.sensorlog import StartInfo

    start = StartInfo(default_time=3600.0, profile="classic")
    record = replay_events(start, [ev.Tick(3599.9), ev.Tick(3600.5)], PROFILES["classic"])
    result = record.result
    assert result is not None and (result.result, result.termination) == ("0-1", "late-arrival")
    assert result.t == 3600.0  # at the default time itself
    late = next(line for line in record.report if line["kind"] == "alert")
    assert late["code"] == "late" and "60 minutes" in late["text"]
    assert 'Termination "time forfeit"' in record.pgn_text()


@pytest.mark.parametrize("script", [
    "~3598 -e2 ~5 +e4 Cw ~10 T",  # lifted in time, the move completed after the deadline
    "~3590 -e2 +e5 Cw ~2 -e5 +e2 ~20 T",  # an illegal move in time: he came
])
def test_a_player_who_came_in_time_is_not_late(script: str) -> None:
    from board_ctl.replay import replay_events
    from board_ctl.sensorlog import StartInfo
    from script import events

    start = StartInfo(default_time=3600.0)
    record = replay_events(start, events(script), PROFILES["classic"])
    assert record.result is None


def test_without_a_default_time_nobody_is_late() -> None:
    out = classic("~7200 T", time_control=None)
    assert out.result is None


def test_the_default_time_from_a_logs_start_line(tmp_path: Path) -> None:
    log = tmp_path / "late.jsonl"
    log.write_text(json.dumps({"t": 0, "ev": "start", "default_time": 60,
                               "profile": "classic"}) + "\n"
                   + json.dumps({"t": 75.0, "ev": "lift", "sq": "e7"}) + "\n")
    record = replay_log(load_sensor_log(log), PROFILES["classic"])
    assert record.result is not None and record.result.termination == "late-arrival"


# ---------------------------------------------------------------- as today: ends, promotion


def test_dead_positions_and_a_lone_king_are_drawn_as_today() -> None:
    # 10.4 (3): bishops on squares of one colour; 10.5: a lone king cannot win on time
    assert classic("-b2 +c3 Cw", "4k3/8/8/8/8/6b1/1B6/4K3 w - - 0 1").result is None
    out = classic("-e1 -d2 +d2 Cw", "4k3/8/8/8/8/8/3p4/4K3 w - - 0 1")
    assert out.result == ("1/2-1/2", "insufficient-material")
    flag = classic("~700 T", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1")  # White flags: Black, a
    assert flag.result == ("1/2-1/2", "time-forfeit")  # lone king, cannot win


def test_promotion_takes_the_selector_and_a_queen_without_it() -> None:
    fen = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
    assert classic("=n -b7 +b8 Cw", fen).sans == ["b8=N"]
    assert classic("-b7 +b8 Cw", fen).sans == ["b8=Q+"]


# ---------------------------------------------------------------- selection and records


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def three_exposures_log(tmp_path: Path, profile: str | None = "classic") -> Path:
    from script import events
    from board_ctl.sensorlog import StartInfo, dumps, event_to_json, start_to_json

    start = StartInfo(fen=ROOK_ON_D2, time_control="600", profile=profile)
    lines = [start_to_json(start)] + [event_to_json(e) for e in events(INTO_CHECK * 3)]
    path = tmp_path / "game.sensor.jsonl"
    path.write_text("".join(dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_replay_plays_a_log_under_the_profile_its_start_line_names(tmp_path: Path) -> None:
    log = three_exposures_log(tmp_path)
    assert json.loads(log.read_text().splitlines()[0])["profile"] == "classic"
    done = run_cli("replay", str(log), "--pgn", str(tmp_path / "g.pgn"),
                   "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0, done.stderr
    report = read_jsonl(tmp_path / "r.jsonl")
    assert [line["code"] for line in report if line["kind"] == "alert"].count("king-exposed") == 3
    game = read_pgn(tmp_path / "g.pgn")
    assert game is not None and game.headers["Rules"] == "classic"
    assert game.headers["Termination"] == "rules infraction"
    # the command line wins: the same log under FIDE ends at the second illegal move
    done = run_cli("replay", str(log), "--profile", "fide", "--report", str(tmp_path / "f.jsonl"))
    assert done.returncode == 0, done.stderr
    fide = read_jsonl(tmp_path / "f.jsonl")
    assert [line["code"] for line in fide if line["kind"] == "alert"] == ["illegal-move"] * 2
    # a log that names no profile is replayed under FIDE's Laws
    plain = three_exposures_log(tmp_path, profile=None)
    assert "profile" not in json.loads(plain.read_text().splitlines()[0])


def test_a_start_line_naming_an_unknown_profile_is_reported(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps({"t": 0, "ev": "start", "profile": "klassik",
                               "default_time": -5}) + "\n"
                   + json.dumps({"t": 1.0, "ev": "lift", "sq": "e2"}) + "\n")
    start = load_sensor_log(log).start
    assert start.profile is None and start.default_time is None
    assert any("'profile' must be one of" in p for p in start.problems)
    assert any("default_time" in p for p in start.problems)
    done = run_cli("replay", str(log), "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0 and "klassik" in done.stderr


# Any JSON a start line may hold in place of a profile's name or a default time.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=200),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(profile=JSON_VALUES, default_time=JSON_VALUES)
def test_a_start_line_with_any_profile_or_default_time_is_read(profile: object,
                                                              default_time: object) -> None:
    """Whatever a log's start line holds there (a list, an object, a number, a string):
    the start is read, a wrong value reported and left out, never a crash."""
    from board_ctl.sensorlog import parse_line
    line = json.dumps({"t": 0, "ev": "start", "fen": chess.STARTING_FEN,
                       "profile": profile, "default_time": default_time})
    start = parse_line(line, 1)
    assert start.profile is None or (isinstance(profile, str) and start.profile == profile)
    if profile is not None and start.profile is None:
        assert any("'profile' must be one of" in p for p in start.problems)
    assert start.default_time is None or 1 <= start.default_time <= 86400


def test_a_start_line_with_a_list_for_a_profile_replays(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(json.dumps({"t": 0, "ev": "start", "profile": ["classic"]}) + "\n"
                   + json.dumps({"t": 1.0, "ev": "lift", "sq": "e2"}) + "\n")
    done = run_cli("replay", str(log), "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0 and "'profile' must be one of" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_config_and_the_command_line_select_the_profile(tmp_path: Path) -> None:
    from board_ctl.config import load_config
    from board_ctl.errors import ConfigError

    config = tmp_path / "board.toml"
    config.write_text('[board]\nprofile = "classic"\n[game]\ndefault_time = 3600\n')
    loaded = load_config(config)
    assert loaded.board.profile == "classic" and loaded.game.default_time == 3600.0
    done = run_cli("config", "check", str(config))
    assert done.returncode == 0, done.stderr
    config.write_text('[game]\ndefault_time = 0\n')
    with pytest.raises(ConfigError, match="default_time"):
        load_config(config)
    assert load_config(None).with_overrides(board={"profile": "classic"}).board.profile == \
        "classic"
    help_text = run_cli("run", "--help").stdout
    assert "classic" in help_text


def test_the_pgn_names_the_rules_and_is_read_without_complaint(tmp_path: Path) -> None:
    out = classic(CYCLE + "Xw -e2 +e4 Cw -e7 +e5 Ob Cb")
    text = out.record.pgn_text()
    assert '[Rules "classic"]' in text
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None and not game.errors
    assert [m.uci() for m in game.mainline_moves()][-2:] == ["e2e4", "e7e5"]
    assert play("-e2 +e4 Cw").record.pgn_text().count("[Rules") == 0  # FIDE: no tag
    pgn_extract = shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")
    if not pgn_extract:
        missing_tool("pgn-extract is not installed (Debian package pgn-extract)")
    games = tmp_path / "games.pgn"
    ended = classic(INTO_CHECK * 3, ROOK_ON_D2)
    games.write_text(text + "\n" + ended.record.pgn_text(), encoding="utf-8")
    done = subprocess.run([pgn_extract, "-s", "-o", str(tmp_path / "out.pgn"), str(games)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
    assert (tmp_path / "out.pgn").read_text(encoding="utf-8").count('[Rules "classic"]') == 2


def test_a_rules_tag_cannot_be_set_by_hand() -> None:
    from board_ctl.pgntags import check_tags

    good, problems = check_tags({"Rules": "fide", "Event": "Club"})
    assert good == {"Event": "Club"} and "set by the game record" in problems[0]


def test_the_service_writes_the_profile_and_a_resumed_game_keeps_it(tmp_path: Path) -> None:
    """Two kings moved into check under classic, the power cut; the service restarted
    under fide resumes the game under classic (its journal says so): the third loses."""
    from board_ctl.archive import Archive
    from board_ctl.sensorlog import StartInfo
    from board_ctl.service.game import OutputNamer
    from board_ctl.service.service import RunOptions, Service
    from script import events
    from servicekit import RecordingView
    from test_service_loop import START, FakeBoard, feed
    from test_service_recovery import power_cut

    def service(profile: str) -> Service:
        svc = Service(FakeBoard(), profile=PROFILES[profile], start=StartInfo(),
                      namer=OutputNamer(tmp_path / "out"), options=RunOptions(),
                      view=RecordingView(), archive=Archive(tmp_path / "data"))
        svc.open()
        return svc

    # 1. e4 e5 2. Ke2 Bc5: the white king on e2 may not step to e3 (the bishop's)
    opening = "-e2 +e4 Cw -e7 +e5 Cb -e1 +e2 Cw -f8 +c5 Cb "
    step = "-e2 +e3 Cw ~1 -e3 +e2 ~1 "
    svc = service("classic")
    feed(svc, [ev.Snapshot(0.5, START), *events(opening + step * 2)])
    assert svc.session is not None and svc.session.result is None
    sensor = next((tmp_path / "out").glob("*.sensor.jsonl"))
    assert json.loads(sensor.read_text().splitlines()[0])["profile"] == "classic"
    power_cut(svc)

    svc = service("fide")
    after = chess.Board()
    for san in ("e4", "e5", "Ke2", "Bc5"):
        after.push_san(san)
    feed(svc, [ev.Snapshot(0.0, after.occupied), *events(step, t=0.0)])
    assert svc.session is not None and svc.session.result is not None
    assert (svc.session.result.result, svc.session.result.termination) == ("0-1",
                                                                            "rules-infraction")
    alerts = [line["code"] for line in svc.session.record.report if line["kind"] == "alert"]
    assert alerts.count("king-exposed") == 3
    svc.close()
    # the sensor log the resumed session wrote is replayed the same under its own profile
    logs = sorted((tmp_path / "out").glob("*.sensor.jsonl"))
    with logs[-1].open(encoding="utf-8") as stream:
        log = read_sensor_log(stream)
    assert log.start.profile == "classic"


def test_a_live_game_under_classic_replays_to_the_same_report(tmp_path: Path) -> None:
    """The service loop with ticks between the board's events, then the replay of the
    sensor log it wrote, under the profile the log names: the same report, line for line."""
    from board_ctl.replay import start_profile
    from board_ctl.service.game import OutputNamer
    from board_ctl.service.messages import BoardDone
    from board_ctl.service.service import RunOptions, Service
    from board_ctl.simulate.classic import render_classic
    from servicekit import game_from
    from test_replay_matches_live import assert_same_report
    from test_service_loop import FakeBoard

    rendered = render_classic(game_from("classics.pgn", 0), "wrong-claim", seed=1)  # Opera
    path = tmp_path / "game.jsonl"
    rendered.write(path)
    log = load_sensor_log(path)
    service = Service(FakeBoard(), profile=PROFILES["classic"], start=log.start,
                      namer=OutputNamer(tmp_path, pgn=tmp_path / "out.pgn"),
                      options=RunOptions(once=True), clock=lambda: 0.0)
    service.open()
    rng = random.Random(5)
    t0 = 1.0
    service.handle(ev.Snapshot(t0, chess.Board(log.start.fen).occupied))
    tick = t0
    for event in log.events:
        while tick + 0.05 < t0 + event.t:
            service.handle(ev.Tick(tick))
            tick += rng.uniform(0.01, 1.5)
        service.handle(dataclasses.replace(event, t=t0 + event.t))
    service.handle(BoardDone(tick + 5, True, "the log ends"))
    service.close()
    live = read_jsonl(tmp_path / "out.report.jsonl")
    with (tmp_path / "out.sensor.jsonl").open(encoding="utf-8") as stream:
        written = read_sensor_log(stream)
    assert written.start.profile == "classic"
    record = replay_log(written, start_profile(written.start))
    assert_same_report(live, [json.loads(line) for line in record.report_lines()])
    assert [line["code"] for line in live if line["kind"] == "alert"] == ["wrong-claim"]


@pytest.mark.slow
def test_board_ctl_run_with_the_classic_profile_writes_it_and_replays_the_same(
        tmp_path: Path) -> None:
    """`board-ctl run --profile classic` through the emulator on a pty: the sensor log it
    writes names the profile, and `board-ctl replay` of it, without --profile, reports
    what the board showed, line for line (the third king moved into check lost)."""
    from corpus import corpus
    from servicekit import EmulatorProcess, board_ctl

    rendered = next(r for seed, game in enumerate(corpus()[:60])
                    if (r := _thrice_or_none(game, seed)) is not None)
    assert rendered.result in ("1-0", "0-1")
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", "40")
    try:
        done = board_ctl("run", "--port", str(tmp_path / "board"), "--once", "--pgn",
                         str(tmp_path / "out.pgn"), "--view", "plain", "--profile", "classic",
                         cwd=tmp_path)
    finally:
        code = emulator.close()
    assert done.returncode == 0 and code == 0, done.stderr + done.stdout
    sensor = tmp_path / "out.sensor.jsonl"
    assert json.loads(sensor.read_text(encoding="utf-8").splitlines()[0])["profile"] == "classic"
    live = read_jsonl(tmp_path / "out.report.jsonl")
    replayed = run_cli("replay", str(sensor), "--report", str(tmp_path / "again.jsonl"))
    assert replayed.returncode == 0, replayed.stderr
    assert read_jsonl(tmp_path / "again.jsonl") == live
    alerts = [line["code"] for line in live if line["kind"] == "alert"]
    assert alerts == ["illegal-move", "king-exposed"] * 3
    game = read_pgn(tmp_path / "out.pgn")
    assert game is not None and game.headers["Rules"] == "classic"
    assert game.headers["Result"] == rendered.result


def _thrice_or_none(game: chess.pgn.Game, seed: int):  # type: ignore[no-untyped-def]
    from board_ctl.simulate import NoEligiblePly
    from board_ctl.simulate.classic import render_classic
    from servicekit import FAST

    try:
        return render_classic(game, "king-into-check-thrice", seed=seed,
                              style=dataclasses.replace(FAST, use_clock=True))
    except NoEligiblePly:
        return None


@pytest.mark.parametrize("code", ["king-into-check", "king-into-check-thrice", "wrong-claim",
                                  "offer-out-of-turn", "offer-repeated"])
def test_the_simulator_renders_real_games_under_the_older_laws(code: str) -> None:
    """A few real games with each infraction, replayed through the log's own profile (the
    whole corpus: test_corpus.py, slow)."""
    from board_ctl.replay import start_profile
    from board_ctl.simulate import NoEligiblePly
    from board_ctl.simulate.classic import render_classic
    from corpus import corpus

    checked = 0
    for seed, game in enumerate(corpus()[:60]):
        try:
            rendered = render_classic(game, code, seed=seed)
        except NoEligiblePly:
            continue
        log = read_sensor_log(io.StringIO(rendered.jsonl()))
        assert log.start.profile == "classic" and not log.errors
        record = replay_log(log, start_profile(log.start))
        assert [m.move for m in record.moves] == rendered.moves, seed
        alerts = [line["code"] for line in record.report if line["kind"] == "alert"]
        assert alerts == [alert for alert, _ in rendered.expected_alerts], seed
        assert (record.result.result if record.result else "*") == rendered.result
        checked += 1
        if checked == 4:
            break
    assert checked == 4
