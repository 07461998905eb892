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
    rendered = render_game(game, seed=seed, style=style)
    replayed = replay_rendered(rendered)
    assert replayed.moves == rendered.moves
    assert replayed.alerts == []


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
