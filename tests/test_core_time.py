"""Time inside the core is whole microseconds: no magnitude of event time can make a
timer due that never fires, and a time the core cannot represent is refused cleanly.

The old float timers hung for ever (100 % CPU) on Unix-epoch times: at t ~ 2^30 s,
(t + 0.1) - t rounds below the 0.1 s settle time, so the debouncer never settled and the
referee refired the same deadline.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.clock import ChessClock, ClockError
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import MAX_FIRINGS, Referee, TimerStall
from board_ctl.core.timebase import MAX_SECONDS, TimeRangeError, to_us
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import BoardCtlError
from board_ctl.replay import replay_log
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderStyle, render_game
from corpus import corpus
from script import events


@contextlib.contextmanager
def hang_guard(seconds: float) -> Iterator[None]:
    """Fail, rather than hang the suite, if the block runs longer than `seconds`."""
    def expired(signum: int, frame: object) -> None:
        raise AssertionError(f"still running after {seconds} s: the referee is spinning")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


EPOCH_LOG = [
    {"t": 1764520000.25, "ev": "lift", "sq": "e2"},
    {"t": 1764520000.90, "ev": "place", "sq": "e4"},
    {"t": 1764520001.40, "ev": "clock", "side": "white"},
]


def test_the_issue_repro_replays_at_once_from_the_command_line(tmp_path: Path) -> None:
    log = tmp_path / "r.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in EPOCH_LOG))
    pgn = tmp_path / "r.pgn"
    done = subprocess.run([sys.executable, "-m", "board_ctl.cli", "replay", str(log),
                           "--pgn", str(pgn)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "1. e4" in pgn.read_text()


def shifted(lines: list[dict], base: float) -> list[str]:
    return [json.dumps(dict(line, t=line["t"] + base) if "t" in line and line["ev"] != "start"
                       else line) for line in lines]


# Every range where the float timers hung (2^26-2^28 s, Unix-epoch 2^30-2^32 s, 2^34-2^36 s)
# and the edges of each.
RANGES = [(2**26, 2**28), (2**30, 2**32), (2**34, 2**36)]


@pytest.mark.slow
@pytest.mark.parametrize("low, high", RANGES, ids=["2^26", "2^30-epoch", "2^34"])
@pytest.mark.parametrize("use_clock", [True, False], ids=["clock", "no-clock"])
def test_real_games_at_any_magnitude_of_time_are_exact(low: int, high: int,
                                                       use_clock: bool) -> None:
    rng = random.Random(f"{low}{use_clock}")
    failures = []
    for index in rng.sample(range(len(corpus())), 4):
        rendered = render_game(corpus()[index], seed=index, style=RenderStyle(use_clock=use_clock))
        for base in (low, high - 3600 * 24, rng.uniform(low, high)):
            log = read_sensor_log(shifted(rendered.lines, base))
            assert not log.errors
            with hang_guard(30):
                record = replay_log(log, PROFILES["fide"])
            if [m.move for m in record.moves] != rendered.moves or any(
                    line["kind"] == "alert" for line in record.report):
                failures.append((index, base))
    assert failures == []


def test_a_board_clock_that_jumps_by_2_to_the_31_ms_45_times() -> None:
    """A board whose heartbeat clock wraps: 45 jumps of 2^31 ms between moves."""
    rendered = render_game(corpus()[17], seed=17)
    shift_ms, lines = 0, []
    assert len(rendered.plies) > 45
    starts = {trace.first_line for trace in rendered.plies[:45]}
    for number, line in enumerate(rendered.lines):
        if number in starts:
            shift_ms += 2**31
        lines.append(dict(line, t=line["t"] + shift_ms / 1000) if line["ev"] != "start"
                     else line)
    log = read_sensor_log([json.dumps(line) for line in lines])
    assert not log.errors and shift_ms == 45 * 2**31
    with hang_guard(30):
        record = replay_log(log, PROFILES["fide"])
    assert [m.move for m in record.moves] == rendered.moves
    assert [line for line in record.report if line["kind"] == "alert"] == []


@pytest.mark.parametrize("bad", [1e16, -1e16, 10**4000, float("inf"), float("-inf"),
                                 float("nan"), MAX_SECONDS * 1.5])
def test_a_time_the_core_cannot_represent_is_refused_and_changes_nothing(bad: float) -> None:
    referee = Referee(debug=True)
    game = events("-e2 +e4 Cw -e7 +e5 Cb -g1 +f3 Cw")
    effects = [e for event in game[:3] for e in referee.feed(event)]
    with pytest.raises(TimeRangeError) as info:
        referee.feed(ev.Lifted(bad, chess.D7))
    assert isinstance(info.value, ValueError) and isinstance(info.value, BoardCtlError)
    assert "finite number of seconds" in str(info.value) and "\n" not in str(info.value)
    for event in game[3:]:  # the game goes on as if the bad event never came
        effects += referee.feed(event)
    effects += referee.finish()
    assert [e.san for e in effects if type(e).__name__ == "MoveMade"] == ["e4", "e5", "Nf3"]


def test_a_1e16_line_in_the_middle_of_a_log_is_one_error_and_the_rest_replays(
        tmp_path: Path) -> None:
    rendered = render_game(corpus()[3], seed=3)
    lines = [json.dumps(line) for line in rendered.lines]
    middle = len(lines) // 2
    lines.insert(middle, json.dumps({"t": 1e16, "ev": "lift", "sq": "a1"}))
    log = tmp_path / "g.jsonl"
    log.write_text("\n".join(lines) + "\n")
    pgn = tmp_path / "g.pgn"
    done = subprocess.run([sys.executable, "-m", "board_ctl.cli", "replay", str(log),
                           "--pgn", str(pgn)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    errors = [line for line in done.stderr.splitlines() if "line" in line and "'t'" in line]
    assert len(errors) == 1 and f"line {middle + 1}:" in errors[0], done.stderr
    assert "Traceback" not in done.stderr
    game = chess.pgn.read_game(io.StringIO(pgn.read_text()))
    assert game is not None and list(game.mainline_moves()) == rendered.moves


def test_the_clock_refuses_an_unrepresentable_time_without_overflowing() -> None:
    clock = ChessClock(TimeControl.parse("300+2"))
    clock.start(0.0)
    for bad in (1e308, float("inf"), float("nan")):
        with pytest.raises(ClockError):
            clock.press(chess.WHITE, bad)
    assert clock.press(chess.WHITE, 10.0) is not None


def test_to_us_is_exact_for_a_logs_six_decimals() -> None:
    """Up to 2^32 s (Unix time in 2106), where a float still resolves a microsecond."""
    rng = random.Random(1)
    for _ in range(20_000):
        micros = rng.choice([rng.randrange(0, 2**32 * 10**6), rng.randrange(0, 10**10)])
        text = f"{micros // 10**6}.{micros % 10**6:06d}"
        assert to_us(float(text)) == micros
        assert micros / 10**6 == float(text)  # and back to the very float the log gave


# ---------------------------------------------------------------------- the timer loop


class _StuckTimer(Referee):
    """A referee with one timer that, by a bug, stays due after it fires."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.stuck_fired = 0

    def _timers(self):  # type: ignore[no-untyped-def]
        return super()._timers() + [(5_000_000, self._stuck)]

    def _stuck(self, when: int) -> None:
        self.stuck_fired += 1


def test_a_timer_that_makes_no_progress_raises_in_debug_mode() -> None:
    referee = _StuckTimer(debug=True)
    referee.feed(ev.Lifted(4.95, chess.E2))  # (a change settling: the timers are looked at)
    with hang_guard(10), pytest.raises(TimerStall, match="_stuck due at 5.0 s made no progress"):
        referee.feed(ev.Tick(6.0))
    assert referee.stuck_fired == 1


def test_a_timer_that_makes_no_progress_stops_the_loop_and_is_logged(
        caplog: pytest.LogCaptureFixture) -> None:
    referee = _StuckTimer()
    with hang_guard(10), caplog.at_level(logging.ERROR):
        for event in events("-e2 +e4 Cw ~6 T -e7 +e5 Cb T", t=1.0):
            referee.feed(event)
    assert "made no progress" in caplog.text
    assert 1 <= referee.stuck_fired <= len(events("-e2 +e4 Cw ~6 T -e7 +e5 Cb T"))
    assert [m.uci() for m in referee.board.move_stack] == ["e2e4", "e7e5"]


# ---------------------------------------------------------------------- property


magnitudes = st.sampled_from([0.0, 1.0, 2.0**26, 2.0**30 + 0.25, 1764520000.25, 2.0**34,
                              2.0**35 + 0.5, 2.0**40, 1e11, MAX_SECONDS * 0.999])
gaps = st.one_of(
    st.floats(min_value=0.0, max_value=3.0),
    st.sampled_from([0.0, 1e-9, 1e-6, 0.0999999, 0.1, 0.1000001, 0.3, 1.5, 2.0]),
    st.floats(min_value=-5.0, max_value=0.0),  # out of order
    st.floats(allow_nan=False, allow_infinity=False),  # anything finite, refused or not
)
raw_events = st.lists(
    st.tuples(gaps, st.sampled_from(["toggle", "toggle", "toggle", "clock", "tick", "promote",
                                     "snapshot"]),
              st.integers(min_value=0, max_value=63), st.booleans()),
    max_size=120,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=magnitudes, script=raw_events,
       time_control=st.sampled_from([None, "60+1", "5d2", "*30", "1"]))
def test_any_finite_event_times_terminate_with_bounded_timer_firings(
        base: float, script: list, time_control: str | None) -> None:
    tc = TimeControl.parse(time_control) if time_control else None
    referee = Referee(time_control=tc, debug=True)
    occupied = chess.Board().occupied
    t = base
    with hang_guard(20):
        for gap, kind, square, flag in script:
            t_next = t + gap
            bit = chess.BB_SQUARES[square]
            if kind == "toggle":
                event: ev.Event = (ev.Lifted(t_next, square) if occupied & bit
                                   else ev.Placed(t_next, square))
            elif kind == "clock":
                event = ev.ClockPressed(t_next, flag)
            elif kind == "promote":
                event = ev.PromotionChosen(t_next, chess.KNIGHT)
            elif kind == "snapshot":
                event = ev.Snapshot(t_next, occupied)
            else:
                event = ev.Tick(t_next)
            before = referee.firings
            try:
                referee.feed(event)
            except TimeRangeError:
                assert not -MAX_SECONDS <= t_next <= MAX_SECONDS
                continue  # refused: the time stays where it was
            t = t_next
            if kind == "toggle":
                occupied ^= bit
            assert referee.firings - before <= MAX_FIRINGS
        referee.finish()


def test_fire_due_fires_in_time_order_and_never_twice_at_one_moment() -> None:
    from board_ctl.core.timers import fire_due
    fired: list[tuple[str, int]] = []
    deadlines = {"a": 30, "b": 10, "c": 20}

    def armed():  # type: ignore[no-untyped-def]
        return [(when, timers[name]) for name, when in deadlines.items() if when is not None]

    def make(name: str):  # type: ignore[no-untyped-def]
        def fire(when: int) -> None:
            fired.append((name, when))
            # b re-arms itself later (progress); c stays due where it was (a stall)
            deadlines[name] = when + 15 if name == "b" and when < 40 else (
                when if name == "c" else None)  # type: ignore[assignment]
        fire.__name__ = name
        return fire

    timers = {name: make(name) for name in deadlines}
    count = fire_due(40, armed, lambda when: None)
    assert fired == [("b", 10), ("c", 20), ("b", 25), ("a", 30), ("b", 40)]
    assert count == 5
    with pytest.raises(TimerStall, match="timer c due at"):
        fire_due(40, armed, lambda when: None, debug=True)
