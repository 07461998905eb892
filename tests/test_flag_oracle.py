"""Players overrunning their time in real games: the replay's flags and [%clk] checked
against an independent clock computed here from the log's presses alone.

The games are rendered by the simulator (a human's pace: 0.3-8 s a move, now and then
up to 40 s) and given a time control short enough that someone runs out mid-game. The
oracle below is deliberately plain arithmetic in whole milliseconds, sharing nothing
with board_ctl.core.clock.
"""

from __future__ import annotations

import io
import random

import chess
import pytest

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_log
from board_ctl.sensorlog import StartInfo, read_sensor_log
from board_ctl.simulate import RenderStyle, render_game
from corpus import corpus


def ms(seconds: float) -> int:
    return round(seconds * 1000)


def oracle(events: list[ev.Event], base: int, inc: int, delay: str, turn: bool
           ) -> tuple[list[int], tuple[bool, int] | None]:
    """Each completed move's [%clk] in ms, and the flag (side, ms) if one falls.

    ``delay``: "" Fischer (``inc`` added), "d" simple delay (the first ``inc`` seconds of
    a turn are free), "b" Bronstein (the time used, up to ``inc``, is given back)."""
    left = {True: base * 1000, False: base * 1000}
    since, clocks = 0, []
    free = inc * 1000 if delay == "d" else 0
    end = ms(events[-1].t)
    for event in events:
        if not isinstance(event, ev.ClockPressed) or event.side != turn:
            continue
        used = ms(event.t) - since
        if used >= left[turn] + free:
            return clocks, (turn, since + left[turn] + free)
        if delay == "d":
            left[turn] -= max(used - free, 0)
        elif delay == "b":
            left[turn] -= used
            left[turn] += min(used, inc * 1000)
        else:
            left[turn] += inc * 1000 - used
        clocks.append(left[turn])
        turn, since = not turn, ms(event.t)
    if end >= since + left[turn] + free:  # the log ends after the side to move ran out
        return clocks, (turn, since + left[turn] + free)
    return clocks, None


def run(index: int, form: str) -> tuple[int, int]:
    """(moves checked, flags checked) for game `index` under a control of shape `form`."""
    game = corpus()[index]
    rendered = render_game(game, seed=index, style=RenderStyle(use_clock=True))
    log = read_sensor_log(io.StringIO(rendered.jsonl()))
    presses = [e for e in log.events if isinstance(e, ev.ClockPressed)]
    # a base that runs out around mid-game for the slower player
    used = {True: 0.0, False: 0.0}
    turn, since = chess.Board(log.start.fen).turn, 0.0
    for press in presses:
        if press.side == turn:
            used[turn] += press.t - since
            turn, since = not turn, press.t
    rng = random.Random(index)
    base = max(5, int(max(used.values()) * rng.uniform(0.35, 0.8)))
    inc = rng.randint(1, 3)
    tc = {"": f"{base}+{inc}", "d": f"{base}d{inc}", "b": f"{base}b{inc}"}[form]
    start = StartInfo(fen=log.start.fen, tags=log.start.tags, time_control=tc)
    record = replay_log(type(log)(start, log.events, log.errors), PROFILES["fide"])
    clocks, flag = oracle(log.events, base, inc, form, chess.Board(log.start.fen).turn)
    got = [ms(m.clock) for m in record.moves if m.clock is not None]
    assert len(got) == len(record.moves)
    if flag is None:
        assert record.result is None or record.result.termination != "time-forfeit"
        assert got[:len(clocks)] == clocks[:len(got)]
        return len(got), 0
    side, at = flag
    assert record.result is not None, f"game {index} {tc}: no result, flag due at {at} ms"
    assert record.result.termination == "time-forfeit", (index, tc, record.result)
    board = chess.Board(log.start.fen)
    for made in record.moves:
        board.push(made.move)
    winner_can_mate = not board.has_insufficient_material(not side)
    want = ("0-1" if side else "1-0") if winner_can_mate else "1/2-1/2"
    assert record.result.result == want
    alerts = [line for line in record.report if line["kind"] == "alert"]
    assert [a["code"] for a in alerts] == ["flag"]
    assert ms(alerts[0]["t"]) == at and alerts[0]["side"] == ("white" if side else "black")
    assert got == clocks  # every move completed before the flag, to the millisecond
    return len(got), 1


@pytest.mark.slow
@pytest.mark.parametrize("form", ["", "d", "b"], ids=["fischer", "simple-delay", "bronstein"])
def test_overrunning_players_in_real_games(form: str) -> None:
    indices = random.Random(form).sample(range(len(corpus())), 30)
    moves = flags = 0
    for index in indices:
        checked, flagged = run(index, form)
        moves, flags = moves + checked, flags + flagged
    assert flags >= 20  # most of these controls are too short for the game
    assert moves > 300
