"""The LED frame's shortcut (nothing lit, the side to move shown) must give exactly the
frame the full builder gives, whatever the view holds: every field the builder reads is
one the shortcut has to rule out (a computer's status was once lost this way)."""

from __future__ import annotations

import sys
from pathlib import Path

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.effects import Alert, Blink, Colour, GameOver, LedFrame, Remote, SquareLight
from board_ctl.core.leds import LedView, full_led_frame, led_frame
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderStyle, render_game

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


@settings(max_examples=100, deadline=None)
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


def _games() -> list[tuple[str, str, list[ev.Event]]]:
    """Corpus games that end in mate, rendered with and without a clock (every capture and
    promotion style, bounces), and a capture whose square the board could not see."""
    sys.path.insert(0, str(Path(__file__).parent))
    from corpus import corpus

    styles = {"clock": RenderStyle(bounce_pairs=(0, 4)),
              "no clock": RenderStyle(use_clock=False, capture_styles=(1, 1, 1, 1, 1),
                                      promotion_styles=(1, 1, 1))}
    mates = [g for g in corpus() if g.end().board().is_checkmate()][:4]
    cases = []
    for i, game in enumerate(mates):
        for name, style in styles.items():
            log = read_sensor_log(render_game(game, seed=i, style=style).jsonl().splitlines())
            cases.append((f"mate {i}, {name}", log.start.fen, list(log.events)))
    # Irregularities whose alerts make the LEDs show the board itself (what to put back):
    # then a frame follows the occupancy too.
    from sim2 import NotApplicable, render_case

    for kind in ("illegal", "illegal-capture", "knock", "displace"):
        found = 0
        for i, game in enumerate(corpus()[:12]):
            if found == 2:
                break
            try:
                case = render_case(game, 100 + i, violation=kind, violation_ply=9,
                                   max_plies=24, clock=found == 0)
            except NotApplicable:
                continue
            found += 1
            log = read_sensor_log(case.jsonl().splitlines())
            cases.append((f"{kind} {i}", log.start.fen, list(log.events)))
    unseen = [ev.Lifted(1.0, chess.E4), ev.ClockPressed(2.0, chess.WHITE), ev.Tick(3.0),
              ev.Lifted(4.0, chess.E8), ev.Placed(4.5, chess.E7), ev.Tick(5.0)]
    cases.append(("exd5 or exf5", "4k3/8/8/3p1p2/4P3/8/8/4K3 w - - 0 1", unseen))
    return cases


@pytest.mark.parametrize("name,fen,events", _games(), ids=lambda v: v if isinstance(v, str)
                         and len(v) < 30 else "")
def test_the_referee_always_shows_its_view(name: str, fen: str, events: list[ev.Event]) -> None:
    """After every event, the frame last sent is the full builder's frame of the referee's
    view: the referee's own shortcuts (no frame while the view's signature stands, the
    nothing-lit frame built without the view) never leave the LEDs showing something else."""
    referee = Referee(fen, PROFILES["fide"])
    shown: LedFrame | None = None
    lit = 0
    restoring = False
    for event in [*events, None]:  # (None: the log ends)
        for effect in referee.feed(event) if event is not None else referee.finish():
            if isinstance(effect, LedFrame):
                shown = effect
        assert shown is not None
        view = full_led_frame(referee.now, referee.led_view())
        assert (shown.squares, shown.status, shown.guidance) == (
            view.squares, view.status, view.guidance), f"after {event}"
        lit += bool(view.squares)
        restoring = restoring or referee.out.restoring
    assert 0 < lit < len(events) // 2 + 2  # (the end, or the candidates: lit; the rest not)
    # (the irregularities' logs do reach a state where the frame follows the occupancy)
    assert restoring == (name.split()[0] in ("illegal", "illegal-capture", "knock", "displace"))
