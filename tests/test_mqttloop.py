"""A board's connection and the station's link in a process that holds more than 1,024
file descriptors: paho's own loops wait with select(), which cannot watch a descriptor
numbered 1024 or more, and took that for a lost connection without a word, so a board
with many files open (many boards in one process, as the hall benchmark runs them) never
connected again after a broker restart. Both now run on board_ctl/mqttloop.py (epoll).
And a board's connection and publisher threads are started once each, also when asked
after while they are being started."""

from __future__ import annotations

import json
import os
import resource
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from board_ctl.hall.connection import (
    Acked,
    Connected,
    Connection,
    ConnectionEvent,
    Disconnected,
)
from board_ctl.hall.settings import resolve
from board_ctl.station.link import BrokerAddress, StationLink
from brokerkit import Broker
from hallkit import wait_until

USERS = {"arbiter": "arb-secret", "b1": "b1-secret"}
HIGH = 1100  # above select()'s FD_SETSIZE (1024)


@contextmanager
def low_descriptors_taken(above: int = HIGH) -> Iterator[None]:
    """Every descriptor number below `above` in use, so that the next socket this process
    opens is numbered `above` or more."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = above + 256
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard limit on open files ({hard}) cannot hold {wanted}")
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    held: list[int] = []
    try:
        while True:
            fd = os.open(os.devnull, os.O_RDONLY)
            if fd >= above:
                os.close(fd)
                break
            held.append(fd)
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    broker = Broker(tmp_path / "broker", USERS).start()
    yield broker
    broker.stop()


class Events:
    def __init__(self) -> None:
        self.items: list[ConnectionEvent] = []
        self.lock = threading.Lock()

    def __call__(self, event: ConnectionEvent) -> None:
        with self.lock:
            self.items.append(event)

    def of(self, kind: type) -> list[ConnectionEvent]:
        with self.lock:
            return [e for e in self.items if isinstance(e, kind)]


def board_connection(broker: Broker, events: Events) -> Connection:
    settings = replace(resolve(broker.url, "b1", username="b1"), password=USERS["b1"])
    return Connection(settings, events, lambda *args: None)


def test_a_board_connects_and_is_acknowledged_with_a_socket_numbered_above_1024(
        broker: Broker) -> None:
    events = Events()
    with low_descriptors_taken():
        connection = board_connection(broker, events)
        connection.start()
        try:
            wait_until(lambda: events.of(Connected), 10, "the board's connection")
            client = connection._client
            assert client is not None and client.socket().fileno() >= HIGH
            mid = wait_until(lambda: connection.publish("board-ctl/b1/move", b"{}"), 5,
                             "a message taken")
            wait_until(lambda: any(e.mid == mid for e in events.of(Acked)), 5,
                       "the broker's acknowledgement")
        finally:
            connection.close()


def test_a_board_reconnects_after_a_broker_kill_with_a_socket_numbered_above_1024(
        broker: Broker) -> None:
    events = Events()
    connection = board_connection(broker, events)
    connection.start()
    try:
        wait_until(lambda: events.of(Connected), 10, "the first connection")
        broker.kill()
        wait_until(lambda: events.of(Disconnected), 10, "the connection lost")
        with low_descriptors_taken():  # (the lost connection's number among them)
            broker.start()
            wait_until(lambda: len(events.of(Connected)) >= 2, 20,
                       "the connection after the broker's restart")
            client = connection._client
            assert client is not None and client.socket().fileno() >= HIGH
    finally:
        connection.close()


def test_the_station_link_reads_the_hall_with_a_socket_numbered_above_1024(
        broker: Broker) -> None:
    received: list[tuple[str, bytes]] = []
    board = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="b1",
                        protocol=mqtt.MQTTv5)
    board.username_pw_set("b1", USERS["b1"])
    board.connect("127.0.0.1", broker.port)  # (before: its own socket stays below 1024)
    board.loop_start()
    try:
        with low_descriptors_taken():
            link = StationLink(BrokerAddress("127.0.0.1", broker.port, False, "arbiter",
                                             USERS["arbiter"]),
                               lambda topic, payload: received.append((topic, payload)),
                               client_id="test-station")
            link.start()
            try:
                assert link.connected.wait(10), link.last_error
                assert link.client.socket().fileno() >= HIGH
                move = json.dumps({"v": 1, "ply": 1}).encode()

                def delivered() -> bool:
                    # (the station subscribes once connected: sent until it has it)
                    if not received:
                        board.publish("board-ctl/b1/move", move, qos=1).wait_for_publish(2)
                    return bool(received)

                wait_until(delivered, 10, "the move at the station")
                assert received[0] == ("board-ctl/b1/move", move)
            finally:
                link.stop()
    finally:
        board.disconnect()
        board.loop_stop()


def test_a_connection_being_started_is_not_taken_for_a_dead_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The publisher's thread asks the connection whether its thread is running while that
    thread is being started: a second one started then would knock the first's connection
    off with the same client id, and back, for ever (seen with 1,000 boards)."""
    events = Events()
    settings = resolve("mqtt://127.0.0.1:1", "b1", username="b1")  # (nobody listens)
    connection = Connection(settings, events, lambda *args: None)
    real_start = threading.Thread.start
    asked: list[bool] = []
    first = [True]

    def start(thread: threading.Thread) -> None:
        if thread.name == "mqtt-b1" and first[0]:
            first[0] = False
            asked.append(connection.ensure_running())  # the publisher's thread, meanwhile
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    connection.start()
    try:
        assert asked == [False]
        assert sum(t.name == "mqtt-b1" for t in threading.enumerate()) == 1
    finally:
        connection.close()


def test_a_publisher_being_started_is_not_taken_for_a_dead_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for the publisher's own thread, which the service asks after at every
    change it shows (from its own thread)."""
    from board_ctl.archive import Archive
    from board_ctl.hall.publisher import BoardPublisher

    settings = resolve("mqtt://127.0.0.1:1", "b1", username="b1")
    publisher = BoardPublisher(settings, Archive(tmp_path / "data"))
    real_start = threading.Thread.start
    asked: list[bool] = []
    first = [True]

    def start(thread: threading.Thread) -> None:
        if thread.name == "publisher-b1" and first[0]:
            first[0] = False
            asked.append(publisher.ensure_running())  # the service's thread, meanwhile
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    publisher.start()
    try:
        assert asked == [False]
        assert sum(t.name == "publisher-b1" for t in threading.enumerate()) == 1
    finally:
        publisher.stop(drain=0.0)
