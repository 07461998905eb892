"""Where the two halves of the hall meet: a real board (`board-emulator` on a pty and
`board-ctl run --mqtt`, the real publisher), a real Mosquitto with the shipped config, and
the real `board-ctl arbiter` process, in the situations a hall has and a test of either
half alone does not: a board that reconnects and publishes its game again, the next game
set up while the arbiter is deciding the last one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import httpx2 as httpx
import pytest

from board_ctl.sensorlog import dumps, event_to_json
from board_ctl.simulate import render_game
from brokerkit import Broker, CutProxy
from brokerkit import Station as Watcher
from hallkit import BoardProcess, StationProcess, sign_in, wait_until
from script import events
from servicekit import FAST, game_from

USERS = {"arbiter": "arbiter-secret", "observer": "observer-secret", "b1": "b1-secret"}


@pytest.fixture
def broker(tmp_path: Path) -> Any:
    broker = Broker(tmp_path / "broker", USERS).start()
    yield broker
    broker.stop()


def log_text(lines: list[dict[str, Any]]) -> str:
    return "".join(dumps(line) + "\n" for line in lines)


@pytest.mark.slow
def test_a_board_that_reconnects_raises_no_alert_twice(tmp_path: Path, broker: Broker) -> None:
    """A piece put on d5 from nowhere twice (two position-mismatch alerts, the first
    cleared, the second still open), then the board loses the broker and publishes its
    game again: the station still has two alerts, the open one as it was."""
    proxy = CutProxy(broker.port)
    played = events("-e2 +e4 Cw -e7 +e5 Cb ~1 +d5 ~3 -d5 ~2 +d5", t=0.5)
    log = log_text([event_to_json(e) for e in played])
    station = StationProcess(broker, tmp_path / "station")
    # (one connection per user: the station is `arbiter`, the test watches as `observer`)
    watcher = Watcher(broker, user="observer", topics="board-ctl/+/+")
    board = BoardProcess(broker, tmp_path / "b1", "b1", 1, log, speed=2,
                         until=played[-1].t + 100_000, time_control="300+2", url=proxy.url)
    try:
        with httpx.Client(base_url=station.url, timeout=10) as client:
            sign_in(client)

            def history() -> list[dict[str, Any]]:
                return client.get("/arbiter/api/board/b1").json().get("alert_history", []) \
                    if "b1" in station.boards() else []

            before = wait_until(lambda: (h := history()) and len(h) == 2 and h[1]["cleared_ms"]
                                is None and h, 60, "the second alert", board.alive)
            assert before[0]["code"] == before[1]["code"] == "position-mismatch"
            assert before[0]["cleared_ms"] is not None
            # the watcher is another subscriber: it may get the second alert after the
            # station did
            watcher.wait(lambda: len(watcher.on("b1/alert")) >= 2, 30, "both alerts")
            alerts = len(watcher.on("b1/alert"))
            assert alerts == 2
            proxy.cut_off()
            wait_until(lambda: watcher.on("b1/status")[-1].payload == b"offline", 60,
                       "the board's will", board.alive)
            proxy.restore()
            # the board publishes its game again, from its journal, and then its state
            watcher.wait(lambda: len(watcher.on("b1/alert")) == 2 * alerts, 60,
                         "the alerts published again")
            again = watcher.on("b1/alert")[-1].at
            watcher.wait(lambda: any(r.at >= again for r in watcher.on("b1/state")), 60,
                         "the state after them")
            last_time = watcher.last("b1/state")["time"]
            wait_until(lambda: (station.boards()["b1"].get("clock") or {}).get("time_ms", 0)
                       >= last_time, 30, "the station to take the board's latest state")
            after = history()
        assert len(after) == 2, after
        assert after[0] == before[0]
        assert after[1]["cleared_ms"] is None
        assert after[1]["raised_ms"] == before[1]["raised_ms"]
    finally:
        watcher.close()
        station.stop()
        board.stop()
        proxy.close()


def set_up_again(final: chess.Board, t: float) -> tuple[list[dict[str, Any]], float]:
    """The players clear the board and set up the start position: the events, and the
    time of the last."""
    lines = []
    for square in chess.SquareSet(final.occupied):
        t += 0.15
        lines.append({"t": round(t, 3), "ev": "lift", "sq": chess.square_name(square)})
    for square in chess.SquareSet(chess.BB_RANK_1 | chess.BB_RANK_2 | chess.BB_RANK_7 |
                                  chess.BB_RANK_8):
        t += 0.15
        lines.append({"t": round(t, 3), "ev": "place", "sq": chess.square_name(square)})
    return lines, t


@pytest.mark.slow
def test_a_result_meant_for_the_last_game_never_ends_the_next(tmp_path: Path,
                                                              broker: Broker) -> None:
    """The arbiter asks to correct the result of a game that has just ended; before he
    confirms, the players have set up the next game and begun it. The confirmation is
    refused: the correction was for a game the board no longer holds, and the new game
    goes on."""
    fools = render_game(chess.pgn.read_game(io.StringIO("1. f3 e5 2. g4 Qh4# 0-1")),  # type: ignore[arg-type]
                        seed=1, style=FAST)
    gap = 40.0  # log s (10 s at 4x) between the mate and the set-up: the arbiter asks
    setup, t = set_up_again(fools.final_board(), fools.lines[-1]["t"] + gap)
    second = render_game(game_from("stockfish-300.pgn", 7), seed=2, style=FAST)
    shift = t + 3.0
    lines = fools.lines + setup + [{**line, "t": round(line["t"] + shift, 3)}
                                   for line in second.lines]
    station = StationProcess(broker, tmp_path / "station")
    board = BoardProcess(broker, tmp_path / "b1", "b1", 1, log_text(lines), speed=4,
                         until=lines[-1]["t"] + 100_000, time_control="600+5")
    try:
        with httpx.Client(base_url=station.url, timeout=10) as client:
            csrf = sign_in(client)
            first = wait_until(lambda: (b := station.boards().get("b1")) and
                               # (no "result" until the board's first state)
                               b.get("result") == "0-1" and b, 60, "the mate", board.alive)
            ask = client.post("/arbiter/board/b1/result", data={
                "result": "1/2-1/2", "reason": "correction", "csrf": csrf})
            assert ask.status_code == 200, ask.text
            wait_until(lambda: station.boards()["b1"]["game"] != first["game"] and
                       station.boards()["b1"]["ply"] >= 2, 60, "the next game", board.alive)
            confirmed = client.post("/arbiter/board/b1/result", data={
                "result": "1/2-1/2", "reason": "correction", "csrf": csrf,
                "confirm": ask.json()["token"]})
            assert confirmed.status_code == 409, confirmed.text
            assert "new game" in confirmed.json()["error"]
            wait_until(lambda: station.boards()["b1"]["ply"] >= 6, 60, "the game going on",
                       board.alive)
        assert station.boards()["b1"]["result"] == "*"
        orders = [line for line in board.journal() if line.get("ev") == "arbiter-result"]
        assert orders == []
    finally:
        station.stop()
        board.stop()
