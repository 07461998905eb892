"""Several boards in one process (board_ctl.hall.replayhall: real services, real
publishers, replayed logs) into a real Mosquitto: every move of every board reaches a
station-like subscriber once and in order, also for a board cut from the broker while
its game went on (the cut's length: BOARD_CTL_CUT_SECONDS, 1 s here)."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
from board_ctl.sensorlog import read_sensor_log
from brokerkit import Broker, CutProxy, Station
from servicekit import render

CUT = float(os.environ.get("BOARD_CTL_CUT_SECONDS", "1"))


@pytest.mark.slow
def test_boards_in_one_process_one_of_them_cut(tmp_path: Path) -> None:
    users = {"arbiter": "arb", **{f"b{n}": f"pw{n}" for n in range(4)}}
    broker = Broker(tmp_path / "broker", users).start()
    proxy = CutProxy(broker.port)
    station = Station(broker)
    specs, expected = [], {}
    for n, (pgn, index) in enumerate((("classics.pgn", 1), ("stockfish-300.pgn", 40),
                                      ("stockfish-300.pgn", 41), ("classics.pgn", 8))):
        game = render(pgn, index, seed=n, plies=(0, 24))
        log = read_sensor_log(io.StringIO(game.jsonl()))
        url = proxy.url if n == 0 else broker.url
        specs.append(HallBoardSpec(f"b{n}", log.start, log.events, url, users[f"b{n}"]))
        expected[f"b{n}"] = game.moves
    hall = ReplayHall(tmp_path / "hall", specs, speed=150.0, drain=CUT + 20)
    try:
        hall.start()
        station.wait(lambda: station.connects > 0 and len(station.on("/status")) >= 4, 10,
                     "every board online")
        cut_at = [0.0]

        def cut_once(log_t: float) -> None:
            if not cut_at[0] and log_t > 8.0:
                cut_at[0] = log_t
                proxy.cut_off()
                threading.Timer(CUT, proxy.restore).start()

        hall.run(on_step=cut_once)
        board0 = [key for key in station.moves if key[0] == "b0"]
        during_cut = len(station.moves[board0[0]]) if board0 else 0
    finally:
        hall.close()
        proxy.close()
    try:
        for n in range(4):
            board = hall.boards[n]
            session = board.service.last_session
            assert session is not None
            assert [m.move for m in session.record.moves] == expected[f"b{n}"]
            sans = [m.san for m in session.record.moves]
            key = (f"b{n}", session.game_id)
            station.wait(lambda: len(station.moves.get(key, [])) >= len(sans), 10,
                         f"every move of b{n}")
            moves = station.moves[key]
            assert [m["ply"] for m in moves] == list(range(1, len(sans) + 1))
            assert [m["san"] for m in moves] == sans
        assert during_cut < len(hall.boards[0].service.last_session.record.moves)  # type: ignore[union-attr]
        assert cut_at[0] > 0
    finally:
        station.close()
        broker.stop()
