"""sd_notify(3) by hand: readiness, status and watchdog pets over $NOTIFY_SOCKET.

systemd passes a unix datagram socket path in NOTIFY_SOCKET (``@name`` means the
abstract namespace) and, with WatchdogSec=, the watchdog interval in WATCHDOG_USEC (for
the process WATCHDOG_PID, when set). Without NOTIFY_SOCKET every call does nothing, so
the same code runs from a terminal.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, environ: Mapping[str, str] | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address = env.get("NOTIFY_SOCKET") or None
        self.watchdog_interval: float | None = None
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            self.watchdog_interval = int(usec) / 1_000_000
        self._clock = clock or time.monotonic
        self._next_pet = 0.0
        self._socket: socket.socket | None = None

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *lines: str) -> bool:
        """Send one datagram of NAME=value lines; False if systemd is not listening."""
        if self.address is None:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX,
                                             socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            # Never block the event loop on a busy or stuck notify socket: drop instead.
            self._socket.sendto("\n".join(lines).encode("utf-8"), socket.MSG_DONTWAIT, target)
        except OSError as exc:
            log.debug("sd_notify to %s failed: %s", self.address, exc)
            return False
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    def pet(self) -> bool:
        """WATCHDOG=1 if half the watchdog interval has passed since the last pet."""
        if self.watchdog_interval is None:
            return False
        now = self._clock()
        if now < self._next_pet:
            return False
        self._next_pet = now + self.watchdog_interval / 2
        return self.send("WATCHDOG=1")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
