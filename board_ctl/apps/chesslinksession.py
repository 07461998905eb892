"""What a ChessLink board answers, and reports on its own. Pure.

Commands: `V` version, `S` status, `L` the 81 corner LEDs, `X` all LEDs off, `T` reset
(no reply), `W`/`R` the E2ROM registers, and `I` (undocumented: the answer a Centaur
emulator gives the chess.com app). Register 00 bit 0 turns the block check off, 01 is
the scan time (units of 2.048 ms, 15-255, else 20), 02 the automatic reports (b2..b0:
000 on every scan, 001 none, 010 every register 03 x 4.096 ms, 011-111 on every change;
the change debounce they ask for is the referee's own), 04 the LED brightness (kept, not
applied).
"""

from __future__ import annotations

import chess

from board_ctl.apps import chesslink
from board_ctl.apps.session import Lights, Output, RequestSession
from board_ctl.apps.snapshot import Snapshot

VERSION = "3130"  # what a Centaur emulator known to work with the chess.com app answers
IDENTITY = "0055mm\n"  # its answer to `I`
DEFAULT_REGISTERS = {0x00: 0x00, 0x01: 20, 0x02: 0x00, 0x03: 0x00, 0x04: 0x0F}
EVERY_SCAN, NONE, TIMED = 0, 1, 2


class ChessLinkSession(RequestSession[chesslink.Request]):
    name = "chesslink"
    reader: chesslink.RequestReader

    def __init__(self, parity_bit: bool = True) -> None:
        self.parity_bit = parity_bit
        self.reader = chesslink.RequestReader()
        self.registers = bytearray(256)
        self.answered = 0
        self._reported_at = -1e9
        self._defaults()

    @property
    def ignored(self) -> int:
        return self.reader.ignored

    def _defaults(self) -> None:
        self.registers[:] = bytes(256)
        for address, value in DEFAULT_REGISTERS.items():
            self.registers[address] = value
        self.reader.block_check = True

    def reset(self) -> None:
        """A new connection: as a board just switched on (its registers kept, as E2ROM)."""
        self.reader = chesslink.RequestReader()
        self.reader.block_check = not self.registers[0] & 1

    def _send(self, text: str) -> bytes:
        return chesslink.encode(text, check=not self.registers[0] & 1,
                                parity_bit=self.parity_bit)

    # ------------------------------------------------------------------ requests

    def _answer(self, request: chesslink.Request, now: float, board: Snapshot,
                out: Output) -> None:
        letter, fields = request.letter, request.fields
        self.answered += 1
        if letter == "V":
            out.data += self._send("v" + VERSION)
        elif letter == "S":
            out.data += self._status(board)
        elif letter == "L":
            leds = chesslink.corner_leds(fields)
            lit = chesslink.lit_squares(leds)
            blink = any(value not in (0x00, 0xFF) for value in leds)
            self._light(lit, blink, out)
            out.data += self._send("l")
        elif letter == "X":
            self._light(frozenset(), False, out)
            out.data += self._send("x")
        elif letter == "T":
            self._defaults()
            self._light(frozenset(), False, out)
        elif letter == "W":
            address, value = int(fields[:2], 16), int(fields[2:4], 16)
            self.registers[address] = value
            self.reader.block_check = not self.registers[0] & 1
            out.data += self._send("w" + fields[:4])
        elif letter == "R":
            address = int(fields[:2], 16)
            out.data += self._send(f"r{fields[:2]}{self.registers[address]:02X}")
        elif letter == "I":
            out.data += self._send("i" + IDENTITY)

    @staticmethod
    def _light(lit: frozenset[chess.Square], blink: bool, out: Output) -> None:
        out.lights = Lights(lit, blink)

    def _status(self, board: Snapshot) -> bytes:
        return self._send(chesslink.status_text(dict(board.pieces)))

    # ------------------------------------------------------------------ reports

    @property
    def report_mode(self) -> int:
        return self.registers[2] & 0x07

    def report_every(self) -> float | None:
        """Seconds between the periodic reports (None: reports only on change, or none)."""
        if self.report_mode == EVERY_SCAN:
            scan = self.registers[1] if self.registers[1] >= 15 else 20
            return scan * 0.002048
        if self.report_mode == TIMED:
            return max(self.registers[3], 1) * 0.004096
        return None

    def changed(self, changes: tuple[tuple[chess.Square, chess.Piece | None], ...],
                board: Snapshot, now: float) -> bytes:
        """The status on a change, unless reports are off (or only timed)."""
        if not changes or self.report_mode in (NONE, TIMED):
            return b""
        self._reported_at = now
        return self._status(board)

    def resync(self, board: Snapshot, now: float) -> bytes:
        """After output was lost (an app that stopped reading): the status again."""
        if self.report_mode == NONE:
            return b""
        self._reported_at = now
        return self._status(board)

    def due(self, now: float, board: Snapshot) -> float | None:
        every = self.report_every()
        return None if every is None else self._reported_at + every

    def tick(self, now: float, board: Snapshot) -> bytes:
        every = self.report_every()
        if every is None or now - self._reported_at < every:
            return b""
        self._reported_at = now
        return self._status(board)
