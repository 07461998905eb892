"""`board-ctl run --mqtt` end to end: the emulator on a real pty, the service in another
process, a real Mosquitto with the shipped config, and a subscriber keyed as a station
is: every move once (after dropping duplicates by (board, game, ply)), in order, through
a broker killed (-9) and restarted, a board cut from the broker for a while, and a
service restarted with moves the broker never had."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from brokerkit import Broker, CutProxy, Station
from servicekit import ROOT, EmulatorProcess, board_ctl, child_env, pgn_moves, render

USERS = {"arbiter": "arb-secret", "b1": "b1-secret"}
CUT_SECONDS = float(os.environ.get("BOARD_CTL_CUT_SECONDS", "3"))


@pytest.fixture
def broker(tmp_path: Path) -> Any:
    broker = Broker(tmp_path / "broker", USERS).start()
    yield broker
    broker.stop()


def board_config(tmp_path: Path, broker: Broker, **mqtt: object) -> Path:
    path = tmp_path / "board.toml"
    keys = {"password_file": str(broker.password_file("b1")), **mqtt}
    path.write_text("[mqtt]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
                    + '[serial]\nlost_timeout = 1.0\n[display]\nview = "plain"\n',
                    encoding="utf-8")
    return path


def start_service(tmp_path: Path, config: Path, port: Path, url: str, *extra: str,
                  pgn: str = "out.pgn") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
         str(port), "--pgn", str(tmp_path / pgn), "--mqtt", url, "--board-id", "b1", *extra],
        cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def finish(proc: subprocess.Popen[str], timeout: float = 90.0) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err + out
    assert "Traceback" not in err, err
    return out + err


def the_game(station: Station) -> tuple[str, list[dict[str, Any]]]:
    games = [key for key in station.moves if key[0] == "b1"]
    assert len(games) == 1, games
    return games[0][1], station.moves[games[0]]


def assert_every_move_in_order(moves: list[dict[str, Any]], sans: list[str]) -> None:
    assert [m["ply"] for m in moves] == list(range(1, len(sans) + 1))
    assert [m["san"] for m in moves] == sans
    assert all(a["seq"] < b["seq"] for a, b in zip(moves, moves[1:]))


@pytest.mark.slow
def test_a_real_game_is_published_every_move_once_in_order(tmp_path: Path,
                                                           broker: Broker) -> None:
    station = Station(broker)
    game = render("classics.pgn", 3, seed=11)
    log = tmp_path / "game.jsonl"
    game.write(log)
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", "20")
    config = board_config(tmp_path, broker, event="Club night", round="4", board_no=7)
    try:
        finish(start_service(tmp_path, config, tmp_path / "board", broker.url, "--once"))
    finally:
        emulator.close()
    pgn = (tmp_path / "out.pgn").read_text(encoding="utf-8")
    sans = pgn_moves(pgn)
    assert len(sans) == len(game.moves)
    game_id, moves = the_game(station)
    assert_every_move_in_order(moves, sans)
    assert station.duplicates == 0  # nothing was lost, so nothing was sent twice
    # the retained PGN is the board's own, and the last state says how the game ended
    station.wait(lambda: station.on("b1/status")[-1].payload == b"offline", 10, "offline")
    assert station.on("b1/pgn")[-1].payload.decode() == pgn
    state = station.last("b1/state")
    assert (state["game"], state["ply"], state["phase"], state["result"]) == \
        (game_id, len(sans), "over", game.result)
    assert (state["event"], state["round"], state["board_no"]) == ("Club night", "4", 7)
    assert state["fen"] == moves[-1]["fen"]
    late = [r for r in station.received if r.topic.endswith("/state")]
    assert all(r.retain is False for r in late)  # seen live, not as the retained copy
    # what a subscriber arriving now is given: status, state and PGN, retained
    later = Station(broker, client_id="late-comer")
    later.wait(lambda: len(later.received) >= 3, 10, "the retained messages")
    assert {r.topic.rsplit("/", 1)[1] for r in later.received if r.retain} == \
        {"status", "state", "pgn"}
    later.close()
    station.close()


@pytest.mark.slow
def test_the_broker_killed_and_restarted_mid_game_loses_nothing(tmp_path: Path,
                                                                broker: Broker) -> None:
    station = Station(broker)
    game = render("classics.pgn", 5, seed=3)
    log = tmp_path / "game.jsonl"
    game.write(log)
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", "8")
    proc = start_service(tmp_path, board_config(tmp_path, broker), tmp_path / "board",
                         broker.url, "--once")
    try:
        station.wait(lambda: sum(len(v) for v in station.moves.values()) >= 6, 60,
                     "six moves")
        broker.kill()  # kill -9: whatever it had not saved is gone
        seen = sum(len(v) for v in station.moves.values())
        broker.start()
        finish(proc)
    finally:
        emulator.close()
    sans = pgn_moves((tmp_path / "out.pgn").read_text(encoding="utf-8"))
    station.wait(lambda: sum(len(v) for v in station.moves.values()) >= len(sans), 30,
                 "every move")
    _, moves = the_game(station)
    assert_every_move_in_order(moves, sans)
    assert seen < len(sans), "the broker was killed after the game: nothing was tested"
    assert station.connects >= 2


def cut_test(tmp_path: Path, broker: Broker, seconds: float) -> None:
    proxy = CutProxy(broker.port)
    station = Station(broker)
    game = render("classics.pgn", 7, seed=5)
    log = tmp_path / "game.jsonl"
    game.write(log)
    # the game goes on at the board through the cut and a while after it
    speed = game.lines[-1]["t"] / (seconds + 20)
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", f"{speed:.3f}")
    proc = start_service(tmp_path, board_config(tmp_path, broker), tmp_path / "board",
                         proxy.url, "--once")
    try:
        station.wait(lambda: sum(len(v) for v in station.moves.values()) >= 4, 60,
                     "four moves")
        proxy.cut_off()
        before = sum(len(v) for v in station.moves.values())
        station.wait(lambda: station.on("b1/status")[-1].payload == b"offline", 30,
                     "the board's last will")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:  # the game goes on at the board meanwhile
            station.wait(lambda: True, 0.1, "")
            time.sleep(min(0.5, max(deadline - time.monotonic(), 0)))
        during = sum(len(v) for v in station.moves.values())
        proxy.restore()
        finish(proc, timeout=120 + seconds)
    finally:
        emulator.close()
        proxy.close()
    sans = pgn_moves((tmp_path / "out.pgn").read_text(encoding="utf-8"))
    station.wait(lambda: sum(len(v) for v in station.moves.values()) >= len(sans), 30,
                 "every move")
    _, moves = the_game(station)
    assert_every_move_in_order(moves, sans)
    assert before == during < len(sans), (before, during, len(sans))
    statuses = [r.payload for r in station.on("b1/status")]
    assert b"offline" in statuses[:-1] and b"online" in statuses[statuses.index(b"offline"):]


@pytest.mark.slow
def test_a_board_cut_from_the_broker_publishes_everything_in_order_when_back(
        tmp_path: Path, broker: Broker) -> None:
    """A cut of 3 s; the issue's figure, a board away from the broker for 60 s, is the
    same test run by hand with BOARD_CTL_CUT_SECONDS=60 (and `bench/bench_hall.py --cut
    60` measures it with 100 boards): a minute of waiting is too long for every CI run."""
    cut_test(tmp_path, broker, CUT_SECONDS)


@pytest.mark.slow
def test_a_restarted_service_publishes_what_the_broker_never_had(tmp_path: Path) -> None:
    """Game 1 is played while the broker is down (the service then stops); the service
    started again with the broker up publishes game 1 from its journal, then game 2."""
    broker = Broker(tmp_path / "broker", USERS)  # not started yet
    config = board_config(tmp_path, broker)
    logs = []
    for n, index in enumerate((9, 12)):
        game = render("classics.pgn", index, seed=n)
        logs.append((tmp_path / f"game{n}.jsonl", game))
        game.write(logs[-1][0])
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(logs[0][0]), "--speed", "25")
    try:
        out = finish(start_service(tmp_path, config, tmp_path / "board", broker.url, "--once",
                                   pgn="one.pgn"))
    finally:
        emulator.close()
    assert f"MQTT broker {broker.url} not reachable" in out, out
    broker.start()
    try:
        station = Station(broker)
        emulator = EmulatorProcess(tmp_path / "board", "--log", str(logs[1][0]), "--speed",
                                   "25")
        try:
            finish(start_service(tmp_path, config, tmp_path / "board", broker.url, "--once",
                                 pgn="two.pgn"))
        finally:
            emulator.close()
        games = sorted(key for key in station.moves if key[0] == "b1")
        assert len(games) == 2
        for (key, pgn) in zip(games, ("one.pgn", "two.pgn")):
            sans = pgn_moves((tmp_path / pgn).read_text(encoding="utf-8"))
            assert_every_move_in_order(station.moves[key], sans)
        station.close()
    finally:
        broker.stop()
