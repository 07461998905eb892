"""The LED frame's shortcut (nothing lit, the side to move shown) must give exactly the
frame the full builder gives, whatever the view holds: every field the builder reads is
one the shortcut has to rule out (a computer's status was once lost this way)."""

from __future__ import annotations

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core.effects import Alert, Blink, Colour, GameOver, Remote, SquareLight
from board_ctl.core.leds import LedView, full_led_frame, led_frame

squares = st.integers(min_value=0, max_value=63)
bitboards = st.integers(min_value=0, max_value=2**64 - 1)
alerts = st.builds(Alert, t=st.just(1.0), code=st.sampled_from(
    ["touch-move", "illegal-move", "position-mismatch", "move-changed", "wrong-side"]),
    side=st.sampled_from([chess.WHITE, chess.BLACK, None]),
    squares=st.tuples(squares), text=st.just("x"))
lights = st.builds(SquareLight, squares, st.sampled_from(list(Colour)),
                   st.sampled_from(list(Blink)))
results = st.builds(GameOver, t=st.just(2.0), result=st.sampled_from(["1-0", "0-1", "1/2-1/2"]),
                    termination=st.just("checkmate"))


@st.composite
def views(draw: st.DrawFn) -> LedView:
    board = chess.Board()
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        moves = list(board.legal_moves)
        board.push(moves[draw(st.integers(min_value=0, max_value=len(moves) - 1))])
    empty = st.just
    return LedView(
        board=board,
        occupied=board.occupied if draw(st.booleans()) else draw(bitboards),
        expected=board.occupied,
        alerts=draw(st.one_of(empty(()), st.tuples(alerts))),
        candidates=draw(st.one_of(empty(()), st.tuples(squares))),
        must_move=draw(st.one_of(st.none(), squares)),
        result=draw(st.one_of(st.none(), results)),
        faulty=draw(st.one_of(empty(0), bitboards)),
        shown=draw(st.one_of(empty(()), st.tuples(lights))),
        remote=draw(st.sampled_from(list(Remote))),
        promotion=draw(st.one_of(st.none(), st.sampled_from([chess.QUEEN, chess.KNIGHT]))),
        restoring=draw(st.booleans()),
    )


@settings(max_examples=150, deadline=None)
@given(views())
def test_the_shortcut_gives_the_full_builders_frame(view: LedView) -> None:
    assert led_frame(3.0, view) == full_led_frame(3.0, view)


def test_the_shortcut_is_taken_for_a_quiet_position_and_shows_the_side_to_move() -> None:
    board = chess.Board()
    board.push_san("e4")
    view = LedView(board, board.occupied, board.occupied, (), (), None, None)
    frame = led_frame(0.5, view)
    assert frame == full_led_frame(0.5, view)
    assert frame.squares == () and frame.status.black_to_move and not frame.status.white_to_move


def test_a_computers_status_survives_an_otherwise_quiet_view() -> None:
    board = chess.Board()
    view = LedView(board, board.occupied, board.occupied, (), (), None, None,
                   remote=Remote.THINKING)
    assert led_frame(0.0, view).status.remote is Remote.THINKING
