"""A real Mosquitto for the tests (Debian's `mosquitto`), started on a free port with the
project's own config/mosquitto files (passwords made with mosquitto_passwd, the ACL as
shipped), and a station-like subscriber: a plain paho client that keys what it gets by
(board, game, ply) as docs/mqtt.md tells subscribers to."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from conftest import missing_tool, stop_process

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "mosquitto"


def mosquitto_path() -> str:
    for name in ("mosquitto", "/usr/sbin/mosquitto"):
        found = shutil.which(name)
        if found:
            return found
    missing_tool("Debian's mosquitto is not installed (apt-get install mosquitto)")
    raise AssertionError("unreachable")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    """Mosquitto with the shipped config: no anonymous users, a password file, the ACL,
    persistence (saved every `autosave` s); `extra`: config lines after the shipped ones
    (for one, a smaller `max_queued_messages`)."""

    def __init__(self, directory: Path, users: dict[str, str], autosave: int = 1,
                 extra: str = "") -> None:
        self.binary = mosquitto_path()
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.users = users
        passwd = self.dir / "passwd"
        passwd.touch()
        for user, password in users.items():
            subprocess.run(["mosquitto_passwd", "-b", str(passwd), user, password], check=True,
                           capture_output=True)
        conf = (CONFIG / "board-ctl.conf").read_text(encoding="utf-8")
        conf = conf.replace("listener 1883", f"listener {self.port} 127.0.0.1")
        conf = conf.replace("/etc/mosquitto/board-ctl.passwd", str(passwd))
        conf = conf.replace("/etc/mosquitto/board-ctl.acl", str(CONFIG / "board-ctl.acl"))
        conf = conf.replace("/var/lib/mosquitto/", f"{self.dir}/")
        conf = conf.replace("/run/mosquitto/mosquitto.pid", f"{self.dir}/mosquitto.pid")
        conf = conf.replace("/var/log/mosquitto/mosquitto.log", f"{self.dir}/mosquitto.log")
        conf = conf.replace("autosave_interval 30", f"autosave_interval {autosave}")
        conf += "\nlog_type all\n" + extra
        if os.geteuid() == 0:  # (as root it would become `mosquitto`, who cannot read tmp)
            conf += "user root\n"
        self.conf = self.dir / "mosquitto.conf"
        self.conf.write_text(conf, encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout: float = 10.0) -> Broker:
        self.proc = subprocess.Popen([self.binary, "-c", str(self.conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    raise RuntimeError(f"mosquitto exited: {err} {self.log()}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"mosquitto did not listen: {self.log()}") from None
                time.sleep(0.02)

    def kill(self) -> None:
        """kill -9: no goodbye, nothing saved since the last autosave."""
        assert self.proc is not None
        stop_process(self.proc, signal.SIGKILL)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)

    def log(self) -> str:
        path = self.dir / "mosquitto.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def password_file(self, user: str) -> Path:
        path = self.dir / f"{user}.password"
        path.write_text(self.users[user] + "\n", encoding="utf-8")
        os.chmod(path, 0o600)
        return path


def bridge_config(second: Broker, password: str) -> str:
    """The shipped bridge (config/mosquitto/board-ctl-bridge.conf) for the station's
    broker's config, pulling from `second` as its `bridge` user."""
    conf = (CONFIG / "board-ctl-bridge.conf").read_text(encoding="utf-8")
    conf = conf.replace("address SECOND-BROKER:1883", f"address 127.0.0.1:{second.port}")
    return conf.replace("remote_password BRIDGE-PASSWORD", f"remote_password {password}")


@dataclass
class Received:
    topic: str
    payload: bytes
    retain: bool
    at: float  # wall clock, s

    def json(self) -> Any:
        return json.loads(self.payload)


@dataclass
class Station:
    """A subscriber as the arbiter station is: user `arbiter`, a persistent session, every
    board's topics; it drops a move whose (board, game, ply) it already has."""

    broker: Broker
    user: str = "arbiter"
    client_id: str = "test-station"
    topics: str = "board-ctl/#"
    received: list[Received] = field(default_factory=list)
    moves: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    duplicates: int = 0
    connects: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Condition()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                  protocol=mqtt.MQTTv5)
        self.client.username_pw_set(self.user, self.broker.users[self.user])
        self.client.reconnect_delay_set(0.2, 1)  # type: ignore[arg-type]
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600
        self.client.connect("127.0.0.1",
                            self.broker.port, keepalive=5, clean_start=False,
                            properties=properties)
        self.client.loop_start()
        self.wait(lambda: self.connects > 0, 10, "the station connected and subscribed")

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any,
                    properties: Any) -> None:
        if not reason.is_failure:
            client.subscribe(self.topics, qos=1)

    def _on_subscribe(self, client: mqtt.Client, userdata: Any, mid: int, reasons: Any,
                      properties: Any) -> None:
        # (counted at the broker's SUBACK, not at the CONNACK: a message published
        # between the two would not reach the station)
        with self._lock:
            self.connects += 1
            self._lock.notify_all()

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        item = Received(message.topic, bytes(message.payload), bool(message.retain), time.time())
        with self._lock:
            self.received.append(item)
            move = item.json() if message.topic.endswith("/move") else None
            if isinstance(move, dict) and "ply" in move:
                plies = self.moves.setdefault((move["board"], move["game"]), [])
                if any(m["ply"] == move["ply"] for m in plies):
                    self.duplicates += 1
                else:
                    plies.append(move)
            self._lock.notify_all()

    def wait(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not check():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
                self._lock.wait(min(left, 0.2))

    def on(self, suffix: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.topic.endswith(suffix)]

    def last(self, suffix: str) -> Any:
        found = self.on(suffix)
        return found[-1].json() if found else None

    def command(self, board: str, verb: str, payload: dict[str, Any],
                timeout: float = 10.0) -> dict[str, Any]:
        """Send a command and wait for its reply."""
        info = self.client.publish(f"board-ctl/{board}/cmd/{verb}", json.dumps(payload), qos=1)
        info.wait_for_publish(timeout)

        def replied() -> bool:
            return any(r.topic == f"board-ctl/{board}/reply" and r.json().get("id") ==
                       payload.get("id") for r in self.received)

        self.wait(replied, timeout, f"the reply to {verb} {payload.get('id')}")
        return [r.json() for r in self.on(f"{board}/reply")
                if r.json().get("id") == payload.get("id")][-1]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class CutProxy:
    """A TCP relay between a board and the broker that can be cut (every connection
    dropped, new ones refused) and restored: the board loses the broker, the broker and
    the station stay up."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = int(self.server.getsockname()[1])
        self.cut = False
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            if self.cut:
                conn.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                conn.close()
                continue
            with self._lock:
                self._pairs.append((conn, upstream))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut_off(self) -> None:
        self.cut = True
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def restore(self) -> None:
        self.cut = False

    def close(self) -> None:
        self._closed = True
        self.cut_off()
        self.server.close()
