"""The wire protocol between the board's microcontroller and the host: a pure codec.

This one file runs unchanged on CPython (the host, the emulator, the tests) and on
MicroPython (copied onto the Pico as ``protocol.py``), so it uses only what both have:
no dataclasses, typing, enum, f-strings or ``from __future__`` (MicroPython has no
``__future__`` module), and only ``struct.pack``/``struct.unpack``. No I/O, no clock.

Frame on the wire::

    0x00 | COBS( payload | CRC-16/CCITT-FALSE(payload), big-endian ) | 0x00
    payload = version u8 | type u8 | seq u16 | body

Integers are little-endian (u8, u16, u32, u64); a bool is a u8 0/1; a str is a u8
length and UTF-8 (cut to MAX_TEXT characters). Bodies are listed in _BODIES below.

COBS leaves no 0x00 inside a frame, so 0x00 only delimits. Each frame also *starts*
with 0x00, which cuts off any garbage before it (a REPL banner, a traceback, line
noise): garbage costs at most itself, never the next frame. Empty frames are ignored.

Each direction numbers its frames with its own u16 counter, restarted at 0 by the
HELLO/HELLO_ACK that opens a session; a receiver that sees a jump knows frames were lost
and asks for a SNAPSHOT, which carries the whole board state.

The header and the HELLO, HELLO_ACK and ERROR bodies are frozen for all protocol
versions, so that a version mismatch can always be read and reported; other messages
of another version are dropped as malformed.
"""

import struct

PROTOCOL_VERSION = 1

# Message types. GAP never travels: it is the Decoder's report of lost frames.
HELLO = 0x01  # host -> board: software str, ident str
HELLO_ACK = 0x02  # board -> host: firmware str, board_id str
SQUARE = 0x10  # board -> host: square u8, occupied bool, ms u32
SNAPSHOT = 0x11  # board -> host: occupied u64 bitboard, ms u32, reason u8
CLOCK = 0x12  # board -> host: side u8, ms u32
BUTTON = 0x13  # board -> host: button u8, side u8, ms u32
CLOCK_TIMES = 0x14  # board -> host: side u8, ms u32, white_ms u32, black_ms u32
REQUEST_SNAPSHOT = 0x20  # host -> board: (empty)
LEDS = 0x21  # host -> board: cells 64 bytes, status u8, buzzer u8
ERROR = 0x30  # both ways: code u8, text str
PING = 0x31  # both ways: token u32
PONG = 0x32  # both ways: token u32 (echoes the PING)
GAP = 0xFF  # Decoder only: missed u16, expected u16

NAMES = {
    HELLO: "HELLO", HELLO_ACK: "HELLO_ACK", SQUARE: "SQUARE", SNAPSHOT: "SNAPSHOT",
    CLOCK: "CLOCK", BUTTON: "BUTTON", CLOCK_TIMES: "CLOCK_TIMES", REQUEST_SNAPSHOT: "REQUEST_SNAPSHOT", LEDS: "LEDS",
    ERROR: "ERROR", PING: "PING", PONG: "PONG", GAP: "GAP",
}

# Sides (CLOCK, BUTTON): python-chess colours, plus "no side" for shared buttons.
BLACK = 0
WHITE = 1
NO_SIDE = 2

# BUTTON codes.
PROMOTE_Q = 0
PROMOTE_R = 1
PROMOTE_B = 2
PROMOTE_N = 3
DRAW_OFFER = 4
DRAW_ACCEPT = 5
CLAIM = 6
RESIGN = 7
ARBITER = 8
TAKEBACK = 9  # against a computer: take back the last full move
HINT = 10  # against a computer: light the engine's suggestion
BUTTON_NAMES = ("promote-q", "promote-r", "promote-b", "promote-n", "draw-offer",
                "draw-accept", "claim", "resign", "arbiter", "takeback", "hint")

# SNAPSHOT reasons.
ON_CONNECT = 0
ON_REQUEST = 1
HEARTBEAT = 2
REASON_NAMES = ("connect", "request", "heartbeat")

# ERROR codes.
ERR_VERSION = 1  # protocol versions differ
ERR_MALFORMED = 2  # a frame could not be understood
ERR_UNSUPPORTED = 3  # a message this side does not handle
ERR_INTERNAL = 4  # the firmware hit an exception

# LEDS: one byte per square a1..h8 = blink << 4 | colour, values of
# board_ctl.core.effects.Colour (0-6) and Blink (0-2); status bits; buzzer 0-3.
N_COLOURS = 7
N_BLINKS = 3
N_BUZZERS = 4
STATUS_WHITE_TO_MOVE = 0x01
STATUS_BLACK_TO_MOVE = 0x02
STATUS_GAME_OVER = 0x04
STATUS_ALERT_SHIFT = 3  # bits 3-4: 0 off, else Blink + 1
# Bits 5-7: the remote side (a computer): 0 none, 1 it is thinking, 2 its move is shown
# on the squares (3-6: a promotion to Q, R, B, N), 7 a hint is shown on the squares.
STATUS_REMOTE_SHIFT = 5
REMOTE_NONE = 0
REMOTE_THINKING = 1
REMOTE_SHOWN = 2  # + 1 + index in QRBN for a promotion
REMOTE_HINT = 7
STATUS_MAX = 0xFF

MAX_TEXT = 60  # characters of a str field; keeps every frame short
MAX_FRAME = 300  # COBS bytes; longer runs without a 0x00 are garbage
_HEADER = 4
_CRC = 2

# Bodies: (field, kind[, max]) in wire order. Kinds: u8 u16 u32 u64 bool str cells.
_BODIES = {
    HELLO: (("software", "str"), ("ident", "str")),
    HELLO_ACK: (("firmware", "str"), ("board_id", "str")),
    SQUARE: (("square", "u8", 63), ("occupied", "bool"), ("ms", "u32")),
    SNAPSHOT: (("occupied", "u64"), ("ms", "u32"), ("reason", "u8", 2)),
    CLOCK: (("side", "u8", 1), ("ms", "u32")),
    BUTTON: (("button", "u8", 10), ("side", "u8", 2), ("ms", "u32")),
    # A press on an external clock, with both times it displays after the press.
    CLOCK_TIMES: (("side", "u8", 1), ("ms", "u32"), ("white_ms", "u32"), ("black_ms", "u32")),
    REQUEST_SNAPSHOT: (),
    LEDS: (("cells", "cells"), ("status", "u8", STATUS_MAX), ("buzzer", "u8", 3)),
    ERROR: (("code", "u8"), ("text", "str")),
    PING: (("token", "u32"),),
    PONG: (("token", "u32"),),
    GAP: (("missed", "u16"), ("expected", "u16")),
}
_FROZEN = (HELLO, HELLO_ACK, ERROR)  # decodable whatever the version byte says
_STRUCT = {"u8": ("<B", 1, 0xFF), "u16": ("<H", 2, 0xFFFF),
           "u32": ("<I", 4, 0xFFFFFFFF), "u64": ("<Q", 8, 0xFFFFFFFFFFFFFFFF)}


class ProtocolError(ValueError):
    """A frame or a field that does not follow the protocol."""


class CrcError(ProtocolError):
    """A frame whose CRC does not match: damaged on the way."""


# ---------------------------------------------------------------- CRC and COBS


def _crc_table():
    table = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = (c << 1) ^ 0x1021 if c & 0x8000 else c << 1
        table.append(c & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection): b"123456789" -> 0x29B1."""
    table = _CRC_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


def cobs_encode(data):
    out = bytearray(b"\x00")
    code_at = 0
    code = 1
    for b in data:
        if b:
            out.append(b)
            code += 1
        if not b or code == 0xFF:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
    out[code_at] = code
    return bytes(out)


def cobs_decode(data):
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        end = i + code
        if code == 0 or end > n:
            raise ProtocolError("bad COBS block")
        out.extend(data[i + 1:end])
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


# ---------------------------------------------------------------- messages


class Message:
    """One decoded message: ``type``, ``seq``, ``version`` and its body fields as attributes."""

    def __init__(self, mtype, seq=0, version=PROTOCOL_VERSION, **fields):
        self.type = mtype
        self.seq = seq
        self.version = version
        self.fields = fields
        for name in fields:
            setattr(self, name, fields[name])

    @property
    def name(self):
        return NAMES.get(self.type, "0x%02x" % self.type)

    def encode(self):
        """The frame bytes of this message (GAP is not encodable)."""
        spec = _BODIES[self.type]
        return encode(self.type, self.seq, *[self.fields[f[0]] for f in spec])

    def __eq__(self, other):
        return (isinstance(other, Message) and self.type == other.type
                and self.seq == other.seq and self.version == other.version
                and self.fields == other.fields)

    def __ne__(self, other):  # MicroPython does not derive != from ==
        return not self.__eq__(other)

    def __repr__(self):
        parts = ["%s=%r" % kv for kv in sorted(self.fields.items())]
        return "Message(%s seq=%d %s)" % (self.name, self.seq, " ".join(parts))


def _check_int(name, value, top):
    v = int(value)  # bools too: MicroPython's bool is not an int subclass
    if v < 0 or v > top:
        raise ProtocolError("%s=%r out of range 0..%d" % (name, value, top))
    return v


def _put(out, field, value):
    name = field[0]
    kind = field[1]
    if kind == "str":
        raw = str(value)[:MAX_TEXT].encode("utf-8")
        out.append(len(raw))
        out.extend(raw)
    elif kind == "cells":
        cells = bytes(value)
        if len(cells) != 64:
            raise ProtocolError("cells must be 64 bytes")
        for c in cells:
            if c & 0x0F >= N_COLOURS or c >> 4 >= N_BLINKS:
                raise ProtocolError("bad LED cell 0x%02x" % c)
        out.extend(cells)
    elif kind == "bool":
        out.append(_check_int(name, value, 1))
    else:
        fmt, _, top = _STRUCT[kind]
        if len(field) > 2:
            top = field[2]
        out.extend(struct.pack(fmt, _check_int(name, value, top)))


def _get(data, pos, field):
    """Field value at pos and the position after it; ProtocolError if it does not fit."""
    name = field[0]
    kind = field[1]
    n = len(data)
    if kind == "str":
        if pos >= n or pos + 1 + data[pos] > n:
            raise ProtocolError("%s: truncated" % name)
        end = pos + 1 + data[pos]
        try:
            return str(data[pos + 1:end], "utf-8"), end
        except UnicodeError:
            raise ProtocolError("%s: not UTF-8" % name)
    if kind == "cells":
        if pos + 64 > n:
            raise ProtocolError("cells: truncated")
        cells = bytes(data[pos:pos + 64])
        for c in cells:
            if c & 0x0F >= N_COLOURS or c >> 4 >= N_BLINKS:
                raise ProtocolError("bad LED cell 0x%02x" % c)
        return cells, pos + 64
    if kind == "bool":
        fmt, size, top = "<B", 1, 1
    else:
        fmt, size, top = _STRUCT[kind]
        if len(field) > 2:
            top = field[2]
    if pos + size > n:
        raise ProtocolError("%s: truncated" % name)
    value = struct.unpack(fmt, data[pos:pos + size])[0]
    if value > top:
        raise ProtocolError("%s=%d out of range 0..%d" % (name, value, top))
    return (value == 1 if kind == "bool" else value), pos + size


def encode(mtype, seq, *values, **options):
    """The frame for a message; values in body order. options: version (tests only)."""
    if mtype == GAP or mtype not in _BODIES:
        raise ProtocolError("cannot encode message type %r" % (mtype,))
    spec = _BODIES[mtype]
    if len(values) != len(spec):
        raise ProtocolError("%s takes %d values, not %d" % (NAMES[mtype], len(spec), len(values)))
    payload = bytearray()
    payload.append(options.get("version", PROTOCOL_VERSION))
    payload.append(mtype)
    payload.extend(struct.pack("<H", seq & 0xFFFF))
    for i in range(len(spec)):
        _put(payload, spec[i], values[i])
    payload.extend(struct.pack(">H", crc16(payload)))
    return b"\x00" + cobs_encode(payload) + b"\x00"


def decode_payload(payload):
    """The Message in one unstuffed payload (CRC already stripped); ProtocolError if malformed."""
    if len(payload) < _HEADER:
        raise ProtocolError("frame too short")
    version = payload[0]
    mtype = payload[1]
    seq = struct.unpack("<H", payload[2:4])[0]
    spec = _BODIES.get(mtype)
    if spec is None or mtype == GAP:
        raise ProtocolError("unknown message type 0x%02x" % mtype)
    if version != PROTOCOL_VERSION and mtype not in _FROZEN:
        raise ProtocolError("protocol version %d, expected %d" % (version, PROTOCOL_VERSION))
    fields = {}
    pos = _HEADER
    for field in spec:
        fields[field[0]], pos = _get(payload, pos, field)
    if pos != len(payload):
        raise ProtocolError("%d stray bytes after %s" % (len(payload) - pos, NAMES[mtype]))
    return Message(mtype, seq, version, **fields)


def decode_frame(frame):
    """The Message in one frame's COBS bytes (without the 0x00 delimiters)."""
    raw = cobs_decode(frame)
    if len(raw) < _HEADER + _CRC:
        raise ProtocolError("frame too short")
    if crc16(raw[:-_CRC]) != struct.unpack(">H", raw[-_CRC:])[0]:
        raise CrcError("bad CRC")
    return decode_payload(raw[:-_CRC])


# ---------------------------------------------------------------- encoders


def encode_hello(seq, software, ident):
    return encode(HELLO, seq, software, ident)


def encode_hello_ack(seq, firmware, board_id):
    return encode(HELLO_ACK, seq, firmware, board_id)


def encode_square(seq, square, occupied, ms):
    return encode(SQUARE, seq, square, occupied, ms)


def encode_snapshot(seq, occupied, ms, reason=HEARTBEAT):
    return encode(SNAPSHOT, seq, occupied, ms, reason)


def encode_clock(seq, side, ms):
    return encode(CLOCK, seq, side, ms)


def encode_clock_times(seq, side, ms, white_ms, black_ms):
    return encode(CLOCK_TIMES, seq, side, ms, white_ms, black_ms)


def encode_button(seq, button, side, ms):
    return encode(BUTTON, seq, button, side, ms)


def encode_request_snapshot(seq):
    return encode(REQUEST_SNAPSHOT, seq)


def encode_leds(seq, cells, status=0, buzzer=0):
    return encode(LEDS, seq, cells, status, buzzer)


def encode_error(seq, code, text):
    return encode(ERROR, seq, code, text)


def encode_ping(seq, token):
    return encode(PING, seq, token)


def encode_pong(seq, token):
    return encode(PONG, seq, token)


def cell(colour, blink=0):
    """One LEDS cell byte."""
    return (blink << 4) | colour


def pack_status(white_to_move=False, black_to_move=False, game_over=False, alert=None,
                remote=REMOTE_NONE):
    """LEDS status byte; alert is None (off) or a Blink value 0-2; remote 0-7."""
    s = (remote & 7) << STATUS_REMOTE_SHIFT
    if white_to_move:
        s |= STATUS_WHITE_TO_MOVE
    if black_to_move:
        s |= STATUS_BLACK_TO_MOVE
    if game_over:
        s |= STATUS_GAME_OVER
    if alert is not None:
        s |= (int(alert) + 1) << STATUS_ALERT_SHIFT
    return s


def unpack_status(status):
    """(white_to_move, black_to_move, game_over, alert Blink value or None)."""
    alert = (status >> STATUS_ALERT_SHIFT) & 3
    return (bool(status & STATUS_WHITE_TO_MOVE), bool(status & STATUS_BLACK_TO_MOVE),
            bool(status & STATUS_GAME_OVER), alert - 1 if alert else None)


def unpack_remote(status):
    """The remote side's field of a status byte (REMOTE_NONE ... REMOTE_HINT)."""
    return (status >> STATUS_REMOTE_SHIFT) & 7


class Sender:
    """Numbers one direction's frames; HELLO and HELLO_ACK restart the count at 0."""

    def __init__(self):
        self.seq = 0

    def frame(self, mtype, *values):
        if mtype == HELLO or mtype == HELLO_ACK:
            self.seq = 0
        data = encode(mtype, self.seq, *values)
        self.seq = (self.seq + 1) & 0xFFFF
        return data


# ---------------------------------------------------------------- streaming decoder


class Decoder:
    """Turns a byte stream into Messages; drops what is not a valid frame.

    ``feed(data)`` returns the messages completed by ``data``, in order. A frame that
    fails COBS, CRC or body checks is dropped and counted, and decoding resumes at the
    next 0x00. A jump in sequence numbers yields a ``GAP`` message (missed, expected)
    before the frame that revealed it. Never raises on any input.
    """

    def __init__(self, max_frame=MAX_FRAME):
        self.max_frame = max_frame
        self.expected = None  # next seq, None until the first frame
        self._buf = bytearray()
        self._overflow = False
        self.frames = 0  # good frames
        self.bad_crc = 0
        self.malformed = 0  # bad COBS, short, unknown type, bad body, other version
        self.overflows = 0  # runs longer than max_frame without a 0x00
        self.gaps = 0
        self.missed = 0  # frames lost in gaps, in total

    def reset(self):
        """Forget a partial frame and the sequence (a new connection)."""
        self._buf = bytearray()
        self._overflow = False
        self.expected = None

    @property
    def dropped(self):
        return self.bad_crc + self.malformed + self.overflows

    def feed(self, data):
        out = []
        data = bytes(data)  # one type to search, whatever buffer the caller passed
        start = 0
        n = len(data)
        while start <= n:
            end = data.find(b"\x00", start)
            if end < 0:
                self._add(data[start:])
                break
            self._add(data[start:end])
            self._finish(out)
            start = end + 1
        return out

    def _add(self, chunk):
        if self._overflow or not chunk:
            return
        if len(self._buf) + len(chunk) > self.max_frame:
            self._overflow = True
            self._buf = bytearray()
        else:
            self._buf.extend(chunk)

    def _finish(self, out):
        frame = self._buf
        self._buf = bytearray()
        if self._overflow:
            self._overflow = False
            self.overflows += 1
            return
        if not frame:
            return
        try:
            msg = decode_frame(frame)
        except CrcError:
            self.bad_crc += 1
            return
        except ProtocolError:
            self.malformed += 1
            return
        self.frames += 1
        if msg.type != HELLO and msg.type != HELLO_ACK and self.expected is not None \
                and msg.seq != self.expected:
            missed = (msg.seq - self.expected) & 0xFFFF
            self.gaps += 1
            self.missed += missed
            out.append(Message(GAP, msg.seq, missed=missed, expected=self.expected))
        self.expected = (msg.seq + 1) & 0xFFFF
        out.append(msg)
