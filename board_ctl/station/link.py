"""The station's MQTT client (paho-mqtt 2.x): reads every board's topics, sends commands.

A persistent session (fixed client id, clean_start off, a session expiry) makes the
broker keep the moves published while the station was away and hand them over when it
returns; retained state, status and PGN give it the hall as it is now. A thread of the
link's own runs paho's loop (which reconnects with backoff); messages go straight to
`on_message`, which must hand them to the station's loop at once. No message, and no
fault, stops that thread for good: a callback's exception is logged, and a thread that
died anyway is started again by `ensure_running` (the station calls it every second)."""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from board_ctl.errors import BoardCtlError
from board_ctl.station.contract import DEFAULT_PREFIX, subscription

log = logging.getLogger(__name__)
SESSION_EXPIRY_S = 7 * 24 * 3600
STATION_ID = "board-ctl-station"  # the client id without a broker user (else: the user)


class BrokerError(BoardCtlError, ValueError):
    """A broker URL or credential that cannot be used."""


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None

    @classmethod
    def parse(cls, url: str, password_file: Path | None = None,
              username: str | None = None) -> BrokerAddress:
        parts = urlsplit(url if "://" in url else "mqtt://" + url)
        if parts.scheme not in ("mqtt", "mqtts"):
            raise BrokerError(f"broker {url!r}: mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
        if not parts.hostname:
            raise BrokerError(f"broker {url!r}: no host")
        try:
            port = parts.port or (8883 if parts.scheme == "mqtts" else 1883)
        except ValueError:
            raise BrokerError(f"broker {url!r}: a bad port") from None
        password = unquote(parts.password) if parts.password else None
        if password_file is not None:
            try:
                password = password_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise BrokerError(f"broker password file: {exc}") from None
        user = username or (unquote(parts.username) if parts.username else None)
        return cls(parts.hostname, port, parts.scheme == "mqtts", user, password)


class StationLink:
    """One MQTT connection for the station: subscribe to all boards, publish commands."""

    def __init__(self, address: BrokerAddress, on_message: Callable[[str, bytes], None],
                 on_connection: Callable[[bool, str], None] | None = None,
                 prefix: str = DEFAULT_PREFIX, client_id: str = STATION_ID,
                 ca_file: Path | None = None) -> None:
        self.address = address
        self.prefix = prefix
        self._on_message_cb = on_message
        self._on_connection_cb = on_connection
        self.connected = threading.Event()
        self.last_error: str | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv5)
        if address.username is not None:
            client.username_pw_set(address.username, address.password)
        if address.tls:
            client.tls_set(ca_certs=str(ca_file) if ca_file else None,
                           tls_version=ssl.PROTOCOL_TLS_CLIENT)
        client.reconnect_delay_set(min_delay=1, max_delay=15)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self.client = client

    def start(self) -> None:
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = SESSION_EXPIRY_S
        try:
            self.client.connect_async(self.address.host, self.address.port, keepalive=15,
                                      clean_start=False, properties=properties)
        except (OSError, ValueError) as exc:
            raise BrokerError(f"broker {self.address.host}:{self.address.port}: {exc}") from None
        self._start_thread()

    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True, name="mqtt-station")
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.client.loop_forever(retry_first_connection=True)
            except Exception:
                log.exception("the broker connection's loop failed: going on")
            if not self._stopping.is_set():
                self._stopping.wait(1.0)

    def ensure_running(self) -> bool:
        """Start the link's thread again if it died; True if it had to."""
        thread = self._thread
        if thread is None or thread.is_alive() or self._stopping.is_set():
            return False
        log.error("the broker connection's thread stopped: started again")
        self._start_thread()
        return True

    def watch(self, loop: asyncio.AbstractEventLoop, every: float = 1.0) -> None:
        """Check the thread every `every` s from the station's loop, until stopped."""
        def check() -> None:
            if not self._stopping.is_set():
                self.ensure_running()
                loop.call_later(every, check)
        loop.call_later(every, check)

    def stop(self) -> None:
        self._stopping.set()
        self.client.disconnect()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def publish(self, topic: str, payload: str) -> None:
        """QoS 1, never retained; paho keeps it and sends it on reconnection when the
        broker is away."""
        info = self.client.publish(topic, payload, qos=1, retain=False)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            raise BrokerError(f"cannot publish to {topic}: {mqtt.error_string(info.rc)}")

    # paho's thread ------------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: object, flags: object,
                    reason_code: object, properties: object) -> None:
        if getattr(reason_code, "is_failure", False):
            self.last_error = f"the broker refused the station: {reason_code}"
            log.error("%s", self.last_error)
            if self._on_connection_cb:
                self._on_connection_cb(False, self.last_error)
            return
        client.subscribe(subscription(self.prefix), qos=1)
        self.last_error = None
        self.connected.set()
        log.info("connected to %s:%d", self.address.host, self.address.port)
        if self._on_connection_cb:
            self._on_connection_cb(True, "")

    def _on_disconnect(self, client: mqtt.Client, userdata: object, flags: object,
                       reason_code: object, properties: object) -> None:
        self.connected.clear()
        log.warning("broker connection lost: %s", reason_code)
        if self._on_connection_cb:
            self._on_connection_cb(False, str(reason_code))

    def _on_message(self, client: mqtt.Client, userdata: object,
                    message: mqtt.MQTTMessage) -> None:
        try:
            self._on_message_cb(message.topic, bytes(message.payload))
        except Exception:  # (a topic that is not UTF-8, a loop closing): this one only
            log.exception("a message from the broker could not be handed on")
