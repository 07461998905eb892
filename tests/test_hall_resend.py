"""`cmd/resend`: the station asks a board for a game again; the board publishes it from its
journal (every move, alert and clear, with their seq), answers on reply, and refuses a
game it does not have. Only the station's user may send it (the broker's ACL)."""

from __future__ import annotations

import io
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
from board_ctl.sensorlog import read_sensor_log
from brokerkit import Broker, Station
from servicekit import render

USERS = {"arbiter": "arb-secret", "b1": "b1-secret", "b2": "b2-secret"}


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_a_board_publishes_a_game_again_when_the_station_asks(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker", USERS).start()
    station = Station(broker)
    game = render("classics.pgn", 2, seed=4, plies=(0, 16))
    log = read_sensor_log(io.StringIO(game.jsonl()))
    hall = ReplayHall(tmp_path / "hall", [HallBoardSpec("b1", log.start, log.events,
                                                        broker.url, USERS["b1"])], speed=100)
    try:
        hall.start()
        hall.run()
        session = hall.boards[0].service.last_session
        assert session is not None
        key = ("b1", session.game_id)
        plies = len(session.record.moves)
        station.wait(lambda: len(station.moves.get(key, [])) == plies, 20, "every move")
        first = [m["seq"] for m in station.moves[key]]
        assert station.duplicates == 0

        reply = station.command("b1", "resend", {"id": "r1", "by": "station",
                                                 "game": session.game_id})
        assert (reply["ok"], reply["game"]) == (True, session.game_id)
        station.wait(lambda: station.duplicates == plies, 20, "the game again")
        again = [r.json() for r in station.on("b1/move")][plies:]
        assert [m["seq"] for m in again] == first  # the same journal lines, in order

        refused = station.command("b1", "resend", {"id": "r2", "by": "station",
                                                   "game": "20200101-000000"})
        assert refused["ok"] is False and "no game 20200101-000000" in refused["error"]
        unnamed = station.command("b1", "resend", {"id": "r3", "by": "station"})
        assert unnamed["ok"] is False and "'game'" in unnamed["error"]

        # another board's credential cannot ask (the ACL): nothing is sent again
        other = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="b2",
                            protocol=mqtt.MQTTv5)
        other.username_pw_set("b2", USERS["b2"])
        other.connect("127.0.0.1", broker.port)
        other.loop_start()
        try:
            other.publish("board-ctl/b1/cmd/resend", b'{"id": "x", "by": "b2", "game": "'
                          + session.game_id.encode() + b'"}', qos=1).wait_for_publish(5)
            station.command("b1", "resend", {"id": "r4", "by": "station", "game": "nope"})
        finally:
            other.disconnect()
            other.loop_stop()
        assert not any(r.json().get("id") == "x" for r in station.on("b1/reply"))
        assert station.duplicates == plies
    finally:
        hall.close()
        station.close()
        broker.stop()
