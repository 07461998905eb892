# Types of protocol.py for mypy on the host. protocol.py itself stays free of annotations
# because it also runs on MicroPython; keep the two in step.
from typing import Any

PROTOCOL_VERSION: int
HELLO: int
HELLO_ACK: int
SQUARE: int
SNAPSHOT: int
CLOCK: int
BUTTON: int
CLOCK_TIMES: int
REQUEST_SNAPSHOT: int
LEDS: int
ERROR: int
PING: int
PONG: int
GAP: int
NAMES: dict[int, str]
BLACK: int
WHITE: int
NO_SIDE: int
PROMOTE_Q: int
PROMOTE_R: int
PROMOTE_B: int
PROMOTE_N: int
DRAW_OFFER: int
DRAW_ACCEPT: int
CLAIM: int
RESIGN: int
ARBITER: int
TAKEBACK: int
HINT: int
BUTTON_NAMES: tuple[str, ...]
ON_CONNECT: int
ON_REQUEST: int
HEARTBEAT: int
REASON_NAMES: tuple[str, ...]
ERR_VERSION: int
ERR_MALFORMED: int
ERR_UNSUPPORTED: int
ERR_INTERNAL: int
N_COLOURS: int
N_BLINKS: int
N_BUZZERS: int
STATUS_WHITE_TO_MOVE: int
STATUS_BLACK_TO_MOVE: int
STATUS_GAME_OVER: int
STATUS_ALERT_SHIFT: int
STATUS_REMOTE_SHIFT: int
REMOTE_NONE: int
REMOTE_THINKING: int
REMOTE_SHOWN: int
REMOTE_HINT: int
STATUS_MAX: int
MAX_TEXT: int
MAX_FRAME: int
_BODIES: dict[int, tuple[tuple[Any, ...], ...]]

class ProtocolError(ValueError): ...
class CrcError(ProtocolError): ...

def crc16(data: bytes | bytearray, crc: int = ...) -> int: ...
def cobs_encode(data: bytes | bytearray) -> bytes: ...
def cobs_decode(data: bytes | bytearray) -> bytes: ...

class Message:
    type: int
    seq: int
    version: int
    fields: dict[str, Any]
    def __init__(self, mtype: int, seq: int = ..., version: int = ..., **fields: Any) -> None: ...
    @property
    def name(self) -> str: ...
    def encode(self) -> bytes: ...
    def __getattr__(self, name: str) -> Any: ...  # the body's fields

def encode(mtype: int, seq: int, *values: Any, **options: Any) -> bytes: ...
def decode_payload(payload: bytes) -> Message: ...
def decode_frame(frame: bytes | bytearray) -> Message: ...
def encode_hello(seq: int, software: str, ident: str) -> bytes: ...
def encode_hello_ack(seq: int, firmware: str, board_id: str) -> bytes: ...
def encode_square(seq: int, square: int, occupied: bool, ms: int) -> bytes: ...
def encode_snapshot(seq: int, occupied: int, ms: int, reason: int = ...) -> bytes: ...
def encode_clock(seq: int, side: int, ms: int) -> bytes: ...
def encode_clock_times(seq: int, side: int, ms: int, white_ms: int, black_ms: int) -> bytes: ...
def encode_button(seq: int, button: int, side: int, ms: int) -> bytes: ...
def encode_request_snapshot(seq: int) -> bytes: ...
def encode_leds(seq: int, cells: bytes, status: int = ..., buzzer: int = ...) -> bytes: ...
def encode_error(seq: int, code: int, text: str) -> bytes: ...
def encode_ping(seq: int, token: int) -> bytes: ...
def encode_pong(seq: int, token: int) -> bytes: ...
def cell(colour: int, blink: int = ...) -> int: ...
def pack_status(white_to_move: bool = ..., black_to_move: bool = ..., game_over: bool = ...,
                alert: int | None = ..., remote: int = ...) -> int: ...
def unpack_status(status: int) -> tuple[bool, bool, bool, int | None]: ...
def unpack_remote(status: int) -> int: ...

class Sender:
    seq: int
    def __init__(self) -> None: ...
    def frame(self, mtype: int, *values: Any) -> bytes: ...

class Decoder:
    max_frame: int
    expected: int | None
    frames: int
    bad_crc: int
    malformed: int
    overflows: int
    gaps: int
    missed: int
    def __init__(self, max_frame: int = ...) -> None: ...
    def reset(self) -> None: ...
    @property
    def dropped(self) -> int: ...
    def feed(self, data: bytes | bytearray) -> list[Message]: ...
