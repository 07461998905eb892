"""The DGT e-board serial protocol, as a pure codec: request bytes in, requests out;
message fields in, message bytes out.

An independent implementation, for interoperability, from the protocol's public
description (DGT's `dgtbrd.h`, which carries DGT's own terms of use, and what the open
hosts picochess and python-asyncdgt send and expect). 9600 baud, 8N1.

Host to board: single-byte commands, and three with a body: a clock message
``2b SIZE 03 CMD ... 00``, the Revelation II / Pegasus LED command ``60 SIZE ... 00`` and
the Pegasus app's developer key ``63 SIZE ... 00`` (SIZE counts the bytes after it). A
byte that starts no request is skipped and counted; a body whose shape is wrong, or that
stops arriving for `TRUNCATED_AFTER` seconds, is dropped and counted, and reading goes on
from the byte after its command, so a request cut short never holds back the ones after
it.

Board to host: ``ID|0x80``, the total length (header included) in two 7-bit bytes, then
data bytes whose top bit is always clear.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from board_ctl.apps.requestreader import TRUNCATED_AFTER, TimedRequestReader

# ---------------------------------------------------------------- host to board

SEND_RESET = 0x40
SEND_CLK = 0x41
SEND_BRD = 0x42
SEND_UPDATE = 0x43
SEND_UPDATE_BRD = 0x44
RETURN_SERIALNR = 0x45
RETURN_BUSADRES = 0x46
SEND_TRADEMARK = 0x47
SEND_EE_MOVES = 0x49
TO_BUSMODE = 0x4A
SEND_UPDATE_NICE = 0x4B
SEND_BATTERY_STATUS = 0x4C
SEND_VERSION = 0x4D
START_BOOTLOADER = 0x4E
RETURN_LONG_SERIALNR = 0x55
PEGASUS_BATTERY = 0x32  # what the Pegasus app sends for the battery status
SINGLE_BYTE = frozenset({SEND_RESET, SEND_CLK, SEND_BRD, SEND_UPDATE, SEND_UPDATE_BRD,
                         RETURN_SERIALNR, RETURN_BUSADRES, SEND_TRADEMARK, SEND_EE_MOVES,
                         TO_BUSMODE, SEND_UPDATE_NICE, SEND_BATTERY_STATUS, SEND_VERSION,
                         START_BOOTLOADER, 0x50, 0x51, 0x52, 0x53, 0x54,
                         RETURN_LONG_SERIALNR, PEGASUS_BATTERY})

CLOCK_MESSAGE = 0x2B
SET_LEDS = 0x60
DEVELOPER_KEY = 0x63
# The largest SIZE each command with a body may have (a Pegasus LED command lists fields).
BODY_LIMIT = {CLOCK_MESSAGE: 16, SET_LEDS: 72, DEVELOPER_KEY: 32}

# Clock commands (inside a clock message), and its start and end bytes.
CLOCK_START, CLOCK_END_MESSAGE = 0x03, 0x00
CLOCK_DISPLAY = 0x01
CLOCK_ICONS = 0x02
CLOCK_END = 0x03
CLOCK_BUTTON = 0x08
CLOCK_VERSION = 0x09
CLOCK_SETNRUN = 0x0A
CLOCK_BEEP = 0x0B
CLOCK_ASCII = 0x0C
CLOCK_REV2_ASCII = 0x0D



@dataclass(frozen=True, slots=True)
class Request:
    command: int
    body: bytes = b""  # for a command with a body: the bytes after SIZE (its end byte too)


class RequestReader(TimedRequestReader[Request]):
    """Bytes from the host to requests, resynchronising after garbage."""

    def __init__(self) -> None:
        super().__init__()
        self._buf = bytearray()

    def _unread(self) -> int:
        return len(self._buf)

    def _append(self, data: bytes) -> None:
        self._buf += data

    def _parse(self, now: float) -> list[Request]:
        out: list[Request] = []
        buf = self._buf
        while buf:
            command = buf[0]
            if command in SINGLE_BYTE:
                out.append(Request(command))
                del buf[0]
                continue
            limit = BODY_LIMIT.get(command)
            if limit is None:
                self.unknown += 1
                del buf[0]
                continue
            shape = _body_shape(command, bytes(buf[1:]), limit)
            if shape is None:  # wrong: drop its command byte and read on
                self.malformed += 1
                del buf[0]
                continue
            if shape > len(buf):  # incomplete: wait, unless it stopped arriving
                if not self.stale(now):
                    break
                self.malformed += 1
                del buf[0]
                continue
            out.append(Request(command, bytes(buf[2:shape])))
            del buf[:shape]
        return out


def _body_shape(command: int, rest: bytes, limit: int) -> int | None:
    """The whole request's length if what has arrived of it has the right shape (the
    length may exceed what arrived), None if it cannot be a request."""
    if not rest:
        return 2  # SIZE not yet here: at least this long
    size = rest[0]
    if not 1 <= size <= limit:
        return None
    total = 2 + size
    body = rest[1:size + 1]
    if command == CLOCK_MESSAGE:
        if size < 3 or (body and body[0] != CLOCK_START):
            return None
    if len(body) == size and body[-1] != 0x00:  # every body ends with 0x00
        return None
    return total


# ---------------------------------------------------------------- board to host

MSG_BOARD_DUMP = 0x86
MSG_BWTIME = 0x8D
MSG_FIELD_UPDATE = 0x8E
MSG_EE_MOVES = 0x8F
MSG_BUSADRES = 0x90
MSG_SERIALNR = 0x91
MSG_TRADEMARK = 0x92
MSG_VERSION = 0x93
MSG_BATTERY_STATUS = 0xA0
MSG_LONG_SERIALNR = 0xA2
EE_EOF = 0x6B

_CODE = {chess.PAWN: 1, chess.ROOK: 2, chess.KNIGHT: 3, chess.BISHOP: 4, chess.KING: 5,
         chess.QUEEN: 6}


def piece_code(piece: chess.Piece | None) -> int:
    """0 empty; 1-6 white P R N B K Q; 7-12 black."""
    if piece is None:
        return 0
    return _CODE[piece.piece_type] + (0 if piece.color == chess.WHITE else 6)


def field_of(square: chess.Square) -> int:
    """DGT field numbering: 0 = a8, 7 = h8, 56 = a1, 63 = h1 (the board never rotates it)."""
    return (7 - chess.square_rank(square)) * 8 + chess.square_file(square)


def square_of(field: int) -> chess.Square:
    return chess.square(field % 8, 7 - field // 8)


def message(msg_id: int, data: bytes | list[int] = b"") -> bytes:
    body = bytes(data)
    if any(b & 0x80 for b in body):
        raise ValueError("a DGT message's data bytes have their top bit clear")
    total = 3 + len(body)
    return bytes([msg_id, (total >> 7) & 0x7F, total & 0x7F]) + body


def board_dump(pieces: dict[chess.Square, chess.Piece]) -> bytes:
    codes = [0] * 64
    for square, piece in pieces.items():
        codes[field_of(square)] = piece_code(piece)
    return message(MSG_BOARD_DUMP, codes)


def field_update(square: chess.Square, piece: chess.Piece | None) -> bytes:
    return message(MSG_FIELD_UPDATE, [field_of(square), piece_code(piece)])


def _hms(seconds: float) -> tuple[int, int, int]:
    whole = max(0, min(int(seconds), 9 * 3600 + 59 * 60 + 59))  # one hours digit
    return whole // 3600, whole // 60 % 60, whole % 60


def _bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


@dataclass(frozen=True, slots=True)
class ClockTimes:
    """A BWTIME clock reading. Left and right as the clock stands (seen from the front)."""

    left: float  # seconds
    right: float
    running: bool  # a side's time is running
    right_high: bool  # the lever: the right side up (the right player's time runs)
    right_turn: bool
    left_turn: bool
    connected: bool = True  # False: no clock (a reading of zeros, marked invalid)


def bwtime(times: ClockTimes) -> bytes:
    def side(seconds: float) -> list[int]:
        hours, minutes, secs = _hms(seconds)
        flag = 0x50 if seconds <= 0 else 0  # D4 fallen and blocked, D6 shown
        return [hours | flag, _bcd(minutes), _bcd(secs)]

    if not times.connected:
        return message(MSG_BWTIME, [0, 0, 0, 0, 0, 0, 0x20])
    status = (0x01 if times.running else 0) | (0x02 if times.right_high else 0) | \
        (0x08 if times.right_turn else 0) | (0x10 if times.left_turn else 0)
    return message(MSG_BWTIME, side(times.right) + side(times.left) + [status])


def clock_ack(command: int, extra: int = 0) -> bytes:
    """A clock ack in a BWTIME message: ack0 0x10 (OK), ack1 the command acked, ack2
    `extra` (a clock version), ack3 0. The two low nibbles of 0x0a mark it an ack."""
    ack0, ack1, ack2, ack3 = 0x10, command, extra, 0x00
    byte3 = 0x0A | ((ack2 >> 3) & 0x10) | ((ack3 >> 2) & 0x20)
    byte6 = 0x0A | ((ack0 >> 3) & 0x10) | ((ack1 >> 2) & 0x20)
    return message(MSG_BWTIME, [byte3, ack0 & 0x7F, ack1 & 0x7F, byte6, ack2 & 0x7F,
                                ack3 & 0x7F, 0x00])


def ascii_message(msg_id: int, text: str) -> bytes:
    data = text.encode("ascii", "replace")
    return message(msg_id, bytes(b & 0x7F for b in data))


def busadres(serial5: str) -> bytes:
    value = int(serial5) & 0x3FFF
    return message(MSG_BUSADRES, [value >> 7, value & 0x7F])


def version(major: int, minor: int) -> bytes:
    return message(MSG_VERSION, [major & 0x7F, minor & 0x7F])


def battery_status() -> bytes:
    """Mains powered: 100 %, no running or charging time, not charging."""
    return message(MSG_BATTERY_STATUS, [100, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0])


def ee_moves() -> bytes:
    """The board keeps no EEPROM record (the service's journal does): empty."""
    return message(MSG_EE_MOVES, [EE_EOF])


# ---------------------------------------------------------------- clock commands shown

# The 7-segment characters a DGT XL's display command may hold (bits: 0x01 top, 0x02 right
# top, 0x04 right bottom, 0x08 bottom, 0x10 left bottom, 0x20 left top, 0x40 centre).
_SEGMENTS = {0x3F: "0", 0x06: "1", 0x5B: "2", 0x4F: "3", 0x66: "4", 0x6D: "5", 0x7D: "6",
             0x07: "7", 0x7F: "8", 0x6F: "9", 0x77: "A", 0x7C: "b", 0x39: "C", 0x5E: "d",
             0x79: "E", 0x71: "F", 0x76: "H", 0x38: "L", 0x54: "n", 0x5C: "o", 0x73: "P",
             0x50: "r", 0x78: "t", 0x3E: "U", 0x1C: "u", 0x6E: "y", 0x40: "-", 0x00: " ",
             0x08: "_", 0x3D: "G", 0x0E: "J", 0x74: "h"}


def printable(data: bytes) -> str:
    """ASCII text as sent (apps centre it with spaces: those are trimmed)."""
    return "".join(chr(b) if 0x20 <= b < 0x7F else "?" for b in data).strip()


def describe_clock_command(body: bytes) -> tuple[int, str]:
    """(the clock command, what it asks the clock to show or do, for the terminal view)."""
    command = body[1] if len(body) > 1 else -1
    content = body[2:-1]
    if command == CLOCK_DISPLAY and len(content) >= 6:
        c, b, a, f, e, d = content[:6]
        chars = "".join(_SEGMENTS.get(x & 0x7F, "?") for x in (a, b, c, d, e, f))
        return command, f"display {chars[:3]!r} {chars[3:]!r}"
    if command in (CLOCK_ASCII, CLOCK_REV2_ASCII):
        text = content[:8] if command == CLOCK_ASCII else content[:11]
        return command, f"display {printable(text)!r}"
    if command == CLOCK_SETNRUN and len(content) >= 7:
        lh, lm, ls, rh, rm, rs, flags = content[:7]
        run = ("left runs" if flags & 0x01 else "right runs" if flags & 0x02
               else "paused" if flags & 0x04 else "stopped")
        return command, (f"set left {lh & 0x0F}:{lm:02d}:{ls:02d}, right "
                         f"{rh & 0x0F}:{rm:02d}:{rs:02d}, {run}")
    if command == CLOCK_BEEP and content:
        return command, f"beep {content[0] * 64} ms"
    if command == CLOCK_END:
        return command, "display the times again"
    if command == CLOCK_ICONS:
        return command, "icons"
    if command in (CLOCK_VERSION, CLOCK_BUTTON):
        return command, ""
    return command, f"command {command:#04x}"
