"""The hall's broker as shipped (config/mosquitto: no anonymous users, a password file,
the ACL of docs/mqtt.md), on a real Mosquitto: a board writes only its own topics and
reads only its own commands; a wrong password stops `board-ctl run` with one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest

from brokerkit import Broker, Station
from servicekit import board_ctl, child_env

USERS = {"arbiter": "arb-secret", "b1": "b1-secret", "b2": "b2-secret"}


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
