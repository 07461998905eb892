"""A paho-mqtt client's network loop on the system's own selector (epoll on Linux).

paho's own loops (`loop_forever`, `loop_start`, `loop`) wait with `select()`, which
cannot watch a file descriptor numbered 1024 or above: `select()` raises ValueError and
paho takes it for a lost connection, without a word. A process holding many files and
sockets (a station serving a hall's browsers, many boards in one process) gets such
numbers for its new sockets, and its client then never completes a connection again.
`SocketLoop` drives the same client with `selectors.DefaultSelector` (no such limit)
through paho's external-loop API (`loop_read`, `loop_write`, `loop_misc`): one thread
does every read and write of the socket, as with paho's `loop_start` (paho has no lock
around a write: two threads writing one socket could interleave the bytes of two packets
when one of them is written in part); other threads' publishes wake it.

    loop = SocketLoop(client)          # before connect(): it takes paho's socket callbacks
    client.connect(host, port)         # (or reconnect())
    reason = loop.run(stop_event)      # until the connection ends, or stop_event is set
    loop.close()
"""

from __future__ import annotations

import selectors
import socket
import threading
from typing import Any

import paho.mqtt.client as mqtt

TICK = 0.5  # s: the loop looks at its keepalive (15 s) at least this often


class SocketLoop:
    def __init__(self, client: mqtt.Client, tick: float = TICK) -> None:
        self.client = client
        self.tick = tick
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._sock: Any = None  # the client's socket as registered
        # With a write callback set, paho never writes from the publishing thread: it
        # asks for the socket to be watched for writing, which wakes this loop.
        client.on_socket_register_write = self._wake
        client.on_socket_unregister_write = None

    def _wake(self, client: mqtt.Client, userdata: Any, sock: Any) -> None:
        try:
            self._wake_w.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # a wake is pending already, or the loop is closed

    def _watch(self, sock: Any, events: int) -> None:
        if sock is not self._sock:
            self._forget()
            self._selector.register(sock, events)
            self._sock = sock
        elif self._selector.get_key(sock).events != events:
            self._selector.modify(sock, events)

    def _forget(self) -> None:
        if self._sock is not None:
            try:
                self._selector.unregister(self._sock)
            except (KeyError, ValueError, OSError):
                pass  # (paho closed it already)
            self._sock = None

    def run(self, stop: threading.Event | None = None) -> mqtt.MQTTErrorCode:
        """Serve the client's connection until it ends (paho's reason: MQTT_ERR_NO_CONN
        when it closed cleanly) or `stop` is set (MQTT_ERR_SUCCESS)."""
        client = self.client
        while stop is None or not stop.is_set():
            sock = client.socket()
            if sock is None:
                return mqtt.MQTTErrorCode.MQTT_ERR_NO_CONN
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.want_write()
                                             else 0)
            self._watch(sock, events)
            # bytes TLS has decrypted already are not on the socket: read them now
            pending = getattr(sock, "pending", None)
            ready = [] if pending is not None and pending() > 0 else \
                self._selector.select(self.tick)
            readable = pending is not None and pending() > 0
            for key, mask in ready:
                if key.fileobj is self._wake_r:
                    self._drain()
                elif mask & selectors.EVENT_READ:
                    readable = True
            rc = client.loop_read() if readable else mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
            if rc == mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS and client.want_write():
                rc = client.loop_write()
            if rc == mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS:
                rc = client.loop_misc()
            if rc != mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS:
                self._forget()
                return rc
        return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS

    def _drain(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass

    def close(self) -> None:
        """Let go of the client's socket callbacks and the loop's own descriptors."""
        if self.client.on_socket_register_write == self._wake:
            self.client.on_socket_register_write = None
        self._forget()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
