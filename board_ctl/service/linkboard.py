"""The board over its firmware link (`firmware_bridge.link.BoardLink`): a USB serial
port such as /dev/chessboard or /dev/serial/by-id/..., the emulator's pty, or any
pyserial URL (``socket://host:port``, ``rfc2217://...``, ``loop://``).

BoardLink does the work: handshake, events, reconnecting with backoff after a yanked
cable, a fresh snapshot after every (re)connection or sequence gap, and the last LED
frame sent again to a board that comes back. This module runs its reader thread and
tells the service when the link goes down and comes back.

Time scale: a board's millisecond clock runs with the game. The board emulator plays a
log N times faster (its HELLO_ACK says ``speed=N``): its events are N times closer
together than the game's, so their times are multiplied by N here and the referee, the
sensor log and the PGN's move times keep the log's own timeline. `time_scale` forces a
factor (``board-ctl run --speed``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from board_ctl.core import events as ev
from board_ctl.core.effects import LedFrame
from board_ctl.service.backends import Put
from board_ctl.service.messages import LinkDown, LinkUp
from firmware_bridge.link import BoardLink, BoardLinkError, BoardUrlError, ProtocolVersionError

log = logging.getLogger(__name__)

# Reconnect attempts: soon after a yank, then every 0.25 s at most. Every second away is
# play the board reports only as its snapshot, so the link comes back as soon as it can.
RECONNECT_BACKOFF = (0.02, 0.25)
TICK_LAG = 0.05  # s a quiet-board Tick stays behind the host clock, at least (QuietTicks)
# A Tick lags more while events come late (an emulator starved of CPU sends them late; a
# serial board's come within milliseconds): never more than this, so the referee's timers
# (a move completed by release, a flag) fire at most this late
MAX_TICK_LAG = 1.0
LATE_MEMORY = 30.0  # s of the link's host time a late event keeps the Tick's lag up
LATE_MARGIN = 2.0  # the lag a late event asks for: this many times how late it came
# The speeds a board may claim (an emulator's --speed, as `board-ctl run --speed` takes):
# event times are multiplied by it, so a wild claim would throw the game's clock years ahead.
SPEED_RANGE = (0.01, 1000.0)


class LinkBoard:
    def __init__(self, url: str, *, baudrate: int = 115200, connect_timeout: float = 10.0,
                 poll: float = 0.1, time_scale: float | None = None,
                 link_factory: Callable[..., BoardLink] = BoardLink) -> None:
        self.url = url
        self.description = url
        self.identity = f"serial {url}"  # until the board says its own id
        self.connect_timeout = connect_timeout
        self.poll = poll
        self.time_scale = time_scale  # None: the board's own (1, or the emulator's speed)
        self.scale = 1.0
        self.link = link_factory(url, baudrate=baudrate, backoff=RECONNECT_BACKOFF)
        self._put: Put | None = None
        self._connects = 0
        self._disconnects = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.on_down: Callable[[LinkDown], object] | None = None  # may replace the message

    def start(self, put: Put) -> None:
        try:
            self.link.open(timeout=self.connect_timeout)
        except (ProtocolVersionError, BoardUrlError):
            raise
        except BoardLinkError as exc:
            if "://" not in self.url and not os.path.exists(self.url):
                raise BoardLinkError(
                    f"no board on {self.url}: the device does not exist (is the board "
                    f"plugged in? the udev rule config/99-board-ctl.rules names it "
                    f"/dev/chessboard)") from None
            raise BoardLinkError(f"{exc} (is it the chessboard, with its firmware running?)") \
                from None
        info = self.link.board
        self.scale = self.time_scale or (board_speed(info.firmware) if info else 1.0)
        if info is not None:
            self.description = f"{self.url} (firmware {info.firmware}, board {info.board_id})"
            self.identity = f"board {info.board_id}"
        if self.scale != 1.0:
            log.info("board clock runs %gx the game's: event times scaled by %g", self.scale,
                     self.scale)
        self._put = put
        self._connects = self.link.stats.connects
        self._disconnects = self.link.stats.disconnects
        self._thread = threading.Thread(target=self._read, name="board-link", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        """Reader thread: events onto the queue, and a Tick when the board is quiet.

        Like ``BoardLink.serve``, but a Tick is stamped from the last event's board time
        plus the host time since, minus TICK_LAG, and without ``BoardLink.now()``: that
        call also moves the floor for later events' times, so a frame delayed in transit
        would get a later time than the board gave it. A Tick that lags a little only
        fires the referee's timers a little later; the events keep the board's times.
        """
        ticks = QuietTicks()
        while not self._stop.is_set():
            events = self.link.read_events(self.poll)
            now = time.monotonic()
            for event in events:
                self._forward(event)
            if events:
                ticks.heard(events, now)
            else:
                self._forward(ev.Tick(ticks.tick(now)))

    def _forward(self, event: ev.Event) -> None:
        """The reader thread's `put`: the event, preceded by any change of the link."""
        assert self._put is not None
        if self.scale != 1.0:
            event = dataclasses.replace(event, t=event.t * self.scale)
        stats = self.link.stats
        t = event.t
        if stats.disconnects != self._disconnects:
            self._disconnects = stats.disconnects
            down = LinkDown(t, "the board stopped answering")
            self._put(self.on_down(down) if self.on_down else down)
        if stats.connects != self._connects and self.link.connected:
            self._connects = stats.connects
            info = self.link.board
            self._put(LinkUp(t, f"firmware {info.firmware}, board {info.board_id}"
                             if info else ""))
        self._put(event)

    def send_leds(self, frame: LedFrame) -> None:
        self.link.send_leds(frame)  # False while the link is down: BoardLink resends later

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:  # first: pyserial cannot close a port mid-read
            self._thread.join(timeout=5)
        self.link.close()


def board_speed(firmware: str) -> float:
    """N from an emulator's ``speed=N`` firmware string; 1 for a real board, and for a
    claim that is not a speed in SPEED_RANGE (said in the log: the game is then timed
    by the board's own clock, as a real board's)."""
    match = re.search(r"\bspeed=(\S*)", firmware)
    if match is None:
        return 1.0
    low, high = SPEED_RANGE
    try:
        speed = float(match.group(1))
    except ValueError:
        speed = math.nan
    if not low <= speed <= high:  # NaN too
        log.warning("the board says speed=%s: not a speed from %g to %g; its events are "
                    "taken at real speed", match.group(1)[:20], low, high)
        return 1.0
    return speed


class QuietTicks:
    """The times of a quiet board's Ticks: the last event heard (board time) plus the host
    time since, less a lag.

    The lag keeps a Tick behind events still on their way. An event that arrives stamped
    earlier than a Tick already sent is read at the Tick's time (the referee's time only
    goes forward), which shortens what the sensors saw: a slide taken for a carry, a bounce
    for a placement. The events' own delay does not matter (the Ticks are counted from an
    event that came as late): its rise from one event to the next does. TICK_LAG covers a
    serial board's; an event that comes later than the one before by more raises the lag
    to LATE_MARGIN times that, for LATE_MEMORY s, up to MAX_TICK_LAG."""

    def __init__(self) -> None:
        self.last_t: float | None = None  # the last event's board time
        self.last_host = 0.0  # and the host time it was heard
        self.sent = 0.0  # the latest Tick's time
        self._late: deque[tuple[float, float]] = deque()  # (host time, the lag it asks)

    def heard(self, events: Sequence[ev.Event], host_now: float) -> None:
        earliest = min(event.t for event in events)
        if self.last_t is not None:
            later_by = self.last_t + (host_now - self.last_host) - earliest
            if later_by * LATE_MARGIN > TICK_LAG:
                self._late.append((host_now, min(later_by * LATE_MARGIN, MAX_TICK_LAG)))
        latest = max(event.t for event in events)
        if self.last_t is None or latest >= self.last_t:
            self.last_t, self.last_host = latest, host_now

    def lag(self, host_now: float) -> float:
        while self._late and self._late[0][0] < host_now - LATE_MEMORY:
            self._late.popleft()
        return max([TICK_LAG, *(lag for _, lag in self._late)])

    def tick(self, host_now: float) -> float:
        if self.last_t is None:
            return 0.0  # nothing heard yet; the Tick still notices a lost link
        t = max(self.last_t, self.last_t + (host_now - self.last_host) - self.lag(host_now))
        self.sent = max(self.sent, t)
        return self.sent
