"""A DGT board host (what a chess program does with a DGT board), for the tests.

Written from the protocol's public description (DGT's `dgtbrd.h` header as copied in
picochess, summarised in the project's reference notes §2.1), not from board_ctl's
implementation: the port is opened 9600 8N1; commands are single bytes (0x40 reset,
0x41 clock, 0x42 board dump, 0x43/0x44/0x4b the update modes, 0x45 serial number, 0x46
bus address, 0x47 trademark, 0x49 EEPROM, 0x4c battery, 0x4d version, 0x55 long serial
number), clock messages ``2b SIZE 03 CMD ... 00`` and the LED command ``60 SIZE ... 00``.
Every message from the board has a 3-byte header, ``ID|0x80``, then the total length
(header included) in two 7-bit bytes; data bytes never have their top bit set, which is
how a reader finds the next message after garbage. Field 0 is a8, 7 h8, 56 a1, 63 h1.

The client keeps the board as a host does (a dump replaces it, a field update changes
one square) and records every board it held, with the time it got it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
import serial

# Commands, host to board.
RESET, CLOCK, BOARD, UPDATE, UPDATE_BOARD = 0x40, 0x41, 0x42, 0x43, 0x44
SERIALNR, BUSADRES, TRADEMARK, EE_MOVES = 0x45, 0x46, 0x47, 0x49
UPDATE_NICE, BATTERY, VERSION, LONG_SERIALNR = 0x4B, 0x4C, 0x4D, 0x55
CLOCK_MESSAGE, SET_LEDS = 0x2B, 0x60
# Clock commands inside a clock message.
CLOCK_DISPLAY, CLOCK_END, CLOCK_VERSION, CLOCK_SETNRUN, CLOCK_BEEP, CLOCK_ASCII = (
    0x01, 0x03, 0x09, 0x0A, 0x0B, 0x0C)

# Messages, board to host (the id without its top bit), with their total length.
MSG_BOARD_DUMP, MSG_BWTIME, MSG_FIELD_UPDATE, MSG_EE_MOVES = 0x06, 0x0D, 0x0E, 0x0F
MSG_BUSADRES, MSG_SERIALNR, MSG_TRADEMARK, MSG_VERSION = 0x10, 0x11, 0x12, 0x13
MSG_BATTERY, MSG_LONG_SERIALNR = 0x20, 0x22
FIXED_LENGTH = {MSG_BOARD_DUMP: 67, MSG_BWTIME: 10, MSG_FIELD_UPDATE: 5, MSG_BUSADRES: 5,
                MSG_SERIALNR: 8, MSG_VERSION: 5, MSG_LONG_SERIALNR: 13}

# Piece codes: 0 empty, 1-6 white P R N B K Q, 7-12 black p r n b k q.
CODE_SYMBOLS = ".PRNBKQprnbkq"


def field_of(square: chess.Square) -> int:
    """The DGT field number of a square: 0 = a8 ... 63 = h1."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


def placement(codes: tuple[int, ...]) -> str:
    """A FEN piece placement from 64 piece codes in field order ('?' for a code that is
    no piece, so a wrong code never compares equal to a real position)."""
    rows = []
    for rank in range(8):
        row, empty = "", 0
        for code in codes[rank * 8:rank * 8 + 8]:
            if code == 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += CODE_SYMBOLS[code] if 0 < code < len(CODE_SYMBOLS) else "?"
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def codes_of(board_fen: str) -> tuple[int, ...]:
    """The 64 piece codes of a FEN piece placement."""
    board = chess.Board(f"{board_fen} w - - 0 1")
    out = [0] * 64
    for square, piece in board.piece_map().items():
        out[field_of(square)] = CODE_SYMBOLS.index(piece.symbol())
    return tuple(out)


def bcd(value: int) -> int:
    return (value >> 4) * 10 + (value & 0x0F)


@dataclass
class ClockReading:
    left: int  # seconds
    right: int
    status: int  # byte 9

    @property
    def running(self) -> bool:
        return bool(self.status & 0x01)

    @property
    def connected(self) -> bool:
        return not self.status & 0x20


@dataclass
class DgtClient:
    """A host on a DGT board's serial port."""

    path: str
    port: serial.Serial = field(init=False)
    codes: list[int] = field(default_factory=lambda: [0] * 64)
    have_board: bool = False
    boards: list[tuple[float, str]] = field(default_factory=list)  # (time, placement)
    messages: list[tuple[int, bytes]] = field(default_factory=list)  # (id, data)
    clocks: list[ClockReading] = field(default_factory=list)
    acks: list[tuple[int, int, int, int]] = field(default_factory=list)
    skipped: int = 0  # bytes that were no part of a message
    _buf: bytes = b""

    def __post_init__(self) -> None:
        if not self.path:  # no port: bytes are given to feed() (codec tests)
            return
        self.port = serial.Serial(self.path, 9600, bytesize=serial.EIGHTBITS,
                                  parity=serial.PARITY_NONE, stopbits=serial.STOPBITS_ONE,
                                  timeout=0)

    def close(self) -> None:
        self.port.close()

    def send(self, *data: int | bytes) -> None:
        out = b"".join(bytes([d]) if isinstance(d, int) else d for d in data)
        self.port.write(out)
        self.port.flush()

    def clock_message(self, command: int, *content: int) -> None:
        body = bytes([0x03, command, *content, 0x00])
        self.send(CLOCK_MESSAGE, len(body), body)

    # ------------------------------------------------------------------ reading

    def pump(self, timeout: float = 0.05) -> None:
        """Read what the board sent within `timeout`, handling each whole message."""
        deadline = time.monotonic() + timeout
        while True:
            data = self.port.read(4096)
            if data:
                self._buf += data
                self._parse()
            elif time.monotonic() >= deadline:
                return
            else:
                time.sleep(0.002)

    def wait(self, check: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"DGT client: timed out waiting for {what or check}; "
                                     f"last messages {self.messages[-3:]}")
            self.pump(0.01)

    def request(self, command: int, reply: int, timeout: float = 5.0) -> bytes:
        """Send a one-byte command and wait for the reply's data."""
        seen = len(self.messages)
        self.send(command)
        self.wait(lambda: any(m == reply for m, _ in self.messages[seen:]), timeout,
                  what=f"reply {reply:#04x} to {command:#04x}")
        return next(d for m, d in self.messages[seen:] if m == reply)

    def board_dump(self) -> str:
        self.request(BOARD, MSG_BOARD_DUMP)
        return self.board_fen()

    def board_fen(self) -> str:
        return placement(tuple(self.codes))

    def feed(self, data: bytes) -> None:
        """Handle bytes as if read from the port."""
        self._buf += data
        self._parse()

    def _parse(self) -> None:
        buf = self._buf
        while buf:
            if not buf[0] & 0x80:  # not a message's start: skip to the next one
                buf = buf[1:]
                self.skipped += 1
                continue
            if len(buf) < 3:
                break
            if buf[1] & 0x80 or buf[2] & 0x80:  # a header's length never has the bit
                buf = buf[1:]
                self.skipped += 1
                continue
            msg_id, length = buf[0] & 0x7F, (buf[1] << 7) | buf[2]
            expected = FIXED_LENGTH.get(msg_id)
            if length < 3 or (expected is not None and length != expected):
                buf = buf[1:]
                self.skipped += 1
                continue
            data = buf[3:length]
            interrupted = next((i for i, b in enumerate(data) if b & 0x80), None)
            if interrupted is not None:  # a new message began: this one was cut short
                buf = buf[3 + interrupted:]
                self.skipped += 3 + interrupted
                continue
            if len(buf) < length:
                break
            buf = buf[length:]
            self._handle(msg_id, data)
        self._buf = buf

    def _handle(self, msg_id: int, data: bytes) -> None:
        self.messages.append((msg_id, data))
        now = time.monotonic()
        if msg_id == MSG_BOARD_DUMP:
            self.codes = list(data)
            self.have_board = True
            self.boards.append((now, self.board_fen()))
        elif msg_id == MSG_FIELD_UPDATE:
            square, code = data
            if square < 64:
                self.codes[square] = code
                self.boards.append((now, self.board_fen()))
        elif msg_id == MSG_BWTIME:
            if (data[0] & 0x0F) == 0x0A or (data[3] & 0x0F) == 0x0A:  # a clock ack
                ack0 = (data[1] & 0x7F) | ((data[3] << 3) & 0x80)
                ack1 = (data[2] & 0x7F) | ((data[3] << 2) & 0x80)
                ack2 = (data[4] & 0x7F) | ((data[0] << 3) & 0x80)
                ack3 = (data[5] & 0x7F) | ((data[0] << 2) & 0x80)
                self.acks.append((ack0, ack1, ack2, ack3))
            else:
                right = (data[0] & 0x0F) * 3600 + bcd(data[1]) * 60 + bcd(data[2])
                left = (data[3] & 0x0F) * 3600 + bcd(data[4]) * 60 + bcd(data[5])
                self.clocks.append(ClockReading(left, right, data[6]))
