"""How far back a board publishes again when it reconnects. A broker that kept the board's
session lost at most what it acknowledged since its last save to disk: the board sends
again only that (the window `rewind_kept`), not the whole game, so that a hall whose
connections drop under load does not republish every game at every drop. A broker that
lost the session (its store gone) gets every game not wholly acknowledged from its start.
Real board service and publisher, real Mosquitto with the shipped config."""

from __future__ import annotations

import io
import random
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_ctl.hall.progress import AckHistory, Place
from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
from board_ctl.sensorlog import read_sensor_log
from brokerkit import Broker, CutProxy, Station
from servicekit import render

USERS = {"arbiter": "arb-secret", "b1": "b1-secret"}


@given(st.lists(st.tuples(st.floats(0, 50), st.integers(0, 5)), max_size=30),
       st.floats(0, 100), st.floats(1, 60))
def test_the_history_answers_where_the_acknowledgements_were_at_a_time(
        steps: list[tuple[float, int]], ask_back: float, span: float) -> None:
    history = AckHistory(span, 10.0, None)
    now, line = 10.0, 0
    noted: list[tuple[float, Place | None]] = [(10.0, None)]
    for gap, lines in steps:
        now, line = now + gap, line + lines
        history.note(now, Place("g", line))
        noted.append((now, Place("g", line)))
    when = now - min(ask_back, span)  # (what the publisher asks: at most `span` back)
    expected = None
    for t, place in noted:
        if t <= when:
            expected = place
    assert history.at(when) == expected
    assert history.at(9.0) is None  # before the process started: not known


def the_hall(tmp_path: Path, url: str, plies: int = 24, speed: float = 100) -> ReplayHall:
    game = render("classics.pgn", 4, seed=2, plies=(0, plies))
    log = read_sensor_log(io.StringIO(game.jsonl()))
    return ReplayHall(tmp_path / "hall", [HallBoardSpec("b1", log.start, log.events, url,
                                                        USERS["b1"])], speed=speed)


def played(hall: ReplayHall, station: Station) -> int:
    """Every move of the board's game at the station, as played; how many."""
    session = hall.boards[0].service.last_session
    assert session is not None
    plies = len(session.record.moves)
    key = ("b1", session.game_id)
    station.wait(lambda: len(station.moves.get(key, [])) == plies, 60, "every move")
    assert [m["san"] for m in station.moves[key]] == [m.san for m in session.record.moves]
    return plies


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_a_board_that_lost_its_connection_sends_again_only_what_the_broker_may_have_lost(
        tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker", USERS).start()
    proxy = CutProxy(broker.port)
    station = Station(broker)
    hall = the_hall(tmp_path, proxy.url)
    publisher = hall.boards[0].publisher
    publisher.rewind_kept = 0.0  # the broker saves every second here: nothing to send again
    try:
        hall.start()
        hall.run()
        plies = played(hall, station)
        assert station.duplicates == 0 and plies >= 20
        connections, read = publisher.stats["connections"], publisher.stats["read"]
        proxy.cut_off()
        station.wait(lambda: station.on("b1/status")[-1].payload == b"offline", 30,
                     "the board's last will")
        proxy.restore()
        station.wait(lambda: station.on("b1/status")[-1].payload == b"online", 30,
                     "the board back")
        assert publisher.stats["connections"] == connections + 1
        # its state and PGN again (the retained copies), and not one move: before, the
        # whole game came again at every reconnection
        station.wait(lambda: len(station.on("b1/pgn")) >= 2, 10, "the PGN again")
        assert station.duplicates == 0
        assert publisher.stats["read"] == read  # (the journal not read again either)
    finally:
        hall.close()
        station.close()
        proxy.close()
        broker.stop()


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_a_broker_that_lost_the_session_gets_the_whole_game_again(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker", USERS).start()
    proxy = CutProxy(broker.port)  # (the board comes back once the station is back)
    station = Station(broker)
    hall = the_hall(tmp_path, proxy.url)
    hall.boards[0].publisher.rewind_kept = 0.0  # (only a kept session is trusted)
    try:
        hall.start()
        hall.run()
        plies = played(hall, station)
        proxy.cut_off()
        broker.kill()
        for store in broker.dir.glob("*.db"):  # its disk lost: a broker that keeps nothing
            store.unlink()
        connects = station.connects
        broker.start()
        station.wait(lambda: station.connects > connects, 30, "the station back")
        proxy.restore()
        station.wait(lambda: station.duplicates == plies, 30, "the whole game again")
    finally:
        hall.close()
        station.close()
        proxy.close()
        broker.stop()


@pytest.mark.slow
def test_connections_cut_again_and_again_mid_game_lose_and_disorder_nothing(
        tmp_path: Path) -> None:
    """Cut while messages are on their way, with a small window: the publisher stalls in
    the middle of what it read, and goes on from what it had sent and not yet sent."""
    broker = Broker(tmp_path / "broker", USERS).start()
    proxy = CutProxy(broker.port)
    station = Station(broker)
    hall = the_hall(tmp_path, proxy.url, plies=60, speed=40)
    publisher = hall.boards[0].publisher
    publisher.rewind_kept = 0.0
    publisher.window_size = 2
    stop = threading.Event()

    def cutter() -> None:
        while not stop.wait(0.4):
            proxy.cut_off()
            stop.wait(0.05)
            proxy.restore()

    thread = threading.Thread(target=cutter, daemon=True)
    try:
        hall.start()
        thread.start()
        hall.run()
        stop.set()
        thread.join()
        played(hall, station)
        assert publisher.stats["connections"] >= 5
        arrived = [r.json()["ply"] for r in station.on("b1/move")]
        for before, after in zip(arrived, arrived[1:]):  # in order, or again from earlier
            assert after == before + 1 or after <= before, arrived
    finally:
        stop.set()
        hall.close()
        station.close()
        proxy.close()
        broker.stop()


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_a_message_the_connection_does_not_take_is_sent_again_with_all_after_it(
        tmp_path: Path) -> None:
    """The connection refuses a publish now and then (as it does between losing its
    socket and saying so): the publisher stalls in the middle of the lines it has read,
    and goes on from the first line not acknowledged, losing none of those it had read."""
    broker = Broker(tmp_path / "broker", USERS).start()
    station = Station(broker)
    hall = the_hall(tmp_path, broker.url, plies=60, speed=1000)
    publisher = hall.boards[0].publisher
    connection = publisher.connection
    real_publish = connection.publish
    calls = {"moves": 0, "refused": 0}
    refuse = set(random.Random(5).sample(range(3, 60), 4))  # (each move publish counted)

    def publish(topic: str, payload: bytes, retain: bool = False) -> int | None:
        if topic.endswith("/move"):
            calls["moves"] += 1
            if calls["moves"] in refuse:
                calls["refused"] += 1
                return None
        return real_publish(topic, payload, retain)

    connection.publish = publish  # type: ignore[method-assign]
    try:
        hall.start()
        hall.run()
        played(hall, station)
        assert calls["refused"] == 4
    finally:
        hall.close()
        station.close()
        broker.stop()
