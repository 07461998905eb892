"""An online game without a clock (`board-ctl run --livechess`, the start line's
`release_completes`): one person makes both sides' moves, the online opponent's only once
the page has shown the last move, so each move must complete once its piece is released
and the board has settled, never waiting for the reply to begin.

Real games (the corpus) rendered by the simulator without a clock, every ply begun only
after a pause longer than any hold: each move must be recorded before the next ply's
first event, exactly, with no alert; without the option the same logs record each move
only when the reply begins (what deadlocked lichess.org/dgt)."""

from __future__ import annotations

import io

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.effects import Alert, MoveMade
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.core.rules.remote import PROMOTION_RELEASE
from board_ctl.replay import replay_log
from board_ctl.sensorlog import StartInfo, read_sensor_log, start_to_json
from board_ctl.simulate import RenderStyle, render_game
from board_ctl.simulate.render import RenderedGame
from corpus import corpus, has_move

# The next ply begins only after the page showed the last move: longer than any hold
# (a promotion with no piece chosen waits PROMOTION_RELEASE after the placement).
WAIT = (PROMOTION_RELEASE + 0.5, PROMOTION_RELEASE + 2.0)
# Without a clock a capture must be seen landing ("swap-no-blip", a swap so fast the
# square never reads empty, is left out: presence cannot tell it from a piece in hand).
ONLINE = RenderStyle(use_clock=False, think=WAIT, long_think_prob=0.0,
                     capture_styles=(0.3, 0.3, 0.2, 0.0, 0.2), resign=False,
                     claim_draws=False)


def plies_recorded_in_time(rendered: RenderedGame, release_completes: bool
                           ) -> tuple[list[int], list[chess.Move], list[str]]:
    """Feed the rendered log; for each ply after the first, how many moves were recorded
    before its first event; and every move and alert code recorded."""
    log = read_sensor_log(io.StringIO(rendered.jsonl()))
    assert not log.errors, log.errors
    referee = Referee(log.start.fen, PROFILES["fide"], release_completes=release_completes)
    moves: list[chess.Move] = []
    alerts: list[str] = []
    firsts = {trace.first_line: trace.ply for trace in rendered.plies}
    before: list[int] = []
    for line, event in zip(log.lines, log.events):
        if firsts.get(line - 1, 0) > 0:  # (log.lines count from 1, the start line too)
            # a Tick just before: what the board has done by itself by then
            record(referee.feed(ev.Tick(max(referee.now, event.t - 0.001))), moves, alerts)
            before.append(len(moves))
        record(referee.feed(event), moves, alerts)
    record(referee.finish(), moves, alerts)
    return before, moves, alerts


def record(effects: list[object], moves: list[chess.Move], alerts: list[str]) -> None:
    for effect in effects:
        if isinstance(effect, MoveMade):
            moves.append(effect.move)
        elif isinstance(effect, Alert):
            alerts.append(effect.code)


def check_game(game: chess.pgn.Game, seed: int) -> None:
    rendered = render_game(game, seed=seed, style=ONLINE)
    before, moves, alerts = plies_recorded_in_time(rendered, release_completes=True)
    assert moves == rendered.moves, [p.style for p in rendered.plies]
    assert alerts == []
    # (an idle lift is rendered right after the opponent's move, before any wait: the
    # reply begun may complete that move first, as at any board)
    late = [(i + 1, rendered.plies[i + 1].style, n) for i, n in enumerate(before)
            if n != i + 1 and not any(note.startswith("idle-lift")
                                      for note in rendered.plies[i + 1].notes)]
    assert late == [], late  # (ply, how it was made, moves recorded before it began)


def special(game: chess.pgn.Game) -> bool:
    return (has_move(game, chess.Board.is_castling) and has_move(game, chess.Board.is_en_passant)
            and has_move(game, lambda b, m: m.promotion is not None))


GAMES = [g for g in corpus() if special(g)]


@pytest.mark.parametrize("seed", range(3))
def test_each_move_completes_once_released_before_the_next_begins(seed: int) -> None:
    check_game(GAMES[seed], seed)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(corpus()) - 1), seed=st.integers(0, 10**6))
def test_any_game_online_without_a_clock(index: int, seed: int) -> None:
    check_game(corpus()[index], seed)


def test_without_the_option_a_move_waits_for_the_reply() -> None:
    """The same log for a game at the board: the reply completes the move (as ever)."""
    rendered = render_game(GAMES[0], seed=0, style=ONLINE)
    before, moves, _ = plies_recorded_in_time(rendered, release_completes=False)
    assert moves == rendered.moves
    assert before == list(range(len(before)))  # each one move behind


def test_with_a_clock_the_press_still_completes_the_move() -> None:
    """With a clock, a move left unpressed is not complete, however long it stands."""
    referee = Referee(profile=PROFILES["fide"], release_completes=True,
                      time_control=None)
    referee.feed(ev.ClockPressed(0.5, chess.BLACK))  # a clock in use: Black's lever starts it
    effects = [*referee.feed(ev.Lifted(1.0, chess.E2)), *referee.feed(ev.Placed(1.5, chess.E4))]
    effects += referee.feed(ev.Tick(9.0))
    assert not [e for e in effects if isinstance(e, MoveMade)]
    effects = referee.feed(ev.ClockPressed(9.5, chess.WHITE))
    assert [e.move for e in effects if isinstance(e, MoveMade)] == [chess.Move.from_uci("e2e4")]


def test_the_start_line_keeps_the_option_and_a_replay_follows_it() -> None:
    rendered = render_game(GAMES[0], seed=1, style=ONLINE)
    lines = rendered.jsonl().splitlines()
    start = StartInfo(fen=rendered.start_fen, release_completes=True)
    import json
    lines[0] = json.dumps(start_to_json(start))
    assert '"release_completes": true' in lines[0]
    log = read_sensor_log(io.StringIO("\n".join(lines) + "\n"))
    assert log.start.release_completes and not log.errors
    assert [m.move for m in replay_log(log, PROFILES["fide"]).moves] == rendered.moves
    bad = read_sensor_log(io.StringIO(lines[0].replace("true", '"yes"') + "\n"))
    assert not bad.start.release_completes
    assert any("release_completes" in p for p in bad.start.problems)
