"""A Millennium ChessLink host, for the tests.

Written from "ChessLink: Magic Chessboard Communications Protocol" (Dave Woodfield,
25/10/17, in domschl's python-mchess `mchess/magic-board.md`; the project's reference
notes §2.3), not from board_ctl's implementation: 38400 baud, 7 data bits, odd parity,
printable ASCII; every message, both ways, ends with the XOR of all its characters as
two upper-case hex digits; replies use the command's letter in lower case. As
python-mchess does on a USB port, the client sets each byte's odd-parity bit itself and
reads seven bits (an 8N1 reading of a 7O1 line). `s` carries 64 piece codes
(KQRNBP / kqrnbp, '.' empty) in the order a8..h8, a7..h7, ..., a1..h1.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import chess
import serial

REPLY_LENGTH = {"s": 67, "v": 7, "l": 3, "x": 3, "w": 7, "r": 7}


def check(text: str) -> str:
    """The block check of a message: XOR of its characters, two upper-case hex digits."""
    value = 0
    for char in text:
        value ^= ord(char)
    return f"{value:02X}"


def with_parity(char: str) -> int:
    """The character as a 7O1 line carries it: the top bit makes the count of ones odd."""
    code = ord(char) & 0x7F
    return code | (0x80 if bin(code).count("1") % 2 == 0 else 0)


def placement(squares: str) -> str:
    """A FEN piece placement from the 64 status characters ('?' for anything else)."""
    rows = []
    for rank in range(8):
        row, empty = "", 0
        for char in squares[rank * 8:rank * 8 + 8]:
            if char == ".":
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += char if char in "KQRNBPkqrnbp" else "?"
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def led_command(lit: dict[chess.Square, int], slot: int = 0x20) -> str:
    """An `L` command lighting the four corner LEDs of each square with its pattern
    byte. LED 1 is the a8 corner, 9 the a1 corner, 73 the h8 corner, 81 the h1 corner:
    LED index (from 0) = 9 * corner column (from the a side) + corner row (from the 8th
    rank's edge)."""
    leds = [0] * 81
    for square, pattern in lit.items():
        file, top = chess.square_file(square), 7 - chess.square_rank(square)
        for column in (file, file + 1):
            for row in (top, top + 1):
                leds[column * 9 + row] |= pattern
    return "L" + f"{slot:02X}" + "".join(f"{value:02X}" for value in leds)


@dataclass
class ChessLinkClient:
    path: str
    port: serial.Serial = field(init=False)
    replies: list[str] = field(default_factory=list)  # whole replies (check verified)
    statuses: list[tuple[float, str]] = field(default_factory=list)  # (time, placement)
    bad_parity: int = 0  # bytes whose parity bit was wrong
    bad_check: int = 0  # replies whose block check was wrong
    skipped: int = 0  # characters that began no reply
    _buf: str = ""

    def __post_init__(self) -> None:
        if not self.path:  # no port: bytes are given to feed() (codec tests)
            return
        self.port = serial.Serial(self.path, 38400, bytesize=serial.EIGHTBITS,
                                  parity=serial.PARITY_NONE, timeout=0)

    def close(self) -> None:
        self.port.close()

    def send(self, text: str, block_check: bool = True) -> None:
        message = text + (check(text) if block_check else "")
        self.port.write(bytes(with_parity(c) for c in message))
        self.port.flush()

    def pump(self, timeout: float = 0.05) -> None:
        deadline = time.monotonic() + timeout
        while True:
            data = self.port.read(4096)
            if data:
                self.feed(data)
            elif time.monotonic() >= deadline:
                return
            else:
                time.sleep(0.002)

    def wait(self, check_: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not check_():
            if time.monotonic() > deadline:
                raise AssertionError(f"ChessLink client: timed out waiting for "
                                     f"{what or check_}; last replies {self.replies[-3:]}")
            self.pump(0.01)

    def request(self, text: str, letter: str, timeout: float = 5.0) -> str:
        seen = len(self.replies)
        self.send(text)
        self.wait(lambda: any(r[0] == letter for r in self.replies[seen:]), timeout,
                  what=f"reply {letter!r} to {text[:3]!r}")
        return next(r for r in self.replies[seen:] if r[0] == letter)

    def status(self) -> str:
        reply = self.request("S", "s")
        return placement(reply[1:65])

    def board_fen(self) -> str:
        return self.statuses[-1][1] if self.statuses else ""

    def feed(self, data: bytes) -> None:
        """Handle bytes as if read from the port."""
        for byte in data:
            if bin(byte).count("1") % 2 == 0:
                self.bad_parity += 1
            self._buf += chr(byte & 0x7F)
        self._parse()

    def _parse(self) -> None:
        buf = self._buf
        while buf:
            length = REPLY_LENGTH.get(buf[0])
            if length is None:
                buf = buf[1:]
                self.skipped += 1
                continue
            if len(buf) < length:
                break
            reply = buf[:length]
            if reply[-2:] != check(reply[:-2]):
                self.bad_check += 1
                buf = buf[1:]
                continue
            buf = buf[length:]
            self.replies.append(reply[:-2])
            if reply[0] == "s":
                self.statuses.append((time.monotonic(), placement(reply[1:65])))
        self._buf = buf
