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
from board_ctl.simulate import RenderedGame, RenderStyle, render_game
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
    expected = rendered.moves
    if not style.use_clock and last_capture_unseen(rendered):
        expected = expected[:-1]
    assert replayed.moves == expected
    assert replayed.alerts == []


def last_capture_unseen(rendered: RenderedGame) -> bool:
    """The log ends on a capture no event shows landing (a push-off: the victim swept off
    as the piece comes down, its sensor never open), with nothing after it (no press, no
    game end). To the board that is a piece still in hand, and a log's end records no
    move its piece was not seen to make (test_log_end.py)."""
    if not rendered.moves:
        return False
    board = rendered.final_board()
    if board.is_game_over(claim_draw=False):
        return False
    last = board.pop()
    if not board.is_capture(last):
        return False
    target = chess.square_name(last.to_square)
    origin = chess.square_name(last.from_square)
    lifted = max(i for i, line in enumerate(rendered.lines)
                 if line.get("ev") == "lift" and line.get("sq") == origin)
    return not any(line.get("ev") == "place" and line.get("sq") == target
                   for line in rendered.lines[lifted:])


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
