"""BoardLink against the real firmware over fake pins, behind a pyserial-like fake port.

Like zigpy-znp's fake device, the other end reuses the real code: here the whole firmware
(scanner, debounce, protocol) runs on the fake pin layer, one loop per port read.
"""

from __future__ import annotations

import termios
import threading
from typing import Any

import chess
import pytest
import serial

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
from firmware_bridge import protocol as P
from firmware_bridge.fakepins import FakeHal, load_firmware
from firmware_bridge.link import (
    BoardLink,
    BoardLinkError,
    ProtocolVersionError,
    leds_to_wire,
    wire_to_leds,
)

app = load_firmware()
START = chess.Board().occupied


class FirmwareSerial:
    """A pyserial port whose far end is the firmware: each read runs one 10 ms loop."""

    def __init__(self, board: FirmwareBoard) -> None:
        self.board = board
        self.is_open = True
        self.written = bytearray()

    def _pump(self) -> None:
        self.board.step()

    @property
    def in_waiting(self) -> int:
        self._check()
        self._pump()
        return len(self.board.hal.port.tx)

    def read(self, size: int = 1) -> bytes:
        self._check()
        tx = self.board.hal.port.tx
        data = bytes(tx[:size])
        del tx[:size]
        return self.board.mangle(data)

    def write(self, data: bytes) -> int:
        self._check()
        self.written += data
        self.board.hal.port.rx.extend(data)
        return len(data)

    def reset_input_buffer(self) -> None:
        self._check()
        self.board.hal.port.tx.clear()

    def close(self) -> None:
        self.is_open = False

    def _check(self) -> None:
        if not self.is_open:
            raise serial.PortNotOpenError()
        if self.board.fail is not None:
            raise self.board.fail


class FirmwareBoard:
    """The board: firmware + fake pins; `fail` makes the port raise (a yanked cable)."""

    def __init__(self, ack_version: int = P.PROTOCOL_VERSION) -> None:
        self.hal = FakeHal(app.DEFAULT_CONFIG)
        self.hal.set_occupancy(START)
        self.fw = app.Firmware(self.hal)
        self.fw.run(steps=5)
        self.fail: BaseException | None = None
        self.unplugged = 0  # opens to refuse
        self.opens = 0
        self.ports: list[FirmwareSerial] = []
        self.mangle = lambda data: data
        self.ack_version = ack_version
        self.host: ManualTime | None = None  # the link's clock, run with the board's

    def step(self) -> None:
        self.fw.run(steps=1)
        if self.host is not None:  # a firmware loop is 10 ms for the host too
            self.host.now += 0.010
        if self.ack_version != P.PROTOCOL_VERSION:  # an old firmware answers in its version
            for msg in P.Decoder().feed(bytes(self.hal.port.tx)):
                if msg.type == P.HELLO_ACK:
                    self.hal.port.tx[:] = P.encode(P.HELLO_ACK, 0, "0.0.1", "old",
                                                   version=self.ack_version)

    def serial_for_url(self, url: str, **kwargs: Any) -> FirmwareSerial:
        assert kwargs["baudrate"] == 115200
        self.opens += 1
        if self.unplugged:
            self.unplugged -= 1
            raise serial.SerialException(f"could not open port {url}: No such file")
        port = FirmwareSerial(self)
        self.ports.append(port)
        return port

    def written(self) -> list[P.Message]:
        return P.Decoder().feed(b"".join(bytes(p.written) for p in self.ports))


class ManualTime:
    """The link's clock: moves only when the link sleeps (backoff) or a test says so."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        self.now += 1e-4  # every look at the clock costs a little, so loops end
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.now += s


def make_link(board: FirmwareBoard, **kw: Any) -> tuple[BoardLink, ManualTime]:
    clock = ManualTime()
    board.host = clock
    link = BoardLink("fake://board", serial_for_url=board.serial_for_url, clock=clock,
                     sleep=clock.sleep, **kw)
    return link, clock


def pump(link: BoardLink, loops: int) -> list[ev.Event]:
    """Run the board `loops` x 10 ms, collecting what the link reports."""
    out: list[ev.Event] = []
    for _ in range(loops):
        out += link.read_events(0)
    return out


def test_connect_snapshot_then_events_with_board_time() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    assert link.board is not None and link.board.board_id == "fake-board"
    events = pump(link, 5)
    assert events == [ev.Snapshot(events[0].t, START)]  # the requested one was the same
    t0 = board.hal.ms()
    board.hal.at(t0 + 1, chess.E2, False)
    board.hal.at(t0 + 401, chess.E4, True)
    events += pump(link, 60)
    board.hal.set_lever(P.WHITE, True)
    events += pump(link, 10)
    snap, lifted, placed, clock = events
    assert (lifted, placed, clock) == (
        ev.Lifted(lifted.t, chess.E2), ev.Placed(placed.t, chess.E4),
        ev.ClockPressed(clock.t, chess.WHITE))
    assert placed.t - lifted.t == pytest.approx(0.400)  # the board's clock, not USB timing
    assert 0 <= snap.t < lifted.t < placed.t < clock.t
    requests = [m for m in board.written() if m.type == P.REQUEST_SNAPSHOT]
    assert len(requests) == 1


def test_buttons_become_core_events() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    pump(link, 5)
    for code, side in ((P.PROMOTE_N, P.NO_SIDE), (P.DRAW_OFFER, P.WHITE),
                       (P.DRAW_ACCEPT, P.BLACK), (P.CLAIM, P.WHITE), (P.RESIGN, P.BLACK),
                       (P.ARBITER, P.NO_SIDE), (P.TAKEBACK, P.NO_SIDE),
                       (P.HINT, P.NO_SIDE)):
        board.hal.set_key(code, side, True)
    events = pump(link, 10)
    t = events[0].t
    assert sorted(events, key=repr) == sorted([
        ev.PromotionChosen(t, chess.KNIGHT), ev.DrawOffered(t, chess.WHITE),
        ev.DrawAccepted(t, chess.BLACK), ev.DrawClaimed(t, chess.WHITE),
        ev.Resigned(t, chess.BLACK), ev.TakebackAsked(t), ev.HintAsked(t)], key=repr)
    assert link.stats.arbiter == 1


@pytest.mark.parametrize("error", [
    serial.SerialException("device reports readiness to read but returned no data"),
    OSError(5, "Input/output error"),
    termios.error(5, "Input/output error"),
], ids=["SerialException", "OSError", "termios.error"])
def test_yanked_cable_reconnects_with_backoff_and_a_snapshot(error: BaseException) -> None:
    board = FirmwareBoard()
    link, clock = make_link(board, backoff=(0.05, 0.4))
    frame = LedFrame(0.0, (SquareLight(chess.E4, Colour.GREEN),), StatusLights(True))
    link.open()
    assert link.send_leds(frame)
    pump(link, 5)
    board.fail = error
    board.unplugged = 5  # the device node is gone for five attempts
    assert pump(link, 1) == []
    assert not link.connected and link.stats.disconnects == 1
    board.hal.set_square(chess.E2, False)  # moved while the cable was out:
    board.fw.run(steps=5)  # the board saw it, and told no one
    board.fail = None
    events = link.read_events(5.0)  # waits out the backoff (on the manual clock)
    events += pump(link, 12)
    assert link.connected and link.stats.connects == 2
    assert clock.sleeps[:5] == pytest.approx([0.05, 0.1, 0.2, 0.4, 0.4], abs=0.01)
    assert events[0] == ev.Snapshot(events[0].t, START & ~chess.BB_E2)
    assert events[0].t >= 0
    # the LED frame is shown again (the board may have rebooted dark)
    leds = [m for m in board.written() if m.type == P.LEDS]
    assert len(leds) == 2 and leds[0].cells == leds[1].cells
    assert board.hal.strip.shown[chess.E4] != (0, 0, 0)


def test_lost_frame_asks_for_a_snapshot() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    pump(link, 5)
    dropping = {"on": True}

    def lose_square_frames(data: bytes) -> bytes:
        # the first SQUARE frame vanishes on the way
        for msg in P.Decoder().feed(data):
            if msg.type == P.SQUARE and dropping["on"]:
                dropping["on"] = False
                return data.replace(msg.encode(), b"")
        return data

    board.mangle = lose_square_frames
    board.hal.set_square(chess.E2, False)
    pump(link, 5)
    board.hal.set_square(chess.D2, False)
    events = pump(link, 10)
    assert link.stats.gaps == 1 and link.stats.missed == 1
    lifted, snap = events
    assert isinstance(lifted, ev.Lifted) and isinstance(snap, ev.Snapshot)
    assert snap.occupied == START & ~chess.BB_E2 & ~chess.BB_D2
    assert sum(m.type == P.REQUEST_SNAPSHOT for m in board.written()) == 2


def test_heartbeat_is_swallowed_unless_it_tells_something() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    assert len(pump(link, 250)) == 1  # two heartbeats, both agreeing: only the connect one
    link._occupied = START & ~chess.BB_A1  # pretend an event went missing undetected
    events = pump(link, 110)
    assert events == [ev.Snapshot(events[0].t, START)] and link.stats.healed == 1


def test_garbage_from_the_board_is_dropped() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    pump(link, 5)
    board.mangle = lambda data: (b"Traceback (most recent call last):\r\n" + data
                                 if data else data)
    board.hal.set_square(chess.G1, False)
    events = pump(link, 10)
    assert events == [ev.Lifted(events[0].t, chess.G1)]
    assert link.stats.dropped >= 1 and link.stats.gaps == 0


def test_version_mismatch_is_a_clear_error_not_retried() -> None:
    board = FirmwareBoard(ack_version=2)
    link, _ = make_link(board)
    with pytest.raises(ProtocolVersionError, match=r"speaks protocol 2 .* this host speaks 1"):
        link.open()
    assert board.opens == 1


def test_no_board_gives_up_at_the_deadline() -> None:
    board = FirmwareBoard()
    board.unplugged = 1000
    link, clock = make_link(board, backoff=(0.1, 1.0))
    with pytest.raises(BoardLinkError, match="no board answered"):
        link.open(timeout=5.0)
    assert 4.9 < sum(clock.sleeps) < 5.1 and max(clock.sleeps) <= 1.0


def test_ping_from_the_board_is_answered() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    pump(link, 2)
    board.fw.send(P.PING, 42)
    pump(link, 2)
    assert [m.token for m in board.written() if m.type == P.PONG] == [42]


def test_led_frames_round_trip_through_the_wire_form() -> None:
    frame = LedFrame(
        1.5,
        (SquareLight(chess.E1, Colour.WHITE), SquareLight(chess.H8, Colour.ORANGE, Blink.FAST)),
        StatusLights(white_to_move=False, black_to_move=True, alert=Blink.SLOW, game_over=True),
        Buzzer.ALARM)
    cells, status, buzzer = leds_to_wire(frame)
    assert cells[chess.H8] == P.cell(6, 2) and buzzer == 2
    assert wire_to_leds(1.5, cells, status, buzzer) == frame


@pytest.mark.parametrize("remote, promotion", [
    (Remote.NONE, None), (Remote.THINKING, None), (Remote.SHOWN, None), (Remote.HINT, None),
    *((Remote.SHOWN, piece) for piece in (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)),
])
def test_the_computer_opponents_status_round_trips(remote: Remote,
                                                   promotion: chess.PieceType | None) -> None:
    frame = LedFrame(2.0, (SquareLight(chess.E7, Colour.BLUE),),
                     StatusLights(True, False, None, False, remote, promotion))
    cells, status, buzzer = leds_to_wire(frame)
    assert P.unpack_remote(status) in range(8)
    assert wire_to_leds(2.0, cells, status, buzzer) == frame


def test_serve_interleaves_ticks_on_the_events_timeline() -> None:
    board = FirmwareBoard()
    link, _ = make_link(board)
    link.open()
    got: list[ev.Event] = []
    stop = threading.Event()

    def put(event: ev.Event) -> None:
        got.append(event)
        if len(got) == 20:
            board.hal.set_square(chess.B1, False)  # a move, between ticks
        if len(got) >= 40:
            stop.set()

    link.serve(put, stop, poll=0.0)
    kinds = [type(e).__name__ for e in got]
    assert kinds[0] == "Snapshot" and "Lifted" in kinds and kinds.count("Tick") >= 35
    times = [e.t for e in got]
    assert times == sorted(times)  # one monotonic timeline for events and ticks
