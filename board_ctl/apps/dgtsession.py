"""What a DGT board answers, and sends on its own: its update mode, identity, clock
readings, clock acks and field updates. Pure: requests and snapshots in, bytes and the
app's LED and clock wishes out; time comes in as arguments.

Modes (the header's names): IDLE after a reset (nothing sent unasked), UPDATE_BOARD
(field updates), UPDATE (field updates, and the clock at least every second) and
UPDATE_NICE (field updates, and the clock when its reading changes). A clock command is
acknowledged in UPDATE and UPDATE_NICE, as a board with a clock does; what it asks the
clock to show is handed to the service, which shows it on the terminal view (our clock is
the service's own: an app's SETNRUN does not set it).
"""

from __future__ import annotations

import chess

from board_ctl.apps import dgt
from board_ctl.apps.session import Lights, Output, RequestSession
from board_ctl.apps.snapshot import ClockState, Snapshot

IDLE, UPDATE_BOARD, UPDATE, UPDATE_NICE = "idle", "update board", "update", "update nice"
MODES = {dgt.SEND_RESET: IDLE, dgt.SEND_UPDATE_BRD: UPDATE_BOARD, dgt.SEND_UPDATE: UPDATE,
         dgt.SEND_UPDATE_NICE: UPDATE_NICE}
VERSION = (1, 7)  # the board's firmware version as reported
CLOCK_VERSION = 0x21  # the clock's (2.1: a clock that shows ASCII text)
CLOCK_EVERY = 1.0  # s: UPDATE mode's clock readings


class DgtSession(RequestSession[dgt.Request]):
    name = "dgt"
    reader: dgt.RequestReader

    def __init__(self, serialnr: str, white_left: bool = True) -> None:
        self.serialnr = serialnr  # ten digits
        self.white_left = white_left
        self.reader = dgt.RequestReader()
        self.mode = IDLE
        self.answered = 0
        self.unsupported = 0  # well-formed requests this board does not do (bus mode ...)
        self._lit: frozenset[chess.Square] = frozenset()
        self._last_clock: bytes | None = None  # the last reading sent
        self._clock_sent_at = -1e9

    @property
    def ignored(self) -> int:
        return self.reader.ignored + self.unsupported

    def reset(self) -> None:
        """A new connection (the port reopened): as a board just switched on."""
        self.reader = dgt.RequestReader()
        self.mode = IDLE
        self._last_clock = None

    # ------------------------------------------------------------------ requests

    def _answer(self, request: dgt.Request, now: float, board: Snapshot, out: Output) -> None:
        command = request.command
        self.answered += 1
        if command in MODES:
            self.mode = MODES[command]
            self._last_clock = None  # a new mode's first reading is sent
            return
        if command == dgt.SEND_BRD:
            out.data += dgt.board_dump(dict(board.pieces))
        elif command == dgt.SEND_CLK:
            out.data += self._reading(board.clock, now)
        elif command == dgt.RETURN_SERIALNR:
            out.data += dgt.ascii_message(dgt.MSG_SERIALNR, self.serialnr[-5:])
        elif command == dgt.RETURN_LONG_SERIALNR:
            out.data += dgt.ascii_message(dgt.MSG_LONG_SERIALNR, self.serialnr)
        elif command == dgt.RETURN_BUSADRES:
            out.data += dgt.busadres(self.serialnr[-5:])
        elif command == dgt.SEND_TRADEMARK:
            out.data += dgt.ascii_message(dgt.MSG_TRADEMARK, self.trademark())
        elif command == dgt.SEND_VERSION:
            out.data += dgt.version(*VERSION)
        elif command in (dgt.SEND_BATTERY_STATUS, dgt.PEGASUS_BATTERY):
            out.data += dgt.battery_status()
        elif command == dgt.SEND_EE_MOVES:
            out.data += dgt.ee_moves()
        elif command == dgt.CLOCK_MESSAGE:
            self._clock_command(request.body, out)
        elif command == dgt.SET_LEDS:
            self._leds(request.body, out)
        elif command == dgt.DEVELOPER_KEY:
            pass  # the Pegasus app registering itself: nothing to answer
        else:
            self.answered -= 1
            self.unsupported += 1

    def trademark(self) -> str:
        return (f"board_ctl sensor board: an independent implementation of this protocol "
                f"for interoperability. Serial nr. {self.serialnr[-5:]} {VERSION[0]}."
                f"{VERSION[1]}")

    def _clock_command(self, body: bytes, out: Output) -> None:
        command, text = dgt.describe_clock_command(body)
        if text:
            out.notes.append(f"clock {text}")
        if self.mode in (UPDATE, UPDATE_NICE):
            out.data += dgt.clock_ack(command, CLOCK_VERSION if command == dgt.CLOCK_VERSION
                                      else 0)

    def _leds(self, body: bytes, out: Output) -> None:
        """The Revelation II command (``pattern start end``: 1 lights both fields, 0 puts
        them out, 0 with start 0x40 puts all out) and the Pegasus one (mode 0: all out;
        mode 5: ``speed mode intensity field...``). Fields 0..63 as the board numbers them."""
        data = body[:-1]
        lit = self._lit
        if len(data) == 3 and data[0] in (0, 1, 2):  # Revelation II
            pattern, start, end = data
            fields = {dgt.square_of(f) for f in (start, end) if f < 64}
            if pattern == 1:
                lit = frozenset(fields)
            elif pattern == 0:
                lit = frozenset() if start == 0x40 else lit - fields
            else:
                return  # the board's own LED behaviour: nothing to change here
        elif data[:1] == b"\x00" or data[:3] == b"\x02\x00\x00":  # Pegasus: all off
            lit = frozenset()
        elif data[:1] == b"\x05" and len(data) >= 4:  # Pegasus: these fields
            lit = frozenset(dgt.square_of(f) for f in data[4:] if f < 64)
        else:
            self.answered -= 1
            self.unsupported += 1
            return
        if lit != self._lit:
            self._lit = lit
            out.lights = Lights(lit)

    # ------------------------------------------------------------------ on its own

    def changed(self, changes: tuple[tuple[chess.Square, chess.Piece | None], ...],
                board: Snapshot, now: float) -> bytes:
        """Field updates for what changed (in every update mode)."""
        if self.mode == IDLE:
            return b""
        return b"".join(dgt.field_update(square, piece) for square, piece in changes)

    def resync(self, board: Snapshot, now: float) -> bytes:
        """After output was lost (an app that stopped reading): the whole board again."""
        return dgt.board_dump(dict(board.pieces)) if self.mode != IDLE else b""

    def due(self, now: float, board: Snapshot) -> float | None:
        """When the clock is next sent on the board's own (None: not until the service
        publishes a change)."""
        if self.mode == UPDATE:
            return self._clock_sent_at + CLOCK_EVERY
        if self.mode == UPDATE_NICE:
            return board.clock.next_change(now) if self._last_clock is not None else now
        return None

    def tick(self, now: float, board: Snapshot) -> bytes:
        """The clock reading if the mode sends it now: UPDATE every second and when it
        changed, UPDATE_NICE when it changed."""
        if self.mode not in (UPDATE, UPDATE_NICE):
            return b""
        last, sent_at = self._last_clock, self._clock_sent_at
        reading = self._reading(board.clock, now)
        if reading != last or (self.mode == UPDATE and now - sent_at >= CLOCK_EVERY):
            return reading
        self._last_clock, self._clock_sent_at = last, sent_at  # not sent after all
        return b""

    def _reading(self, clock: ClockState, now: float) -> bytes:
        if not clock.present:
            reading = dgt.bwtime(dgt.ClockTimes(0, 0, False, False, False, False,
                                                connected=False))
        else:
            white, black = clock.remaining(now)
            left, right = (white, black) if self.white_left else (black, white)
            right_side = chess.BLACK if self.white_left else chess.WHITE
            running = clock.running is not None
            # The side whose time runs has its lever up.
            right_turn = clock.turn == right_side
            reading = dgt.bwtime(dgt.ClockTimes(
                left, right, running, right_high=running and clock.running == right_side,
                right_turn=right_turn, left_turn=not right_turn))
        self._last_clock = reading
        self._clock_sent_at = now
        return reading
