"""What the players saw is what a replay shows: `board-ctl run` through the emulator on a
real pty, then `board-ctl replay` of the sensor log the service wrote; the two game
reports must be equal line for line: moves, alerts, penalties, the result and every LED
frame with its time.

The live service also feeds its referee clock ticks between the board's events (so a
timer fires while nobody touches the board); the log has no ticks. The games below put
the timers between events on trial: the opening frame, the 1.5 s of a knocked-over
piece, the restore lights of an illegal move, a touch-move, a mate nobody pressed the
clock for (the game ends 2 s after the placement, after the log's last event).
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import chess
import pytest

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_log
from board_ctl.sensorlog import load_sensor_log, read_sensor_log
from board_ctl.service.game import OutputNamer
from board_ctl.service.messages import BoardDone
from board_ctl.service.service import RunOptions, Service
from board_ctl.simulate import RenderedGame, render_game, render_violation
from conftest import read_jsonl
from servicekit import EmulatorProcess, FAST, FakeBoard, board_ctl, game_from

SPEED = "40"


def live_and_replayed(tmp_path: Path, log: Path, *run_args: str) -> tuple[list[dict], list[dict]]:
    """The report `board-ctl run --once` wrote while the emulator played `log`, and the
    report of a replay of the sensor log the service wrote beside it."""
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", SPEED)
    pgn = tmp_path / "out.pgn"
    try:
        result = board_ctl("run", "--port", str(tmp_path / "board"), "--once", "--pgn", str(pgn),
                           "--view", "plain", *run_args, cwd=tmp_path)
    finally:
        code = emulator.close()
    assert result.returncode == 0, result.stderr + result.stdout
    assert code == 0, emulator.errors()
    live = read_jsonl(pgn.with_name("out.report.jsonl"))
    with pgn.with_name("out.sensor.jsonl").open(encoding="utf-8") as stream:
        sensor_log = read_sensor_log(stream)
    assert sensor_log.errors == []
    record = replay_log(sensor_log, PROFILES[run_args[-1] if "--profile" in run_args else "fide"])
    return live, [json.loads(line) for line in record.report_lines()]


def assert_same_report(live: list[dict], replayed: list[dict]) -> None:
    for i, (a, b) in enumerate(zip(live, replayed)):
        assert a == b, f"report line {i + 1} differs:\n live   {a}\n replay {b}"
    assert len(live) == len(replayed)


def opera(seed: int, violation: str | None = None, **style: object) -> RenderedGame:
    game = game_from("classics.pgn", 0)  # the Opera game: 17. Rd8#
    look = dataclasses.replace(FAST, **style)  # type: ignore[arg-type]
    if violation is None:
        return render_game(game, seed=seed, style=look)
    return render_violation(game, violation, seed=seed, style=look)


CASES = {
    # a knocked-over piece: the alert and its lights come from a timer between events
    "position-mismatch": dict(seed=1, violation="position-mismatch"),
    # mate by placement, no press: the result frame comes from a timer after the last event
    "mate-unpressed": dict(seed=2, clock_after_end_prob=0.0),
    "illegal-move": dict(seed=1, violation="illegal-move"),
    "touch-move": dict(seed=3, violation="touch-move"),
    "clock-no-move": dict(seed=4, violation="clock-no-move"),
    "mate-pressed": dict(seed=5, clock_after_end_prob=1.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_the_replay_of_a_live_game_reports_what_the_board_showed(tmp_path: Path,
                                                                  case: str) -> None:
    rendered = opera(**CASES[case])  # type: ignore[arg-type]
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    live, replayed = live_and_replayed(tmp_path, log)
    assert_same_report(live, replayed)
    frames = [line for line in live if line["kind"] == "leds"]
    assert frames[0]["t"] == 0.0  # the opening frame: white to move from the start
    assert frames[-1]["status"]["game_over"]
    alerts = [line["code"] for line in live if line["kind"] == "alert"]
    assert alerts == [code for code, _ in rendered.expected_alerts]


@pytest.mark.slow
def test_a_timed_game_with_penalty_replays_to_the_same_report(tmp_path: Path) -> None:
    rendered = opera(seed=6, violation="illegal-move")
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    live, replayed = live_and_replayed(tmp_path, log, "--time-control", "5400+30")
    assert_same_report(live, replayed)
    assert any(line["kind"] == "penalty" for line in live)
    assert all("clock" in line for line in live if line["kind"] == "move")


# ---------------------------------------------------------------- the loop, in process



@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("tick_seed", [1, 2])
def test_ticks_between_events_change_nothing_a_replay_shows(tmp_path: Path, case: str,
                                                            tick_seed: int) -> None:
    """The service loop as it runs live, without the processes: the board's events with
    clock ticks at arbitrary moments between them (as the link's heartbeats come), then
    the replay of the sensor log it wrote: the same report, line for line."""
    rendered = opera(**CASES[case])  # type: ignore[arg-type]
    path = tmp_path / "game.jsonl"
    rendered.write(path)
    log = load_sensor_log(path)
    service = Service(FakeBoard(), profile=PROFILES["fide"], start=log.start,
                      namer=OutputNamer(tmp_path, pgn=tmp_path / "out.pgn"),
                      options=RunOptions(once=True), clock=lambda: 0.0)
    service.open()
    rng = random.Random(tick_seed)
    t0 = 1.0  # link time when the board shows the start position
    service.handle(ev.Snapshot(t0, chess.Board(log.start.fen).occupied))
    tick = t0
    for event in log.events:
        while tick + 0.05 < t0 + event.t:  # ticks, each some time after the last
            service.handle(ev.Tick(tick))
            tick += rng.uniform(0.01, 1.5)
        service.handle(dataclasses.replace(event, t=t0 + event.t))
    for _ in range(10):  # the board is quiet a while after its last event
        tick = max(tick, t0 + log.events[-1].t) + rng.uniform(0.1, 1.0)
        service.handle(ev.Tick(tick))
    service.handle(BoardDone(tick, True, "the log ends"))
    service.close()
    live = read_jsonl(tmp_path / "out.report.jsonl")
    with (tmp_path / "out.sensor.jsonl").open(encoding="utf-8") as stream:
        record = replay_log(read_sensor_log(stream), PROFILES["fide"])
    assert_same_report(live, [json.loads(line) for line in record.report_lines()])
    assert live[0]["kind"] == "leds" and live[0]["t"] == 0.0
    assert [line["code"] for line in live if line["kind"] == "alert"] == \
        [code for code, _ in rendered.expected_alerts]
