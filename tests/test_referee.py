"""Table tests of the referee: sensor events in, moves, alerts and results out."""

from __future__ import annotations

import chess
import pytest

from script import play

# Positions used below.
ITALIAN = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
BOTH_CASTLE = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 2 8"
EP_WHITE = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"
TWO_TARGETS = "4k3/8/8/2p1p3/3B4/8/8/4K3 w - - 0 1"  # Bd4 can take c5 or e5
PROMO = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
PROMO_CAPTURE = "r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1"


def test_quiet_moves_with_clock() -> None:
    out = play("-e2 +e4 Cw -e7 +e5 Cb -g1 +f3 Cw")
    assert out.sans == ["e4", "e5", "Nf3"]
    assert out.alerts == []


def test_quiet_moves_without_clock_complete_when_the_other_side_starts() -> None:
    out = play("-e2 +e4 ~2 -e7 +e5 ~2 -g1 +f3")
    assert out.sans == ["e4", "e5", "Nf3"]  # the last one completed by the end of the log
    assert out.alerts == []


def test_move_time_is_the_placement_not_the_press() -> None:
    out = play("-e2 +e4 ~3 Cw")
    assert out.lines("move")[0]["t"] == pytest.approx(1.8)


@pytest.mark.parametrize("script", [
    "-d5 -e4 +d5 Cw",  # victim first
    "-e4 -d5 +d5 Cw",  # attacker first
    "-e4 @0.02 -d5 @0.02 +d5 Cw",  # fast swap, the victim's square empty for a blip
    "-e4 ~0.5 Cw",  # push-off swap: the victim's square never looks empty
])
def test_pawn_capture_in_every_order(script: str) -> None:
    fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2"
    out = play(script, fen)
    assert out.sans == ["exd5"]
    assert out.alerts == []


@pytest.mark.parametrize("script, expected", [
    ("-c5 -d4 +c5 Cw", "Bxc5"),
    ("-d4 -e5 +e5 Cw", "Bxe5"),
    ("-d4 @0.03 -e5 @0.02 +e5 Cw", "Bxe5"),  # the blip tells the square
])
def test_capture_square_from_the_event_history(script: str, expected: str) -> None:
    out = play(script, TWO_TARGETS)
    assert out.sans == [expected]
    assert out.alerts == []


def test_unseen_capture_waits_for_the_capturing_piece_to_be_lifted_and_replaced() -> None:
    out = play("-d4 Cw ~1 -e5 @0.3 +e5", TWO_TARGETS)
    assert out.sans == ["Bxe5"]
    assert out.alerts == []


def test_unseen_capture_shows_its_candidates_on_the_leds() -> None:
    out = play("-d4 Cw ~1 T", TWO_TARGETS)
    frames = out.lines("leds")
    assert {"c5": ["yellow", "fast"], "e5": ["yellow", "fast"]} in [f["squares"] for f in frames]
    assert "capture square not seen" in out.record.pgn_text()  # guessed only at the end


def test_unseen_capture_decided_by_the_reply() -> None:
    # After Bxe5 the black pawn on c5 can advance; after Bxc5 it could not be there.
    out = play("-d4 Cw ~1 -c5 +c4 Cb", TWO_TARGETS)
    assert out.sans == ["Bxe5", "c4"]
    assert out.alerts == []


@pytest.mark.parametrize("script, san", [
    ("-e1 +g1 -h1 +f1 Cw", "O-O"),  # one hand, king then rook
    ("-e1 @0.1 -h1 +g1 +f1 Cw", "O-O"),  # both lifted together
    ("-e1 @0.1 -h1 +f1 +g1 Cw", "O-O"),
    ("-e1 +c1 -a1 +d1 Cw", "O-O-O"),
])
def test_castling_king_first(script: str, san: str) -> None:
    out = play(script, BOTH_CASTLE)
    assert out.sans == [san]
    assert out.alerts == []


@pytest.mark.parametrize("script, san", [
    ("-e8 +g8 -h8 +f8 Cb", "O-O"),
    ("-e8 @0.1 -a8 +c8 +d8 Cb", "O-O-O"),
])
def test_black_castling(script: str, san: str) -> None:
    fen = BOTH_CASTLE.replace(" w ", " b ")
    assert play(script, fen).sans == [san]


def test_rook_first_castling_is_touch_move_in_fide_and_accepted_in_casual() -> None:
    script = "-h1 +f1 ~1 -e1 +g1 Cw"
    fide = play(script, BOTH_CASTLE)
    assert fide.sans == ["O-O"]  # the record follows the board; the arbiter rules
    assert fide.alerts == ["touch-move"]
    assert "4.4.2" in fide.alert("touch-move")["text"]
    casual = play(script, BOTH_CASTLE, profile="casual")
    assert casual.sans == ["O-O"] and casual.alerts == []


@pytest.mark.parametrize("script", [
    "-e5 +f6 -f5 Cw",
    "-f5 -e5 +f6 Cw",
    "-e5 -f5 +f6 Cw",
])
def test_en_passant_in_any_order(script: str) -> None:
    out = play(script, EP_WHITE)
    assert out.sans == ["exf6"]
    assert out.alerts == []


@pytest.mark.parametrize("script, san", [
    ("-b7 +b8 Cw", "b8=Q+"),  # no selector: queen
    ("=n -b7 +b8 Cw", "b8=N"),  # selector before
    ("-b7 =r +b8 Cw", "b8=R+"),  # selector while the pawn is in hand
    ("-b7 +b8 -b8 +b8 =b Cw", "b8=B"),  # pawn replaced, selector after placement
    ("-b7 +b8 =n @0.05 Cw", "b8=N"),  # selector just before the press
    ("-b7 +b8 Cw @0.1 =n", "b8=N"),  # just after the press, within its grace: it counts
    ("-b7 +b8 Cw @0.35 =n", "b8=Q+"),  # after the grace: too late, the move was complete
])
def test_promotion_and_the_selector(script: str, san: str) -> None:
    out = play(script, PROMO)
    assert out.sans == [san]
    assert out.alerts == []


def test_capture_promotion() -> None:
    out = play("-a8 -b7 +a8 =n Cw", PROMO_CAPTURE)
    assert out.sans == ["bxa8=N"]


def test_promotion_without_clock_takes_the_selector_before_the_reply() -> None:
    out = play("-b7 +b8 =n ~2 -e8 +f7", PROMO.replace("8/4K3", "7P/4K3"))
    assert out.sans == ["b8=N", "Kf7"]


def test_lifting_a_piece_that_cannot_move_is_allowed() -> None:
    out = play("-a1 +a1 -e2 +e4 Cw")
    assert out.sans == ["e4"] and out.alerts == []


def test_lifting_the_same_piece_twice_is_allowed() -> None:
    out = play("-g1 +g1 -g1 +f3 Cw")
    assert out.sans == ["Nf3"] and out.alerts == []


def test_touch_move_own_piece() -> None:
    out = play("-g1 ~1 +g1 -e2 +e4 Cw")
    assert out.sans == ["e4"]
    assert out.alerts == ["touch-move"]
    assert out.alert("touch-move")["squares"] == ["g1"]


def test_touch_move_enemy_piece_not_captured() -> None:
    fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2"
    out = play("-d5 ~1 +d5 -g1 +f3 Cw", fen)
    assert out.sans == ["Nf3"]
    assert out.alerts == ["touch-move"]
    assert out.alert("touch-move")["squares"] == ["d5"]


def test_move_changed_after_release() -> None:
    out = play("-g1 +h3 ~1.5 -h3 +f3 Cw")
    assert out.sans == ["Nf3"]
    assert out.alerts == ["move-changed"]


def test_slide_blips_are_not_releases() -> None:
    out = play("-d1 @0.03 +d2 @0.05 -d2 +d3 Cw",
               "rnbqkbnr/pppppppp/8/8/8/8/PPP1PPPP/RNBQKBNR w KQkq - 0 1")
    assert out.sans == ["Qd3"]
    assert out.alerts == []


def test_illegal_move_reinstated_and_penalised() -> None:
    out = play("-g1 +g3 Cw ~2 -g3 +g1 -g1 +f3 Cw")
    assert out.sans == ["Nf3"]
    assert out.alerts == ["illegal-move"]
    assert set(out.alert("illegal-move")["squares"]) == {"g1", "g3"}
    assert out.lines("penalty") == [
        {"t": pytest.approx(2.2), "kind": "penalty", "to": "black", "seconds": 120,
         "reason": "illegal-move by White"}]


def test_after_an_illegal_move_the_same_piece_must_move() -> None:
    out = play("-g1 +g3 Cw ~2 -g3 +g1 -e2 +e4 Cw")
    assert out.sans == ["e4"]
    assert out.alerts == ["illegal-move", "touch-move"]


def test_second_illegal_move_loses() -> None:
    out = play("-g1 +g3 Cw -g3 +g1 -g1 +g4 Cw")
    assert out.alerts == ["illegal-move", "illegal-move"]
    assert out.result == ("0-1", "rules-infraction")


def test_second_illegal_move_draws_when_the_opponent_cannot_mate() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    out = play("-e1 +e3 Cw -e3 +e1 -e1 +g3 Cw", fen)
    assert out.result == ("1/2-1/2", "rules-infraction")


def test_rapid_penalty_is_one_minute() -> None:
    out = play("-g1 +g3 Cw", profile="rapid")
    assert out.lines("penalty")[0]["seconds"] == 60


def test_clock_without_a_move() -> None:
    out = play("Cw ~1 -e2 +e4 Cw")
    assert out.sans == ["e4"]
    assert out.alerts == ["clock-no-move"]
    assert out.lines("penalty")[0]["to"] == "black"


def test_press_slightly_before_the_placement_is_accepted() -> None:
    out = play("-e2 ~0.5 Cw @0.15 +e4")
    assert out.sans == ["e4"] and out.alerts == []


# A press judged a little later (a piece still landing, a capture square never seen to
# change) must not take the opponent's fast reply for part of the pressed move.
FAST_REPLIES = [
    ("push-off-capture-then-reply-within-120ms", "4k3/1p6/B7/8/8/8/4P3/4K3 b - - 0 1",
     "-b7 @1.0 Cb @0.12 -e2 @0.4 +e4 Cw", ["bxa6", "e4"]),
    ("push-off-capture-recaptured-at-once", "4k3/8/8/p7/1P6/P7/8/4K3 b - - 0 1",
     "-a5 @0.6 Cb @0.16 -b4 @0.5 -a3 @0.4 +b4 Cw", ["axb4", "axb4"]),
    ("press-69ms-after-landing-victim-lifted-60ms-later", "4k3/8/8/8/1p6/8/2P5/4K3 w - - 0 1",
     "-c2 +c3 @0.069 Cw @0.06 -c3 @0.3 -b4 @0.4 +c3 Cb", ["c3", "bxc3"]),
    ("en-passant-victim-lifted-after-the-press", "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
     "-e5 +d6 @0.2 Cw @0.19 -d5 ~1 -e8 +f7 Cb", ["exd6", "Kf7"]),
    ("press-before-the-victim-is-lifted", "4k3/8/8/8/8/3p4/2P5/4K3 w - - 0 1",
     "-c2 @0.9 Cw @0.09 -d3 @0.12 +d3 ~1 -e8 +e7 Cb", ["cxd3", "Ke7"]),
    ("a-blip-on-the-opponents-square-as-the-pawn-lands",
     "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
     "-e4 +e5 @0.06 -g8 @0.06 +g8 @0.3 Cw -c7 +c5 Cb", ["e5", "c5"]),
    ("press-40ms-after-the-lift-victim-removed-after-it", "4k3/8/8/8/8/3p4/2P5/4K3 w - - 0 1",
     "-c2 @0.04 Cw @0.09 -d3 @0.12 +d3 ~1 -e8 +e7 Cb", ["cxd3", "Ke7"]),
    ("recaptured-90ms-after-landing", "rnbqkbnr/ppp1pppp/8/3p4/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2",
     "-e2 +e4 @0.06 Cw @0.03 -e4 @0.3 -d5 @0.3 +e4 Cb", ["e4", "dxe4"]),
    ("press-75ms-after-a-slide-blip-began", chess.STARTING_FEN,
     "-d2 +d3 Cw -e7 +e6 Cb -c1 @0.03 +d2 @0.06 -d2 @0.05 +e3 @0.06 -e3 @0.05 +f4 "
     "@0.075 Cw @0.015 -f4 @0.06 +g5 ~1 -g8 +f6 Cb", ["d3", "e6", "Bg5", "Nf6"]),
]


@pytest.mark.parametrize("fen,script,sans", [c[1:] for c in FAST_REPLIES],
                         ids=[c[0] for c in FAST_REPLIES])
def test_a_press_judged_later_keeps_the_reply_apart(fen: str, script: str,
                                                    sans: list[str]) -> None:
    out = play(script, fen=fen)
    assert out.sans == sans
    assert out.alerts == []


def test_the_opponent_lifting_50ms_after_the_landing_without_a_clock() -> None:
    out = play("-e4 +e5 @0.05 -c7 @0.4 +c5 ~3 T",
               fen="rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    assert out.sans == ["e5", "c5"] and out.alerts == []


def test_a_knight_lifted_and_put_back_then_a_touched_enemy_is_no_capture() -> None:
    out = play("-f3 @0.5 +f3 @0.05 -g4 @1.0 +g4 ~2 -e2 +e4 ~2",
               fen="rn1qkbnr/pppp1ppp/8/4p3/6b1/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 3")
    assert out.sans == ["e4"]
    assert out.alerts == ["wrong-side", "touch-move"]


def test_casual_press_without_a_move_is_forgotten() -> None:
    # (casual: not an illegal move) the press must not count for the move made later
    out = play("Cw ~1 -f1 @0.5 -g8 @0.3 +g8 @0.3 +c4 @0.4 Cw ~2 -g8 +f6 Cb",
               fen="rnbqkbnr/p1pppppp/8/1p6/8/4P3/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
               profile="casual")
    assert out.sans == ["Bc4", "Nf6"] and out.alerts == []


def test_no_hint_before_the_press_in_fide() -> None:
    out = play("-g1 +g3 ~5")
    assert out.alerts == []
    assert all(not frame["squares"] for frame in out.lines("leds"))


def test_casual_flags_an_illegal_placement_at_once_without_penalty() -> None:
    out = play("-g1 +g3 ~1 -g3 +f3 Cw", profile="casual")
    assert out.alerts == ["illegal-move"]
    assert out.lines("penalty") == []
    assert out.sans == ["Nf3"]


def test_knocked_over_piece_is_a_mismatch_not_a_move() -> None:
    out = play("-e2 +e4 Cw ~1 -e4 ~3 +e4 -e7 +e5 Cb")  # White's pawn knocked on Black's turn
    assert out.sans == ["e4", "e5"]
    assert out.alerts == ["position-mismatch"]
    assert out.alert("position-mismatch")["squares"] == ["e4"]
    assert [c["code"] for c in out.lines("clear")] == ["position-mismatch"]


def test_displaced_piece_guidance_pairs_extra_with_missing() -> None:
    out = play("-e2 +e4 Cw ~1 -b1 @0.5 +b4 ~3 T")
    frames = [f for f in out.lines("leds") if f["guidance"]]
    assert frames[-1]["guidance"] == [["b4", "b1"]]
    assert frames[-1]["squares"] == {"b1": ["green", "slow"], "b4": ["red", "slow"]}


def test_brief_touch_out_of_turn_is_wrong_side() -> None:
    out = play("-e2 +e4 Cw ~1 -e4 @0.5 +e4 -e7 +e5 Cb")
    assert out.alerts == ["wrong-side"]
    assert out.sans == ["e4", "e5"]


def test_checkmate_ends_the_game_without_a_press() -> None:
    out = play("-f2 +f3 Cw -e7 +e5 Cb -g2 +g4 Cw -d8 +h4 ~3")
    assert out.sans[-1] == "Qh4#"
    assert out.result == ("0-1", "checkmate")
    assert out.lines("leds")[-1]["squares"] == {"e1": ["red", "steady"]}


def test_stalemate() -> None:
    out = play("-c6 +b6 Cw", "k7/8/2Q5/8/8/8/8/K7 w - - 0 1")
    assert out.result == ("1/2-1/2", "stalemate")
    assert out.lines("leds")[-1]["squares"] == {"a1": ["white", "steady"],
                                                "a8": ["white", "steady"]}


def test_insufficient_material() -> None:
    out = play("-e1 -d2 +d2 Cw", "4k3/8/8/8/8/8/3p4/4K3 w - - 0 1")
    assert out.result == ("1/2-1/2", "insufficient-material")


def test_seventy_five_move_rule() -> None:
    out = play("-a1 +a2 Cw", "7k/8/8/8/8/8/8/R3K3 w - - 149 120")
    assert out.result == ("1/2-1/2", "seventy-five-moves")


def test_fivefold_repetition() -> None:
    cycle = "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Cb "
    out = play(cycle * 4)
    assert out.result == ("1/2-1/2", "fivefold-repetition")
    assert len(out.sans) == 16


def test_threefold_claim_correct_and_wrong() -> None:
    cycle = "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Cb "
    early = play(cycle + "Xw -e2 +e4 Cw")  # the claim declares e4: no threefold after it
    assert early.alerts == ["wrong-claim"] and early.sans[-1] == "e4"
    assert early.lines("penalty")[0]["to"] == "black"
    assert early.result is None
    right = play(cycle * 2 + "Xw")
    assert right.result == ("1/2-1/2", "threefold-repetition")


def test_threefold_claim_with_the_declared_move_on_the_board() -> None:
    cycle = "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Cb "
    out = play(cycle + "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Xb")
    assert out.result == ("1/2-1/2", "threefold-repetition")
    assert out.sans[-1] == "Ng8"


def test_fifty_move_claim() -> None:
    out = play("-a1 +a2 Cw -h8 +g8 Xw", "7k/8/8/8/8/8/8/R3K3 w - - 99 80")
    assert out.result == ("1/2-1/2", "fifty-moves")


def test_draw_offer_and_acceptance() -> None:
    out = play("-e2 +e4 Cw -e7 +e5 Ob Cb Aw")
    assert out.result == ("1/2-1/2", "agreement")


def test_draw_agreement_needs_a_move_each() -> None:
    out = play("-e2 +e4 Ow Cw Ab")
    assert out.result is None


def test_resignation() -> None:
    assert play("-e2 +e4 Cw Rb").result == ("1-0", "resignation")
    assert play("Rw").result == ("0-1", "resignation")


def test_resignation_against_a_lone_king_is_a_draw() -> None:
    out = play("Rb", "4k3/8/8/8/8/8/4P3/4K3 b - - 0 1")
    # Black resigns but White has a pawn: a win. Against a bare king it would be a draw:
    assert out.result == ("1-0", "resignation")
    out = play("Rw", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    assert out.result == ("1/2-1/2", "resignation")


def test_no_clock_capture_reply_victim_first() -> None:
    # 1. e4 d5 2. exd5 with Black's d-pawn taken victim first; then Qxd5 victim first.
    out = play("-e2 +e4 ~1 -d7 +d5 ~1 -d5 -e4 +d5 ~1 -d5 -d8 +d5")
    assert out.sans == ["e4", "d5", "exd5", "Qxd5"]
    assert out.alerts == []


def test_starting_from_a_fen() -> None:
    out = play("-e5 +f6 -f5 Cw -e8 +f7", EP_WHITE)
    assert out.sans == ["exf6", "Kf7"]
    assert out.record.pgn_game().headers["FEN"] == chess.Board(EP_WHITE).fen()


KXD5 = "4k3/8/2p5/3p1p2/4K3/8/8/8 w - - 0 1"
NF3 = "rnbqkbnr/ppp2ppp/8/3pp3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq d6 0 3"


@pytest.mark.parametrize("script, fen", [
    ("-e4 -d5 +d5 Cw", KXD5),  # the king takes a defended pawn
    ("-f3 -d5 +d5 Cw", NF3),  # the knight "takes" a pawn it cannot reach
    ("-a1 -b2 +b2 Cw", "4k3/8/8/8/8/8/1pP5/N3K3 w - - 0 1"),  # not a dead sensor either
])
def test_an_illegal_capture_is_not_taken_for_another_legal_capture(script: str, fen: str) -> None:
    out = play(script + " ~1 T", fen, time_control="600")
    assert out.sans == []
    assert out.alerts == ["illegal-move"]


def test_a_piece_in_hand_at_the_press_waits_the_grace() -> None:
    out = play("-f3 ~0.5 Cw @0.15 +d4 ~1 -b8 +c6 Cb", NF3)
    assert out.sans == ["Nd4", "Nc6"] and out.alerts == []


def test_a_piece_in_hand_is_not_completed_by_the_opponents_offer() -> None:
    out = play("-f3 ~0.5 Ob ~1 +f3 Cw", NF3)
    assert out.sans == [] and out.alerts == ["clock-no-move"]


def test_a_touched_and_replaced_enemy_piece_is_not_the_victim() -> None:
    # c5 touched and put back, then the bishop takes e5 unseen: nothing says which.
    out = play("-c5 ~0.5 +c5 -d4 ~0.5 Cw ~1 -c5 +c4 Cb", TWO_TARGETS)
    assert out.sans == ["Bxe5", "c4"]  # the reply decides (c5 stood there all along)
    assert out.alerts == ["touch-move"]  # 4.3.2: the touched c5 pawn was not captured


def test_own_and_enemy_touched_in_either_order_the_own_piece_must_take() -> None:
    fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 0 2"
    for script in ("-d5 -c3 +c3 -e4 +d5 Cw", "-c3 +c3 -d5 -e4 +d5 Cw"):
        out = play(script, fen)
        assert out.sans == ["exd5"]
        assert out.alerts == ["touch-move"] and "4.3.3" in out.alert("touch-move")["text"]


def test_king_and_rook_touched_must_castle() -> None:
    out = play("-e1 -h1 +h1 +f1 Cw", BOTH_CASTLE)
    assert out.sans == ["Kf1"]
    assert out.alerts == ["touch-move"] and "4.4.1" in out.alert("touch-move")["text"]


def test_ambiguous_capture_the_press_switches_the_clock() -> None:
    out = play("-d4 Cw ~58.6 -c5 +c4 Cb", TWO_TARGETS, time_control="60")
    assert out.sans == ["Bxe5", "c4"] and out.result is None


def test_ambiguous_capture_decided_when_the_opponent_presses() -> None:
    out = play("-d4 Cw ~1 -e8 +d8 Cb -e1 +e2 Cw -d8 +e8 Cb", TWO_TARGETS)
    assert len(out.sans) == 4 and out.sans[1:] == ["Kd8", "Ke2", "Ke8"]
    assert "capture square not seen" in out.record.pgn_text()
    assert out.alerts == []


def test_ambiguous_capture_kept_when_the_opponent_resigns() -> None:
    out = play("-d4 Cw ~1 Rb", TWO_TARGETS)
    assert len(out.sans) == 1 and out.result == ("1-0", "resignation")


def test_press_inside_the_grace_stops_the_flag() -> None:
    out = play("-b7 +b8 ~7.7 Cw ~1 T", PROMO, time_control="10")
    assert out.sans == ["b8=Q+"] and out.result is None


def test_a_mate_on_the_board_beats_the_flag() -> None:
    out = play("-f2 +f3 Cw -e7 +e5 Cb -g2 +g4 Cw -d8 ~7.6 +h4 ~0.2 Cb", time_control="10")
    assert out.result == ("0-1", "checkmate")


def test_draw_offered_with_the_move_then_accepted() -> None:
    out = play("-e2 +e4 Cw -e7 +e5 Ob Aw")
    assert out.result == ("1/2-1/2", "agreement")
    assert out.record.comments == {2: ["Black offers a draw (=)"]}  # after 1... e5


def test_a_move_made_while_the_link_was_down_is_taken_from_the_scan() -> None:
    from board_ctl.core import events as ev
    from board_ctl.core.profiles import PROFILES
    from board_ctl.replay import feed_all, new_game
    from board_ctl.sensorlog import StartInfo

    referee, record = new_game(StartInfo(), PROFILES["fide"])
    feed_all(referee, record, [ev.Lifted(1.0, chess.E2), ev.Placed(1.5, chess.E4),
                               ev.ClockPressed(2.0, chess.WHITE)])
    # Link down: Black plays e5 and White lifts the g1 knight; then a scan.
    board = chess.Board()
    board.push_uci("e2e4")
    board.push_uci("e7e5")
    record.extend(referee.feed(ev.Snapshot(9.0, board.occupied & ~chess.BB_G1)))
    record.extend(referee.feed(ev.Placed(10.0, chess.F3)))
    record.extend(referee.feed(ev.ClockPressed(10.5, chess.WHITE)))
    assert [m.san for m in record.moves] == ["e4", "e5", "Nf3"]
    assert not [line for line in record.report if line["kind"] == "alert"]


def test_a_snapshot_that_no_single_move_explains_asks_for_a_restore() -> None:
    from board_ctl.core import events as ev
    from board_ctl.core.profiles import PROFILES
    from board_ctl.replay import feed_all, new_game
    from board_ctl.sensorlog import StartInfo

    referee, record = new_game(StartInfo(), PROFILES["fide"])
    feed_all(referee, record, [ev.Snapshot(1.0, chess.BB_RANK_1 | chess.BB_RANK_8),
                               ev.Tick(3.0)])
    assert record.moves == []
    assert [line["code"] for line in record.report if line["kind"] == "alert"] == [
        "position-mismatch"]
    feed_all(referee, record, [ev.Snapshot(4.0, chess.Board().occupied), ev.Lifted(5.0, chess.E2),
                               ev.Placed(5.5, chess.E4), ev.ClockPressed(6.0, chess.WHITE)])
    assert [m.san for m in record.moves] == ["e4"]
    assert not [line for line in record.report if line.get("code") == "touch-move"]


def test_moves_lost_in_an_outage_bring_no_penalty_until_the_board_agrees() -> None:
    from board_ctl.core import events as ev
    from board_ctl.core.profiles import PROFILES
    from board_ctl.replay import feed_all, new_game
    from board_ctl.sensorlog import StartInfo

    referee, record = new_game(StartInfo(), PROFILES["fide"])
    feed_all(referee, record, [ev.Lifted(1.0, chess.E2), ev.Placed(1.5, chess.E4),
                               ev.ClockPressed(2.0, chess.WHITE)])
    # Link down while 1...e5 2.Nf3 Nc6 are played: three moves, too many to tell apart.
    board = chess.Board()
    for move in ("e2e4", "e7e5", "g1f3", "b8c6"):
        board.push_uci(move)
    feed_all(referee, record, [ev.Snapshot(20.0, board.occupied), ev.Lifted(21.0, chess.F1),
                               ev.Placed(21.5, chess.B5), ev.ClockPressed(22.0, chess.WHITE),
                               ev.Lifted(23.0, chess.A7), ev.Placed(23.5, chess.A6),
                               ev.ClockPressed(24.0, chess.BLACK), ev.Tick(25.0)])
    codes = [line["code"] for line in record.report if line["kind"] == "alert"]
    assert [m.san for m in record.moves] == ["e4"]
    assert "position-mismatch" in codes and "illegal-move" not in codes
    assert not [line for line in record.report if line["kind"] == "penalty"]
    assert referee.illegal_moves == {chess.WHITE: 0, chess.BLACK: 0}
    # The players put the position back as it was after 1.e4: play goes on, and a real
    # irregularity is judged again.
    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")
    feed_all(referee, record, [ev.Snapshot(40.0, after_e4.occupied), ev.Lifted(41.0, chess.E7),
                               ev.Placed(41.5, chess.E5), ev.ClockPressed(42.0, chess.BLACK),
                               ev.Lifted(43.0, chess.G1), ev.Placed(43.5, chess.G3),
                               ev.ClockPressed(44.0, chess.WHITE), ev.Tick(45.0)])
    assert [m.san for m in record.moves] == ["e4", "e5"]
    assert [line["to"] for line in record.report if line["kind"] == "penalty"] == ["black"]


def test_threefold_claim_made_before_the_declared_move() -> None:
    cycle = "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Cb "
    out = play(cycle + "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw Xb -f6 +g8")  # 9.2.1
    assert out.result == ("1/2-1/2", "threefold-repetition") and out.alerts == []


# -- issue 9 §5: what the referee got wrong -------------------------------------------------

PHANTOM = "3q1r2/6k1/p2pQb2/4pR1p/4B3/2P3P1/P4PK1/8 w - - 0 1"


@pytest.mark.parametrize("time_control", [None, "5400+30"])
def test_a_victim_set_down_a_moment_elsewhere_is_no_reply(time_control: str | None) -> None:
    # Rxh5: the rook lifted, the pawn lifted and set down on h4 (where it could move) for
    # half a second, then taken off; the rook lands on h5. Once read as Rxf6 answered by
    # ...h4, then Rxh5 judged illegal with a penalty.
    out = play("-f5 ~0.4 -h5 @0.15 +h4 ~0.5 -h4 ~0.3 +h5 ~0.8 Cw", PHANTOM,
               time_control=time_control)
    assert out.sans == ["Rxh5"] and out.alerts == []


def test_a_knocked_piece_and_the_move_beside_it_are_no_phantom_capture() -> None:
    # The knight lifted from h7 (it could take f8), Black's bishop knocked off d4, the
    # knight put on f6, the bishop back 3 s later, then the press: Nf6 with the bishop
    # displaced (7.4), never Nxf8 answered by ...Bf6. (Without a clock nothing but the
    # reply completes a capture pushed off unseen, and such a board is that reply.)
    out = play("-h7 -d4 @0.5 +f6 ~3 +d4 Cw", "5r1k/7N/8/8/3b4/8/8/4K3 w - - 0 1",
               time_control="5400+30")
    assert out.sans == ["Nf6"]
    assert out.alerts == ["position-mismatch"]
    assert out.alert("position-mismatch")["squares"] == ["d4"]


def test_a_displaced_own_piece_after_the_move_is_released_is_flagged() -> None:
    # Nf3 released on f3 while the e2 pawn, knocked off, stays away 3 s before the press.
    out = play("-g1 -e2 @0.4 +f3 ~3 +e2 Cw")
    assert out.sans == ["Nf3"] and out.alerts == ["position-mismatch"]
    mismatch = out.alert("position-mismatch")
    assert mismatch["squares"] == ["e2"] and "put back the pieces on e2" in mismatch["text"]
    frames = [f for f in out.lines("leds") if f["guidance"] or "e2" in f["squares"]]
    assert {"e2": ["green", "slow"]}.items() <= frames[0]["squares"].items()
    assert [c["code"] for c in out.lines("clear")] == ["position-mismatch"]
    # Put back within 1.5 s: nothing to say.
    assert play("-g1 -e2 @0.4 +f3 ~1 +e2 Cw").alerts == []
    # An own piece simply held before any move is released stays silent, as always.
    assert play("-g1 -e2 ~3 +e2 +f3 Cw").alerts == []


def test_each_sides_promotion_choice_is_its_own_without_a_clock() -> None:
    # White sets B and promotes on e8; Black lifts d2 and sets N 61 ms later (inside the
    # debounce of his lift) to promote on d1. The single stored choice once became N,
    # and White got a queen.
    out = play("=b -e7 +e8 ~2 -d2 @0.061 =n @0.4 +d1 ~2 -h1 +h2",
               "k7/4P3/8/8/8/8/3p4/7K w - - 0 1")
    assert out.sans == ["e8=B", "d1=N", "Kh2"] and out.alerts == []


def test_a_promotion_piece_put_down_first_on_the_square_a_capture_left() -> None:
    # Black's rook takes a8 from e8; White puts his new queen on e8 before lifting the
    # pawn (4.6): the occupancy is the one before Rxa8 for a moment; the capture stands.
    out = play("-e8 -a8 +a8 ~2 +e8 ~1 -e7 ~3 -h8 +h7", "R3r2k/4P3/8/8/8/8/7K/8 b - - 0 1")
    assert out.sans == ["Rxa8", "e8=Q+", "Kh7"] and out.alerts == []
