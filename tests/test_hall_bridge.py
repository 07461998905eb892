"""A hall on two Mosquittos bridged as docs/mqtt.md sets them up (the shipped config and
ACL on both, config/mosquitto/board-ctl-bridge.conf on the station's, the second's
`bridge` user): boards on either broker, the real station (its model, link and healing)
on the first. The station's broker is killed (-9) mid-round with the shipped autosave
(30 s: it comes back with nothing of the round): every game still reaches the station
whole, and a command from the station reaches a board on the second broker and its reply
comes back."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
from board_ctl.sensorlog import read_sensor_log
from board_ctl.station.link import BrokerAddress, StationLink
from board_ctl.station.station import Station
from brokerkit import Broker, bridge_config
from hallkit import wait_until
from servicekit import render

BOARDS = ("b1", "b2", "b3", "b4")  # b1, b2 on the station's broker; b3, b4 on the second
USERS = {"arbiter": "arb-secret", "bridge": "bridge-secret",
         **{b: f"{b}-secret" for b in BOARDS}}


class LiveStation:
    """The arbiter station as `board-ctl arbiter` runs it, without its web pages: its
    `Station` on an asyncio loop of its own, fed by its real MQTT link."""

    def __init__(self, broker: Broker, folder: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.link = StationLink(BrokerAddress("127.0.0.1", broker.port, False, "arbiter",
                                              USERS["arbiter"]),
                                lambda topic, payload: self.station.deliver(topic, payload),
                                lambda up, why: self.station.connection(up, why),
                                client_id="arbiter")
        self.station = Station(folder, self.link.publish, event="Bridged", broker_user="arbiter")
        self.station.loop = self.loop
        self.call(self.station.start_healing)
        self.link.start()

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` on the station's loop; its value."""
        async def run() -> Any:
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    def moves(self, board: str, game: str) -> list[str]:
        def read() -> list[str]:
            b = self.station.hall.boards.get(board)
            g = b.games.get(game) if b is not None else None
            return [m.uci for m in g.known_moves()] if g is not None else []
        return self.call(read)  # type: ignore[no-any-return]

    def close(self) -> None:
        self.link.stop()
        self.call(self.station.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


@pytest.mark.slow
def test_a_hall_on_two_bridged_brokers_survives_the_station_brokers_kill(
        tmp_path: Path) -> None:
    with ExitStack() as started:  # (whatever fails, nothing it started is left running)
        second = Broker(tmp_path / "second", USERS).start()
        started.callback(second.stop)
        first = Broker(tmp_path / "first", USERS, autosave=30,
                       extra=bridge_config(second, USERS["bridge"])).start()
        started.callback(first.stop)
        station = LiveStation(first, tmp_path / "station")
        started.callback(station.close)
        _play_through_the_kill(tmp_path, first, second, station)


def _play_through_the_kill(tmp_path: Path, first: Broker, second: Broker,
                           station: LiveStation) -> None:
    specs = []
    for n, board in enumerate(BOARDS):
        game = render("stockfish-300.pgn", 20 + n, seed=n, plies=(0, 40))
        log = read_sensor_log(io.StringIO(game.jsonl()))
        broker = first if n < 2 else second
        specs.append(HallBoardSpec(board, log.start, log.events, broker.url, USERS[board]))
    hall = ReplayHall(tmp_path / "hall", specs, speed=8.0)
    killed = threading.Event()

    def kill_once(log_t: float) -> None:
        if not killed.is_set() and log_t > 20.0:
            killed.set()
            first.kill()  # kill -9, the last save 30 s ago at best: nothing of the round
            first.start()

    try:
        assert station.link.connected.wait(10)
        hall.start()
        hall.run(on_step=kill_once)
        assert killed.is_set()
        for board in hall.boards:
            session = board.service.last_session
            assert session is not None
            played = [m.move.uci() for m in session.record.moves]
            wait_until(lambda: station.moves(board.spec.board_id, session.game_id) == played,
                       45, f"every move of {board.spec.board_id} at the station")
        # a command through the bridge to a board on the second broker, and its reply back
        game = hall.boards[2].service.last_session.game_id  # type: ignore[union-attr]
        command = station.call(station.station.command, "station", "b3", "resend", {}, game)
        wait_until(lambda: command not in station.station.pending, 20, "b3's reply")
        reply = [e for e in station.station.journal("b3")
                 if e.get("kind") == "reply" and e.get("id") == command]
        assert reply and reply[0]["ok"] is True
    finally:
        hall.close()
