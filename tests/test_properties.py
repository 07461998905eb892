"""Property: any legal game, rendered in any human-like way, replays to the same moves
with no alert at all."""

from __future__ import annotations

import io

import chess
import chess.pgn
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.record import GameRecord
from board_ctl.replay import replay_events
from board_ctl.sensorlog import StartInfo
from board_ctl.simulate import RenderStyle, render_game
from corpus import replay_rendered


@st.composite
def legal_games(draw: st.DrawFn) -> chess.pgn.Game:
    board = chess.Board()
    plies = draw(st.integers(min_value=1, max_value=120))
    for _ in range(plies):
        moves = sorted(board.legal_moves, key=lambda m: m.uci())
        if not moves or board.is_game_over(claim_draw=False):
            break
        board.push(draw(st.sampled_from(moves)))
    return chess.pgn.Game.from_board(board)


weights = st.floats(min_value=0.0, max_value=1.0)

styles = st.builds(
    RenderStyle,
    use_clock=st.booleans(),
    bounce=st.booleans(),
    bounce_prob=weights,
    slides=st.booleans(),
    slide_prob=weights,
    capture_styles=st.tuples(weights, weights, weights, weights).filter(lambda w: sum(w) > 0),
    castling_styles=st.tuples(weights, weights).filter(lambda w: sum(w) > 0),
    promotion_styles=st.tuples(weights, weights).filter(lambda w: sum(w) > 0),
    idle_lift_prob=st.floats(min_value=0.0, max_value=0.3),
    claim_draws=st.just(False),
    resign=st.just(False),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=legal_games(), style=styles, seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_any_legal_game_any_rendering_replays_exactly(
    game: chess.pgn.Game, style: RenderStyle, seed: int
) -> None:
    check_replays_exactly(game, style, seed)


def check_replays_exactly(game: chess.pgn.Game, style: RenderStyle, seed: int) -> None:
    rendered = render_game(game, seed=seed, style=style)
    replayed = replay_rendered(rendered)
    expected = rendered.moves
    alerts: list[str] = []
    if rendered.ends_with_capture_in_hand():
        # a piece still in hand at the log's end: not recorded, and said (move-unfinished)
        expected, alerts = expected[:-1], ["move-unfinished"]
    assert replayed.moves == expected
    assert replayed.alerts == alerts


FOUND = ("g2g4 c7c6 e2e4 b8a6 b1c3 a8b8 a1b1 d8a5 g1e2 a6b4 h2h4 e7e5 g4g5 a5a4 a2a3 b7b6 "
         "d2d4 c6c5 d4d5 b4c2 d1c2 c5c4 b2b3 a4a6 c3b5 a6b5 e2c3 a7a5 c2a2 b8b7 e1d1 b5b4 "
         "f1g2 b7b8 a2a1 c4b3 a1a2 b8b7 a2a1 b4c3 a1a2 b3b2 h1f1 c3a3 f1h1 a3b3 a2b3 a5a4 "
         "f2f4 b7b8 h1h2 a4b3 b1a1 f7f5 a1a2 e8e7 a2a1 b2c1q a1c1 h7h5 e4f5 e7d8 c1a1 c8a6 "
         "a1a6 f8c5 a6a1 b6b5 a1a2 c5d4 a2a1 b3b2 a1a2 d4g1 a2a1 b2a1b d1c1")


def found_game(ucis: str) -> chess.pgn.Game:
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    for uci in ucis.split():
        node = node.add_variation(chess.Move.from_uci(uci))
    return game


def test_a_promotion_capture_set_down_just_past_the_debounce_without_a_clock() -> None:
    # Found by the property test above: without a clock, bxc1=Q (the victim lifted, the
    # pawn set down 100.6 ms later and replaced), then Rxc1 from a1 (the queen swept off
    # unseen): the rook's lift read as bxa1 under way, the promotion never completed. The
    # class: tests/test_reading.py, a promotion completed by a reply of a piece it could
    # have taken.
    style = RenderStyle(use_clock=False, bounce=False, bounce_prob=0.0, slides=False,
                        slide_prob=0.0, capture_styles=(0.0, 1.0, 0.0, 1.0),
                        castling_styles=(0.0, 1.0),
                        promotion_styles=(0.42912490451621055, 0.1145003648996337),
                        idle_lift_prob=0.1700675150640139, claim_draws=False, resign=False)
    check_replays_exactly(found_game(FOUND), style, 138369763)


raw_events = st.lists(
    st.tuples(
        st.floats(min_value=0.0, max_value=3.0),
        st.sampled_from(["lift", "place", "clock", "promote", "offer", "accept", "claim"]),
        st.integers(min_value=0, max_value=63),
        st.booleans(),
    ),
    max_size=200,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(script=raw_events, profile=st.sampled_from(["fide", "rapid", "casual"]))
def test_any_event_sequence_gives_a_legal_game_record(script: list, profile: str) -> None:
    """Noise never crashes the referee and never puts an illegal move in the record."""
    t, events = 0.0, []
    occupied = chess.Board().occupied
    for gap, kind, square, side in script:
        t += gap
        bit = chess.BB_SQUARES[square]
        if kind in ("lift", "place"):
            # Raw toggles as a real sensor gives them: a lift only where it is occupied.
            kind = "lift" if occupied & bit else "place"
            occupied ^= bit
            events.append(ev.Lifted(t, square) if kind == "lift" else ev.Placed(t, square))
        elif kind == "clock":
            events.append(ev.ClockPressed(t, side))
        elif kind == "promote":
            events.append(ev.PromotionChosen(t, chess.KNIGHT if side else chess.ROOK))
        elif kind == "offer":
            events.append(ev.DrawOffered(t, side))
        elif kind == "accept":
            events.append(ev.DrawAccepted(t, side))
        else:
            events.append(ev.DrawClaimed(t, side))
    record: GameRecord = replay_events(StartInfo(), events, PROFILES[profile])
    board = chess.Board()
    for made in record.moves:
        assert made.move in board.legal_moves
        board.push(made.move)
    assert chess.pgn.read_game(io.StringIO(record.pgn_text())) is not None
