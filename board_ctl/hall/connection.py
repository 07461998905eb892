"""The board's connection to the broker: paho-mqtt 2.x (callback API version 2, MQTT 5),
on a thread of its own (its network loop on epoll: board_ctl/mqttloop.py), reconnecting
with backoff (jittered) until closed.

Each attempt uses a fresh client, so a reconnection starts with nothing queued from the
last one: the publisher decides what is sent again, from the journal, in order. The
session is persistent (a fixed client id, clean start off, a session expiry), so the
broker keeps the board's subscription and the commands sent to it while it was away.
What happens is reported to `on_event` (from this thread: hand it on at once).
"""

from __future__ import annotations

import logging
import random
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from board_ctl.hall.settings import SESSION_EXPIRY, MqttSettings
from board_ctl.mqttloop import SocketLoop

log = logging.getLogger(__name__)

KEEPALIVE = 15  # s: a dead connection is noticed within 1.5 keepalives
MIN_DELAY = 0.25  # s before the first reconnection attempt; doubles up to MAX_DELAY
MAX_DELAY = 4.0
# each wait is drawn from [JITTER × delay, delay]: a hall's boards, all dropped at once by a
# broker's restart, come back spread out rather than in one burst at every doubling
JITTER = 0.5
CONNECT_TIMEOUT = 5.0
OFFLINE = b"offline"


@dataclass(frozen=True)
class Connected:
    generation: int
    session_present: bool


@dataclass(frozen=True)
class Refused:
    """The broker answered but would not let the board in (a wrong password, not
    authorised): a configuration error, tried again with backoff."""

    reason: str


@dataclass(frozen=True)
class Unreachable:
    reason: str


@dataclass(frozen=True)
class Disconnected:
    generation: int
    reason: str


@dataclass(frozen=True)
class Acked:
    generation: int
    mid: int
    refused: str | None  # the broker took the message but would not route it (its ACL)


ConnectionEvent = Connected | Refused | Unreachable | Disconnected | Acked
MessageHandler = Callable[[mqtt.Client, Any, mqtt.MQTTMessage], None]


class Connection:
    def __init__(self, settings: MqttSettings, on_event: Callable[[ConnectionEvent], None],
                 on_message: MessageHandler, subscriptions: tuple[str, ...] = ()) -> None:
        self.settings = settings
        self.on_event = on_event
        self.on_message = on_message
        self.subscriptions = subscriptions
        self.generation = 0
        self._client: mqtt.Client | None = None  # connected or connecting
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        self.max_packet: int | None = None  # the broker's Maximum Packet Size (its CONNACK)
        self.native_ids: list[int] = []  # the threads that work for this board (CPU figures)
        self._failing = False  # the attempts since the last connection have all failed

    # ------------------------------------------------------------------ running

    def start(self) -> None:
        thread = threading.Thread(target=self._run, daemon=True,
                                  name=f"mqtt-{self.settings.board_id}")
        thread.start()
        # known once started: ensure_running (from the publisher's thread) takes a thread
        # not started yet for a dead one, and would start a second, which then knocks
        # this one's connection off with the same client id, and back, for ever
        self._thread = thread

    def ensure_running(self) -> bool:
        """Start the connection's thread again if it died (for whatever reason: nothing
        that reaches it may cut the board off for good); True if it had to."""
        thread = self._thread
        if thread is None or thread.is_alive() or self._closing.is_set():
            return False
        log.error("the MQTT connection of board %s stopped: started again",
                  self.settings.board_id)
        self.start()
        return True

    def _run(self) -> None:
        self.native_ids.append(threading.get_native_id())
        delay = MIN_DELAY
        while not self._closing.is_set():
            try:
                delay = self._connect_once(delay)
            except Exception:  # a fault of paho's or ours: a new client, after the delay
                log.exception("MQTT connection of board %s failed", self.settings.board_id)
                with self._lock:
                    self._client = None
                self._closing.wait(_jittered(delay))
                delay = min(delay * 2, MAX_DELAY)

    def _connect_once(self, delay: float) -> float:
        """One connection, from its attempt to its end; the delay before the next."""
        client = self._new_client()
        loop = SocketLoop(client)
        with self._lock:
            self.generation += 1
            generation = self.generation
        try:
            try:
                client.connect(self.settings.host, self.settings.port, keepalive=KEEPALIVE,
                               clean_start=False, properties=_session_properties())
            except (OSError, ssl.SSLError, ValueError) as exc:
                self.on_event(Unreachable(_reason(exc)))
                self._closing.wait(_jittered(delay))
                return min(delay * 2, MAX_DELAY)
            with self._lock:
                self._client = client
                closing = self._closing.is_set()
            if closing:  # close() came while this connection was being made
                client.disconnect()
            ended = mqtt.MQTTErrorCode.MQTT_ERR_UNKNOWN
            try:
                ended = loop.run()  # until this connection ends (close() disconnects it)
            finally:  # (also when a callback raised out of paho's loop)
                with self._lock:
                    self._client = None
                sock = client.socket()
                if sock is not None:
                    sock.close()
                if client.user_data_get().get("connected"):
                    delay = MIN_DELAY
                    self._failing = False
                    self.on_event(Disconnected(generation,
                                               client.user_data_get().get("why", "")))
                elif not self._closing.is_set() and \
                        not client.user_data_get().get("refused"):
                    # the broker took the connection but it ended before the broker's answer
                    why = mqtt.error_string(ended)
                    if not self._failing:
                        log.warning("board %s: the connection to %s ended before the broker "
                                    "let it in (%s); trying again", self.settings.board_id,
                                    self.settings.url, why)
                    self._failing = True
                    self.on_event(Unreachable(why))
        finally:
            loop.close()
        if not self._closing.is_set():
            self._closing.wait(_jittered(delay))
            delay = min(delay * 2, MAX_DELAY)
        return delay

    def _new_client(self) -> mqtt.Client:
        s = self.settings
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=s.client_id,
                             protocol=mqtt.MQTTv5, reconnect_on_failure=False,
                             manual_ack=True, userdata={})
        client.connect_timeout = CONNECT_TIMEOUT
        client.max_inflight_messages_set(100)
        client.max_queued_messages_set(0)
        if s.password is not None or s.username:
            client.username_pw_set(s.username, s.password)
        if s.tls:
            client.tls_set(ca_certs=s.ca_file)
        client.will_set(s.topic("status"), OFFLINE, qos=1, retain=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        client.on_subscribe = self._on_subscribe
        return client

    # ------------------------------------------------------------------ callbacks

    def _on_connect(self, client: mqtt.Client, userdata: dict[str, object],
                    flags: mqtt.ConnectFlags, reason: ReasonCode,
                    properties: Properties | None) -> None:
        if reason.is_failure:
            userdata["refused"] = True  # (said by the publisher)
            self.on_event(Refused(str(reason)))
            return
        userdata["connected"] = True
        self.max_packet = getattr(properties, "MaximumPacketSize", None)
        for topic in self.subscriptions:
            client.subscribe(topic, qos=1)
        self.on_event(Connected(self.generation, flags.session_present))

    def _on_disconnect(self, client: mqtt.Client, userdata: dict[str, object],
                       flags: mqtt.DisconnectFlags, reason: ReasonCode,
                       properties: Properties | None) -> None:
        userdata["why"] = str(reason)

    def _on_message(self, client: mqtt.Client, userdata: object,
                    message: mqtt.MQTTMessage) -> None:
        """A command, handed on; whatever happens to it, it is acknowledged (a QoS 1
        message never acknowledged comes back at every connection, and again)."""
        try:
            self.on_message(client, userdata, message)
        except Exception:
            log.exception("board %s: a message on %s could not be handled; acknowledged",
                          self.settings.board_id, _topic(message))
            client.ack(message.mid, message.qos)

    def _on_publish(self, client: mqtt.Client, userdata: dict[str, object], mid: int,
                    reason: ReasonCode, properties: Properties | None) -> None:
        self.on_event(Acked(self.generation, mid, str(reason) if reason.is_failure else None))

    def _on_subscribe(self, client: mqtt.Client, userdata: dict[str, object], mid: int,
                      reasons: list[ReasonCode], properties: Properties | None) -> None:
        for reason in reasons:
            if reason.is_failure:
                log.error("the broker refused board %s's subscription to its commands: %s "
                          "(check the broker's ACL)", self.settings.board_id, reason)

    # ------------------------------------------------------------------ from other threads

    def publish(self, topic: str, payload: bytes, retain: bool = False) -> int | None:
        """Send at QoS 1 on the current connection: its message id, None without one."""
        with self._lock:
            client = self._client
        if client is None or not client.is_connected():
            return None
        limit = self.max_packet
        if limit is not None and len(payload) + len(topic.encode()) + 16 > limit:
            # the broker would drop the connection for it (and again at every attempt)
            log.warning("board %s: %s not published: %d bytes, more than the broker takes "
                        "(%d)", self.settings.board_id, topic, len(payload), limit)
            return None
        info = client.publish(topic, payload, qos=1, retain=retain)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            log.warning("publish to %s not queued: %s", topic, mqtt.error_string(info.rc))
            return None
        return info.mid

    def ack(self, client: mqtt.Client, mid: int) -> None:
        """Acknowledge a command (QoS 1) once it is done, on the connection it came by."""
        with self._lock:
            current = self._client
        if client is current:
            client.ack(mid, 1)

    def close(self, goodbye: tuple[str, bytes] | None = None, timeout: float = 2.0) -> None:
        """Say goodbye (a retained message, waited for), disconnect, stop the thread."""
        self._closing.set()
        with self._lock:
            client = self._client
        if client is not None:
            if goodbye is not None and client.is_connected():
                info = client.publish(goodbye[0], goodbye[1], qos=1, retain=True)
                try:
                    info.wait_for_publish(timeout)
                except (RuntimeError, ValueError):
                    pass
            client.disconnect()
        if self._thread is not None:
            self._thread.join(timeout=CONNECT_TIMEOUT + 2)


def _jittered(delay: float) -> float:
    return random.uniform(JITTER * delay, delay)


def _session_properties() -> Properties:
    properties = Properties(PacketTypes.CONNECT)
    properties.SessionExpiryInterval = SESSION_EXPIRY
    return properties


def _topic(message: mqtt.MQTTMessage) -> str:
    try:
        return message.topic
    except UnicodeDecodeError:
        return repr(message._topic[:100])


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
