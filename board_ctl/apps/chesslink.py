"""Millennium ChessLink, as a pure codec: request bytes in, requests out; replies out.

From "ChessLink: Magic Chessboard Communications Protocol" (Millennium, 2017, published
in python-mchess): 38400 baud, 7 data bits, odd parity, printable ASCII. Every message
ends with its block check, the XOR of all its characters, as two upper-case hex digits;
a reply is its command's letter in lower case. The top bit of each byte received is the
line's parity bit and is ignored; each byte sent carries odd parity in it (what a 7O1 line
reads as at 8 bits, and what hosts that read the port 8N1 and strip the bit expect).

A character that starts no command is skipped and counted; a command whose characters
are not hex digits, whose block check is wrong, or that stops arriving for
`TRUNCATED_AFTER` seconds is dropped and counted (the board does not act on it, as the
protocol says), and reading goes on from the character after its letter.
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from board_ctl.apps.requestreader import TRUNCATED_AFTER, TimedRequestReader

# Hex digits after each command's letter (before the block check).
FIELDS = {"V": 0, "S": 0, "X": 0, "T": 0, "I": 2, "W": 4, "R": 2, "L": 2 + 81 * 2}
HEX = frozenset("0123456789ABCDEFabcdef")


def block_check(text: str) -> str:
    value = 0
    for char in text:
        value ^= ord(char)
    return f"{value:02X}"


def odd_parity(code: int) -> int:
    """The 7-bit code with the top bit set when that makes the count of ones odd."""
    code &= 0x7F
    return code | (0x80 if bin(code).count("1") % 2 == 0 else 0)


def encode(text: str, check: bool = True, parity_bit: bool = True) -> bytes:
    message = text + (block_check(text) if check else "")
    return bytes(odd_parity(ord(c)) if parity_bit else ord(c) & 0x7F for c in message)


@dataclass(frozen=True, slots=True)
class Request:
    letter: str
    fields: str = ""  # the hex digits after the letter


class RequestReader(TimedRequestReader[Request]):
    def __init__(self) -> None:
        super().__init__()
        self.block_check = True  # register 00 bit 0 turns it off
        self._buf = ""

    def _unread(self) -> int:
        return len(self._buf)

    def _append(self, data: bytes) -> None:
        self._buf += "".join(chr(b & 0x7F) for b in data)

    def _parse(self, now: float) -> list[Request]:
        out: list[Request] = []
        buf = self._buf
        while buf:
            letter = buf[0]
            fields = FIELDS.get(letter)
            if fields is None:
                self.unknown += 1
                buf = buf[1:]
                continue
            length = 1 + fields + (2 if self.block_check else 0)
            body = buf[1:length]
            if any(c not in HEX for c in body):
                self.malformed += 1
                buf = buf[1:]
                continue
            if len(buf) < length:
                if not self.stale(now):
                    break
                self.malformed += 1
                buf = buf[1:]
                continue
            text = buf[:1 + fields]
            if self.block_check and buf[1 + fields:length].upper() != block_check(text):
                self.malformed += 1
                buf = buf[1:]
                continue
            out.append(Request(letter, text[1:].upper()))
            buf = buf[length:]
            if letter == "W" and text[1:3] == "00":  # the block check's own register
                self.block_check = not int(text[3:5], 16) & 1
        self._buf = buf
        return out


_SYMBOLS = {chess.PAWN: "P", chess.KNIGHT: "N", chess.BISHOP: "B", chess.ROOK: "R",
            chess.QUEEN: "Q", chess.KING: "K"}


def status_text(pieces: dict[chess.Square, chess.Piece]) -> str:
    """`s` and the 64 piece codes, a8..h8, a7..h7, ..., a1..h1."""
    chars = []
    for rank in range(7, -1, -1):
        for file in range(8):
            piece = pieces.get(chess.square(file, rank))
            if piece is None:
                chars.append(".")
            else:
                symbol = _SYMBOLS[piece.piece_type]
                chars.append(symbol if piece.color == chess.WHITE else symbol.lower())
    return "s" + "".join(chars)


def corner_leds(fields: str) -> list[int]:
    """The 81 LED pattern bytes of an `L` command's fields (after its slot time)."""
    return [int(fields[2 + i * 2:4 + i * 2], 16) for i in range(81)]


def led_index(column: int, row: int) -> int:
    """LED 1 (index 0) is the a8 corner, 9 the a1 corner, 73 the h8 corner, 81 the h1
    corner: columns of nine from the a side, rows from the 8th rank's edge."""
    return column * 9 + row


def square_corners(square: chess.Square) -> tuple[int, int, int, int]:
    file, top = chess.square_file(square), 7 - chess.square_rank(square)
    return (led_index(file, top), led_index(file, top + 1), led_index(file + 1, top),
            led_index(file + 1, top + 1))


def lit_squares(leds: list[int]) -> frozenset[chess.Square]:
    """The squares an LED pattern means. LEDs sit on the squares' corners, so lighting
    e2 and e4 also lights all four corners of e3: a square counts when all its corners
    are lit and it is needed (one of its corners is lit for no other such square), plus
    any whose corners the needed ones do not all cover."""
    candidates = [sq for sq in chess.SQUARES if all(leds[i] for i in square_corners(sq))]
    cover: dict[int, int] = {}
    for square in candidates:
        for index in square_corners(square):
            cover[index] = cover.get(index, 0) + 1
    needed = {sq for sq in candidates if any(cover[i] == 1 for i in square_corners(sq))}
    covered = {i for sq in needed for i in square_corners(sq)}
    needed |= {sq for sq in candidates if not set(square_corners(sq)) <= covered}
    return frozenset(needed)
