"""The hall's broker as shipped (config/mosquitto: no anonymous users, a password file,
the ACL of docs/mqtt.md), on a real Mosquitto: a board writes only its own topics and
reads only its own commands; a wrong password stops `board-ctl run` with one line."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from brokerkit import Broker, Station
from servicekit import board_ctl, child_env

USERS = {"arbiter": "arb-secret", "observer": "obs-secret", "b1": "b1-secret",
         "b2": "b2-secret"}


@pytest.fixture
def broker(tmp_path: Path) -> Any:
    broker = Broker(tmp_path / "broker", USERS).start()
    yield broker
    broker.stop()


def client(broker: Broker, user: str, password: str | None = None) -> mqtt.Client:
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"raw-{user}",
                    protocol=mqtt.MQTTv5)
    c.username_pw_set(user, password if password is not None else USERS[user])
    c.connect("127.0.0.1", broker.port, keepalive=10)
    c.loop_start()
    return c


def send(c: mqtt.Client, topic: str, payload: str) -> None:
    c.publish(topic, payload, qos=1).wait_for_publish(5)


def test_a_board_writes_only_its_own_topics(broker: Broker) -> None:
    station = Station(broker)
    b1 = client(broker, "b1")
    try:
        send(b1, "board-ctl/b2/move", '{"forged": true}')  # another board's
        send(b1, "board-ctl/b2/status", "offline")
        send(b1, "board-ctl/b2/cmd/result", '{"id": 1}')
        send(b1, "elsewhere/b1/move", "{}")
        send(b1, "board-ctl/b1/move", '{"sentinel": true}')  # its own: arrives
        # the broker keeps one client's messages in order: once the sentinel is in, the
        # forged ones would be in before it
        station.wait(lambda: bool(station.on("b1/move")), 10, "b1's own move")
        topics = [r.topic for r in station.received]
        assert topics == ["board-ctl/b1/move"], topics
        # the station writes commands only, never a board's topics
        send(station.client, "board-ctl/b1/move", '{"forged": "by the station"}')
        send(station.client, "board-ctl/b1/cmd/ack", '{"sentinel": 2}')
        station.wait(lambda: bool(station.on("b1/cmd/ack")), 10, "the station's command")
        assert [json.loads(r.payload) for r in station.on("b1/move")] == [{"sentinel": True}]
    finally:
        b1.disconnect()
        station.close()


def test_a_board_reads_only_its_own_commands(broker: Broker) -> None:
    station = Station(broker, topics="board-ctl/+/status")
    got: list[str] = []
    b1 = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="raw-b1", protocol=mqtt.MQTTv5)
    b1.username_pw_set("b1", USERS["b1"])
    b1.on_message = lambda c, u, m: got.append(m.topic)
    acked: list[int] = []  # (SUBACKs, refusals included: a command sent before would be lost)
    b1.on_subscribe = lambda c, u, mid, reasons, p: acked.append(mid)
    b1.connect("127.0.0.1", broker.port)
    b1.loop_start()
    try:
        asked = [b1.subscribe(topic, qos=1)[1]
                 for topic in ("board-ctl/b2/cmd/#", "board-ctl/#", "board-ctl/b1/cmd/#")]
        _wait(lambda: set(asked) <= set(acked))
        b2 = client(broker, "b2")
        send(b2, "board-ctl/b2/move", "{}")  # another board's game: not for b1
        send(station.client, "board-ctl/b2/cmd/result", '{"id": "for b2"}')
        send(station.client, "board-ctl/b1/cmd/result", '{"id": "for b1"}')
        station.wait(lambda: "board-ctl/b1/cmd/result" in got, 10, "b1's own command")
        assert set(got) == {"board-ctl/b1/cmd/result"}  # (once per subscription it fits)
        b2.disconnect()
    finally:
        b1.disconnect()
        station.close()


@pytest.mark.slow
def test_anonymous_and_wrong_passwords_are_refused(broker: Broker) -> None:
    for user, password in (("b1", "wrong"), ("nobody", "x"), ("", "")):
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        outcome: list[Any] = []
        c.on_connect = lambda cl, u, f, reason, p: outcome.append(reason)
        if user:
            c.username_pw_set(user, password)
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        try:
            _wait(lambda: bool(outcome))
            assert outcome[0].is_failure, (user, outcome)
        finally:
            c.loop_stop()


def _wait(check: Any, timeout: float = 5.0) -> None:
    import time
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "no answer from the broker"
        time.sleep(0.01)


@pytest.mark.parametrize("user, password, says", [
    ("b1", "not-the-password", "Not authorized"),  # (Mosquitto 2.0's answer to both)
    ("stranger", "b1-secret", "Not authorized"),
])
def test_board_ctl_run_with_a_wrong_password_stops_in_one_line(
        broker: Broker, tmp_path: Path, user: str, password: str, says: str) -> None:
    secret = tmp_path / "password"
    secret.write_text(password + "\n", encoding="utf-8")
    config = tmp_path / "board.toml"
    config.write_text(f'[mqtt]\nusername = "{user}"\npassword_file = "{secret}"\n'
                      '[display]\nview = "plain"\n', encoding="utf-8")
    result = board_ctl("run", "--config", str(config), "--mqtt", broker.url, "--board-id",
                       "b1", "--once", cwd=tmp_path, env=child_env(), timeout=60)
    assert result.returncode == 2, result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"board-ctl run: {broker.url} refused board b1 (user "
                               f"'{user}'): {says}"), lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args, says", [
    (("--mqtt", "http://hall", "--board-id", "b1"), "--mqtt must be mqtt://HOST"),
    (("--mqtt", "mqtt://hall"), "mqtt.board_id must be 1-64 letters"),  # (the config's key)
    (("--mqtt", "mqtt://hall", "--board-id", "b/1"), "--board-id must be 1-64 letters"),
])
def test_a_bad_mqtt_setting_is_one_line(tmp_path: Path, args: tuple[str, ...],
                                        says: str) -> None:
    result = board_ctl("run", *args, "--once", cwd=tmp_path, env=child_env(), timeout=60)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert says in result.stderr, result.stderr


# ---------------------------------------------------------------- forgeries (issue 17)


class Client:
    """A paho client logged in as `user` with the client id it chooses: what an attacker
    holding that user's credential runs. Counts its disconnections; keeps what it gets
    and the broker's answer to each publication."""

    def __init__(self, broker: Broker, user: str, client_id: str, *, session: bool = False,
                 subscribe: str | None = None) -> None:
        self.lock = threading.Condition()
        self.connects = 0
        self.drops = 0
        self.got: list[tuple[str, bytes]] = []
        self.acks: dict[int, str] = {}
        self.subscribed = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                        protocol=mqtt.MQTTv5)
        c.username_pw_set(user, USERS[user])
        c.reconnect_delay_set(0.05, 0.2)  # type: ignore[arg-type]

        def on_connect(cl: Any, u: Any, flags: Any, reason: Any, props: Any) -> None:
            with self.lock:
                self.connects += not reason.is_failure
                self.lock.notify_all()
            if subscribe and not reason.is_failure:
                cl.subscribe(subscribe, qos=1)

        def on_disconnect(cl: Any, u: Any, flags: Any, reason: Any, props: Any) -> None:
            with self.lock:
                self.drops += 1

        def on_message(cl: Any, u: Any, message: Any) -> None:
            with self.lock:
                self.got.append((message.topic, bytes(message.payload)))
                self.lock.notify_all()

        def on_publish(cl: Any, u: Any, mid: int, reason: Any, props: Any) -> None:
            with self.lock:
                self.acks[mid] = str(reason)
                self.lock.notify_all()

        c.on_connect, c.on_disconnect, c.on_message = on_connect, on_disconnect, on_message
        c.on_publish = on_publish
        c.on_subscribe = lambda cl, u, mid, reasons, p: self.subscribed.set()
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600
        c.connect("127.0.0.1", broker.port, keepalive=10, clean_start=not session,
                  properties=properties)
        c.loop_start()
        self.client = c
        self.wait(lambda: self.connects > 0, "connected")
        if subscribe:
            assert self.subscribed.wait(10), "no SUBACK"

    def wait(self, check: Any, what: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        with self.lock:
            while not check():
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting for {what}"
                self.lock.wait(min(left, 0.2))

    def publish(self, topic: str, payload: bytes) -> str:
        """The broker's answer (its PUBACK's reason)."""
        mid = self.client.publish(topic, payload, qos=1).mid
        self.wait(lambda: mid in self.acks, f"the PUBACK of {topic}")
        return self.acks[mid]

    def topics(self) -> list[str]:
        with self.lock:
            return [topic for topic, _ in self.got]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_no_credential_takes_over_another_users_connection_or_session(broker: Broker) -> None:
    """Issue 17 §1.2: b1 connecting with the station's client id (or b2's) knocked it off
    and inherited its persistent session. Each id a user's own: the station and b2 stay
    connected through an attacker's reconnection loop, and the station's queued
    messages wait for the station, not for whoever takes its id."""
    station = Client(broker, "arbiter", "arbiter", session=True, subscribe="board-ctl/+/+")
    b2 = Client(broker, "b2", "b2")
    try:
        for stolen in ("arbiter", "board-ctl-station", "b2", "board-ctl-b2"):
            for _ in range(5):
                attacker = Client(broker, "b1", stolen, session=True)
                attacker.close()
        assert (station.drops, b2.drops) == (0, 0)
        # the station away (its session kept): what a board publishes meanwhile is queued
        # for the station; b1 under the station's id, session kept, gets none of it
        station.client.disconnect()
        station.client.loop_stop()
        assert b2.publish("board-ctl/b2/move", b'{"queued": 1}') == "Success"
        thief = Client(broker, "b1", "arbiter", session=True, subscribe="board-ctl/+/+")
        time.sleep(0.3)  # (a negative: nothing may arrive; the queue was handed at CONNACK)
        assert thief.got == []
        thief.close()
        station = Client(broker, "arbiter", "arbiter", session=True)
        station.wait(lambda: ("board-ctl/b2/move", b'{"queued": 1}') in station.got,
                     "the queued move, for the station")
    finally:
        station.close()
        b2.close()


@pytest.mark.parametrize("user, topic", [
    ("b1", "board-ctl/b1/cmd/result"),   # a board's own orders: only the station's
    ("b1", "board-ctl/b1/cmd/clock"),
    ("b1", "board-ctl/b2/cmd/result"),
    ("b1", "board-ctl/b2/state"),        # another board's game
    ("b1", "board-ctl/b1/other"),        # not a topic of the contract
    ("b1", "board-ctl/b1/state/x"),
    ("arbiter", "board-ctl/arbiter/status"),  # the station posing as a board
    ("arbiter", "board-ctl/arbiter/state"),
    ("arbiter", "board-ctl/b1/state"),
    ("observer", "board-ctl/observer/state"),
    ("observer", "board-ctl/b1/move"),
    ("observer", "board-ctl/b1/cmd/result"),
])
def test_the_broker_refuses_every_forged_publication(broker: Broker, user: str,
                                                     topic: str) -> None:
    """Issue 17 §1.3: as b1, cmd/result {"by": "arbiter", ...} ended b1's game 0-1 "given
    by the arbiter"; as arbiter, board-ctl/arbiter/status made a board appear. Each
    forgery is refused by the broker and reaches no one: witnesses reading everything
    they may get b2's next message, sent after the broker answered, and nothing before."""
    witnesses = [Client(broker, name, name, subscribe=topics)  # (one connection a user)
                 for name, topics in (("observer", "board-ctl/+/+"), ("arbiter", "board-ctl/#"))
                 if name != user]
    sender = Client(broker, user, user)
    b2 = Client(broker, "b2", "b2")
    try:
        forged = b'{"v": 1, "id": "forged", "by": "arbiter", "result": "0-1"}'
        assert sender.publish(topic, forged) == "Not authorized"
        assert b2.publish("board-ctl/b2/move", b'{"sentinel": 1}') == "Success"
        for witness in witnesses:
            witness.wait(lambda: "board-ctl/b2/move" in witness.topics(), "the sentinel")
            assert topic not in witness.topics()
    finally:
        for c in (sender, b2, *witnesses):
            c.close()
