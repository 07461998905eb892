"""The host end of the board link: pyserial in, board_ctl events out, LED frames back.

``BoardLink`` opens any pyserial URL or path (a /dev/ttyACM*, the emulator's pty link,
``loop://``...), greets the board (HELLO / HELLO_ACK, versions checked), asks for a
snapshot, and turns the board's messages into ``board_ctl.core.events``. A yanked cable
is survived: the port is reopened with exponential backoff, the board is greeted again
and a fresh snapshot requested, as after any sequence gap. The API is one blocking call,
``read_events(timeout)``, with no thread inside; ``serve()`` is the body of a reader
thread that only enqueues.

Times: the board stamps everything with its own u32 millisecond clock. Events carry
seconds since the link's first frame, on the board's clock (so bursts keep their
spacing, whatever the USB latency), kept monotonic. After a reconnection the board's
clock is trusted again only if it ran on in step with ours (the board did not reboot);
otherwise the timeline is re-anchored on the host clock. The same happens when the
board's clock jumps while connected: a stamp more than MAX_BACKSTEP before the last one
(a debounced stamp is only a little earlier), or one that puts the timeline ahead of the
host's clock by more than MAX_AHEAD (plus MAX_DRIFT of the link's age: crystals differ)
is a clock fault, counted in ``stats.clock_jumps`` and logged; the game goes on, on the
host's clock. A board can thus never push the timeline far from real time.

Text from the board (its firmware and id, its error messages) is kept and logged with
control characters escaped: it may be printed on the operator's terminal.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import chess
import serial

from board_ctl import __version__
from board_ctl.core import events as ev
from board_ctl.core.effects import (
    Blink,
    Buzzer,
    Colour,
    LedFrame,
    Remote,
    SquareLight,
    StatusLights,
)
from board_ctl.errors import BoardCtlError
from board_ctl.printable import printable
from board_ctl.words import count
from firmware_bridge import protocol as P

try:
    import termios
except ImportError:  # not POSIX: pyserial's Windows backend raises only the first two
    LINK_ERRORS: tuple[type[BaseException], ...] = (serial.SerialException, OSError)
else:
    # A yanked USB device shows up as any of these; termios.error is not an OSError.
    LINK_ERRORS = (serial.SerialException, OSError, termios.error)

log = logging.getLogger(__name__)

_PROMOTIONS = {P.PROMOTE_Q: chess.QUEEN, P.PROMOTE_R: chess.ROOK,
               P.PROMOTE_B: chess.BISHOP, P.PROMOTE_N: chess.KNIGHT}
_SIDED: dict[int, Callable[[float, chess.Color], ev.Event]] = {
    P.DRAW_OFFER: ev.DrawOffered, P.DRAW_ACCEPT: ev.DrawAccepted,
    P.CLAIM: ev.DrawClaimed, P.RESIGN: ev.Resigned}
_UNSIDED: dict[int, Callable[[float], ev.Event]] = {
    P.TAKEBACK: ev.TakebackAsked, P.HINT: ev.HintAsked}
_PROMOTION_ORDER = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)

MAX_BACKSTEP = 1.0  # s a stamp may lie before the previous one (debounced stamps)
MAX_AHEAD = 2.0  # s the timeline may run ahead of the host's clock ...
MAX_DRIFT = 0.001  # ... plus this share of the link's age (1000 ppm: any crystal)
JUMP_WARNINGS = 3  # clock jumps logged one by one; after that every JUMP_EVERY-th
JUMP_EVERY = 100


class BoardLinkError(BoardCtlError, ConnectionError):
    """The board could not be reached, or did not answer the greeting."""


class ProtocolVersionError(BoardLinkError):
    """The board's firmware speaks another protocol version: reflash it (or update)."""


class BoardUrlError(BoardLinkError):
    """The port's URL cannot be opened at all (pyserial refuses it): retrying cannot help."""


@dataclass(frozen=True, slots=True)
class BoardInfo:
    """What the board said in its HELLO_ACK."""

    protocol: int
    firmware: str
    board_id: str


@dataclass
class LinkStats:
    connects: int = 0
    disconnects: int = 0
    gaps: int = 0  # sequence gaps seen (each asks for a snapshot)
    missed: int = 0  # frames lost in those gaps
    dropped: int = 0  # frames dropped by the decoder (garbage, bad CRC, malformed)
    healed: int = 0  # heartbeat snapshots that disagreed with the tracked board
    arbiter: int = 0  # arbiter button presses (no core event for them yet)
    board_errors: int = 0
    clock_jumps: int = 0  # board stamps that left the host's clock (re-anchored)


# ---------------------------------------------------------------- LED frames on the wire


def leds_to_wire(frame: LedFrame) -> tuple[bytes, int, int]:
    """(cells, status, buzzer) of a LEDS message; squares not listed are dark."""
    cells = bytearray(64)
    for light in frame.squares:
        cells[light.square] = P.cell(int(light.colour), int(light.blink))
    s = frame.status
    status = P.pack_status(s.white_to_move, s.black_to_move, s.game_over,
                           None if s.alert is None else int(s.alert), remote_code(s))
    return bytes(cells), status, int(frame.buzzer)


def remote_code(status: StatusLights) -> int:
    """The status byte's remote field: a shown promotion's piece is folded in."""
    if status.remote == Remote.SHOWN and status.promotion in _PROMOTION_ORDER:
        return P.REMOTE_SHOWN + 1 + _PROMOTION_ORDER.index(status.promotion)
    return int(status.remote)


def remote_from_code(code: int) -> tuple[Remote, chess.PieceType | None]:
    if P.REMOTE_SHOWN < code < P.REMOTE_HINT:
        return Remote.SHOWN, _PROMOTION_ORDER[code - P.REMOTE_SHOWN - 1]
    return Remote(code), None


def wire_to_leds(t: float, cells: bytes, status: int, buzzer: int) -> LedFrame:
    """The LedFrame a LEDS message shows (the emulator's view of what it received)."""
    lights = tuple(SquareLight(sq, Colour(c & 0x0F), Blink(c >> 4))
                   for sq, c in enumerate(cells) if c & 0x0F)
    white, black, over, alert = P.unpack_status(status)
    remote, promotion = remote_from_code(P.unpack_remote(status))
    return LedFrame(t, lights, StatusLights(white, black, None if alert is None else Blink(alert),
                                            over, remote, promotion), Buzzer(buzzer))


# ---------------------------------------------------------------- the link


class BoardLink:
    """The board over a serial link; see the module docstring.

    One thread reads (``read_events`` / ``serve``); any thread may send
    (``send_leds``, ``request_snapshot``, ``ping``).
    """

    def __init__(
        self,
        url: str,
        *,
        baudrate: int = 115200,
        handshake_timeout: float = 2.0,
        backoff: tuple[float, float] = (0.05, 2.0),
        poll: float = 0.05,
        forward_heartbeats: bool = False,
        software: str = f"board_ctl {__version__}",
        ident: str | None = None,
        serial_for_url: Callable[..., Any] = serial.serial_for_url,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url
        self.baudrate = baudrate
        self.handshake_timeout = handshake_timeout
        self.backoff_initial, self.backoff_max = backoff
        self.poll = poll  # longest single blocking read, so deadlines are kept
        self.forward_heartbeats = forward_heartbeats  # else only snapshots that tell something
        self.software = software
        self.ident = ident if ident is not None else socket.gethostname()
        self._serial_for_url = serial_for_url
        self._clock = clock
        self._sleep = sleep
        self.board: BoardInfo | None = None
        self.last_pong: int | None = None  # token of the last PONG: a round trip is done
        self.stats = LinkStats()
        self._port: Any = None
        self._lock = threading.Lock()  # port swap and writes (a writer thread may send LEDs)
        self._decoder = P.Decoder()
        self._sender = P.Sender()
        self._pending: deque[P.Message] = deque()  # decoded during the handshake
        self._backoff = self.backoff_initial
        self._next_attempt = 0.0
        self._leds: tuple[bytes, int, int] | None = None  # last frame, replayed on reconnect
        self._occupied: int | None = None  # the board as the event stream says it is
        self._need_snapshot = True
        self._snapshot_asked = 0.0
        self._closed = False
        # board clock -> link seconds
        self._first_host: float | None = None  # host time of the link's first frame
        self._base_t = 0.0  # link seconds at the anchor
        self._acc_ms = 0  # board ms since the anchor, unwrapped
        self._last_ms: int | None = None  # last board ms seen
        self._last_host = 0.0  # host time of that frame
        self._reanchor = False  # set by a reconnection
        self._last_t = 0.0  # time of the last event returned

    # --- connection

    @property
    def connected(self) -> bool:
        return self._port is not None

    def open(self, timeout: float = 5.0) -> None:
        """Connect and greet the board, retrying with backoff until `timeout` seconds."""
        self._closed = False
        if self._port is None and not self._reconnect(self._clock() + timeout):
            raise BoardLinkError(f"no board answered on {self.url} within {timeout:g} s")

    def close(self) -> None:
        self._closed = True
        self._drop(None)

    def __enter__(self) -> BoardLink:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop(self, exc: BaseException | None) -> None:
        with self._lock:
            port, self._port = self._port, None
        if port is None:
            return
        if exc is not None:
            self.stats.disconnects += 1
            log.warning("board link %s lost: %s; reconnecting", self.url, exc)
        self._close_quietly(port)

    def _close_quietly(self, port: Any) -> None:
        try:
            port.close()
        except LINK_ERRORS as exc:  # closing a vanished device can fail too
            log.debug("closing %s: %s", self.url, exc)

    def _reconnect(self, deadline: float) -> bool:
        """Try to connect until deadline, waiting out the backoff; False if it passed."""
        while not self._closed:
            now = self._clock()
            if now >= self._next_attempt:
                try:
                    self._connect()
                    return True
                except (ProtocolVersionError, BoardUrlError):
                    raise  # retrying cannot help
                except LINK_ERRORS as exc:  # includes BoardLinkError (a ConnectionError)
                    self._next_attempt = self._clock() + self._backoff
                    log.info("board link %s: %s; next try in %.2f s", self.url, exc,
                             self._backoff)
                    self._backoff = min(self._backoff * 2, self.backoff_max)
            wait = min(self._next_attempt, deadline) - self._clock()
            if wait <= 0 and self._clock() >= deadline:
                return False
            self._sleep(max(wait, 0.0))
        return False

    def _connect(self) -> None:
        try:
            port = self._serial_for_url(self.url, baudrate=self.baudrate, timeout=self.poll,
                                        write_timeout=1.0)
        except (ValueError, LookupError) as exc:  # an unknown URL scheme, a bad option
            raise BoardUrlError(f"cannot open {self.url}: {type(exc).__name__}: "
                                f"{printable(str(exc))}") from None
        ok = False
        try:
            port.reset_input_buffer()  # whatever the board said to no one
            info, leftovers = self._handshake(port)
            ok = True
        finally:
            if not ok:
                self._close_quietly(port)
        self.board = info
        self._pending.extend(leftovers)
        self._need_snapshot = True
        if self._first_host is None:
            self._first_host = self._clock()
        else:
            self._reanchor = True
        with self._lock:
            self._port = port
            self._write(P.REQUEST_SNAPSHOT)
            if self._leds is not None:
                self._write(P.LEDS, *self._leds)  # the board may have rebooted dark
        self._snapshot_asked = self._clock()
        self._backoff = self.backoff_initial
        self.stats.connects += 1
        log.info("board link %s: firmware %s, board %s, protocol %d", self.url, info.firmware,
                 info.board_id, info.protocol)

    def _handshake(self, port: Any) -> tuple[BoardInfo, list[P.Message]]:
        self._decoder.reset()
        start = self._clock()
        deadline = start + self.handshake_timeout
        hello_at = start
        error_text = ""
        while self._clock() < deadline:
            if self._clock() >= hello_at:  # the board may still be booting: say it again
                port.write(self._sender.frame(P.HELLO, self.software, self.ident))
                hello_at = self._clock() + 0.5
            data = port.read(port.in_waiting or 1)
            messages = self._decoder.feed(data)
            for i, msg in enumerate(messages):
                if msg.type == P.ERROR:
                    error_text = printable(msg.text)
                elif msg.type == P.HELLO_ACK:
                    info = BoardInfo(msg.version, printable(msg.firmware),
                                     printable(msg.board_id))
                    if msg.version != P.PROTOCOL_VERSION:
                        raise ProtocolVersionError(
                            f"the board on {self.url} speaks protocol {msg.version} (firmware "
                            f"{info.firmware}, board {info.board_id}) but this host speaks "
                            f"{P.PROTOCOL_VERSION}: install matching firmware with "
                            f"`python -m firmware_bridge.install`"
                            + (f" (board says: {error_text})" if error_text else ""))
                    return info, messages[i + 1:]
                # anything else predates our HELLO
        raise BoardLinkError(f"no HELLO_ACK from {self.url} within "
                             f"{self.handshake_timeout:g} s" + (f": {error_text}" if error_text else ""))

    # --- reading

    def read_events(self, timeout: float) -> list[ev.Event]:
        """The events the board reports within `timeout` seconds.

        Returns as soon as some are in (every event already received, in order), or an
        empty list at the deadline. Reconnects on the way if the link was lost.
        """
        deadline = self._clock() + timeout
        out: list[ev.Event] = []
        while True:
            if self._port is None:
                if self._closed or not self._reconnect(deadline):
                    return out
            while self._pending:
                out.extend(self._on_message(self._pending.popleft(), self._clock()))
            port = self._port
            if port is None:
                continue
            try:
                waiting = port.in_waiting
                data = port.read(waiting or 1) if waiting or self._clock() < deadline else b""
            except LINK_ERRORS as exc:
                self._drop(exc)
                continue
            if data:
                now = self._clock()
                before = self._decoder.dropped
                for msg in self._decoder.feed(data):
                    out.extend(self._on_message(msg, now))
                if self._decoder.dropped != before:
                    self.stats.dropped += self._decoder.dropped - before
                    log.debug("board link %s: dropped %s", self.url,
                              count(self._decoder.dropped - before, "bad frame"))
            if self._need_snapshot and self._clock() - self._snapshot_asked > 1.0:
                self.request_snapshot()  # the answer got lost: ask again
            if out or self._clock() >= deadline:
                return out

    def serve(self, put: Callable[[ev.Event], None], stop: threading.Event,
              poll: float = 0.1, ticks: bool = True) -> None:
        """Reader-thread body: hand every event to `put` (e.g. a queue's put) until `stop`.

        With `ticks`, a quiet poll puts a ``Tick(now())``, so the core's timers fire on
        the same timeline as the events (and from the same thread that stamps them).
        """
        while not stop.is_set():
            events = self.read_events(poll)
            for event in events:
                put(event)
            if ticks and not events and self._first_host is not None:
                put(ev.Tick(self.now()))

    def now(self) -> float:
        """Link time now, on the events' timeline: the board's last stamp plus the host
        time since. Monotonic, and later events are never stamped before it."""
        if self._first_host is None:
            return self._last_t
        if self._last_ms is None:
            t = self._clock() - self._first_host
        else:
            t = self._base_t + self._acc_ms / 1000 + (self._clock() - self._last_host)
        self._last_t = max(t, self._last_t)
        return self._last_t

    def _on_message(self, msg: P.Message, now: float) -> Iterable[ev.Event]:
        t = msg.type
        if t == P.SQUARE:
            time_ = self._time(msg.ms, now)
            bit = chess.BB_SQUARES[msg.square]
            if self._occupied is not None:
                self._occupied = self._occupied | bit if msg.occupied else self._occupied & ~bit
            return [self._stamp(ev.Placed(time_, msg.square) if msg.occupied
                                else ev.Lifted(time_, msg.square))]
        if t == P.SNAPSHOT:
            return self._on_snapshot(msg, now)
        if t == P.CLOCK:
            return [self._stamp(ev.ClockPressed(self._time(msg.ms, now), msg.side == P.WHITE))]
        if t == P.CLOCK_TIMES:  # the clock's own times, not scaled: they are its display
            times = (msg.white_ms / 1000, msg.black_ms / 1000)
            return [self._stamp(ev.ClockPressed(self._time(msg.ms, now), msg.side == P.WHITE,
                                                times))]
        if t == P.BUTTON:
            return self._on_button(msg, now)
        if t == P.GAP:
            self.stats.gaps += 1
            self.stats.missed += msg.missed
            log.warning("board link %s: %s lost; asking for a snapshot", self.url,
                        count(msg.missed, "frame"))
            self._need_snapshot = True
            self.request_snapshot()
        elif t == P.PING:
            self._send(P.PONG, msg.token)
        elif t == P.PONG:
            self.last_pong = msg.token
        elif t == P.ERROR:
            self.stats.board_errors += 1
            log.warning("board reports error %d: %s", msg.code, printable(msg.text))
        else:
            log.debug("board link %s: ignoring %s", self.url, msg.name)
        return []

    def _on_snapshot(self, msg: P.Message, now: float) -> list[ev.Event]:
        time_ = self._time(msg.ms, now)
        differs = self._occupied is not None and msg.occupied != self._occupied
        if differs and not self._need_snapshot:
            self.stats.healed += 1
            log.warning("board link %s: %s snapshot differs from the events (squares %s): "
                        "passing it on", self.url, P.REASON_NAMES[msg.reason],
                        " ".join(chess.SQUARE_NAMES[s]
                                 for s in chess.scan_forward(msg.occupied ^ self._occupied)))
        forward = self._need_snapshot or differs or self.forward_heartbeats
        self._occupied = msg.occupied
        self._need_snapshot = False
        return [self._stamp(ev.Snapshot(time_, msg.occupied))] if forward else []

    def _on_button(self, msg: P.Message, now: float) -> list[ev.Event]:
        time_ = self._time(msg.ms, now)
        code = msg.button
        if code in _PROMOTIONS:
            return [self._stamp(ev.PromotionChosen(time_, _PROMOTIONS[code]))]
        if code in _SIDED and msg.side != P.NO_SIDE:
            return [self._stamp(_SIDED[code](time_, msg.side == P.WHITE))]
        if code in _UNSIDED:
            return [self._stamp(_UNSIDED[code](time_))]
        if code == P.ARBITER:
            self.stats.arbiter += 1
            log.warning("arbiter button pressed at %.3f s (no core event for it)", time_)
        else:
            log.warning("board link %s: button %s without a side", self.url,
                        P.BUTTON_NAMES[code])
        return []

    def _stamp(self, event: ev.Event) -> ev.Event:
        self._last_t = event.t
        return event

    def _time(self, ms: int, now: float) -> float:
        """Link seconds of a board timestamp (see the module docstring)."""
        assert self._first_host is not None  # set by the handshake
        if self._last_ms is None:
            self._anchor(now)
        else:
            delta = (ms - self._last_ms) & 0xFFFFFFFF
            if delta >= 0x80000000:
                delta -= 0x100000000  # a little earlier (a debounced stamp): fine
            if self._reanchor and abs(delta / 1000 - (now - self._last_host)) > 0.5:
                # the board's clock did not run on with ours: it restarted
                log.info("board link %s: board clock restarted; re-anchoring", self.url)
                self._anchor(now)
            elif self._jumped(delta, now):
                self._anchor(now)
            else:
                self._acc_ms += delta
        self._reanchor = False
        self._last_ms = ms
        self._last_host = now
        return max(self._base_t + self._acc_ms / 1000, self._last_t)

    def _anchor(self, now: float) -> None:
        """From here the board's stamps count from host time `now` on the timeline."""
        assert self._first_host is not None
        self._base_t = max(self._last_t, now - self._first_host)
        self._acc_ms = 0

    def _jumped(self, delta_ms: int, now: float) -> bool:
        """True (and reported) if a stamp `delta_ms` after the last one leaves the host's
        clock: too far back, or ahead of the host's time since the link's first frame
        by more than the allowance (measured from there, so that re-anchoring never lets
        the timeline creep further ahead)."""
        assert self._first_host is not None
        host_t = now - self._first_host
        ahead = self._base_t + (self._acc_ms + delta_ms) / 1000 - host_t
        if delta_ms >= -MAX_BACKSTEP * 1000 and ahead <= MAX_AHEAD + MAX_DRIFT * host_t:
            return False
        self.stats.clock_jumps += 1
        jumps = self.stats.clock_jumps
        if jumps <= JUMP_WARNINGS or jumps % JUMP_EVERY == 0:
            log.warning("board link %s: the board's clock jumped %+.3f s (%s); events are "
                        "timed by the host's clock from here%s", self.url,
                        delta_ms / 1000 - (now - self._last_host),
                        "backwards" if delta_ms < 0 else "ahead of the host's",
                        f" ({jumps} jumps so far)" if jumps > 1 else "")
        return True

    # --- writing

    def _write(self, mtype: int, *values: Any) -> None:
        """Send one message; the caller holds the lock and handles LINK_ERRORS."""
        self._port.write(self._sender.frame(mtype, *values))

    def _send(self, mtype: int, *values: Any) -> bool:
        with self._lock:
            if self._port is None:
                return False
            try:
                self._write(mtype, *values)
                return True
            except LINK_ERRORS as exc:
                # The reader notices the dead port on its next read and reconnects.
                log.warning("board link %s: write failed: %s", self.url, exc)
                return False

    def request_snapshot(self) -> bool:
        self._snapshot_asked = self._clock()
        return self._send(P.REQUEST_SNAPSHOT)

    def send_leds(self, frame: LedFrame) -> bool:
        """Show an LED frame; False if the link is down (it is sent again on reconnect)."""
        self._leds = leds_to_wire(frame)
        return self._send(P.LEDS, *self._leds)

    def ping(self, token: int) -> bool:
        return self._send(P.PING, token)
