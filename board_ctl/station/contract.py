"""The MQTT contract as the station reads it (docs/mqtt.md): topics and payloads.

Parsing is strict about what the station relies on and lenient about the rest: a
reader ignores keys it does not know, and a payload it cannot use is refused with a
one-line reason, never half-applied."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from board_ctl.errors import BoardCtlError
from board_ctl.words import count

DEFAULT_PREFIX = "board-ctl"
BOARD_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
BOARD_TOPICS = frozenset({"status", "state", "move", "alert", "clear", "pgn", "reply"})
COMMANDS = frozenset({"ack", "result", "players", "new-game", "clock"})
RESULTS = ("1-0", "0-1", "1/2-1/2")
SIDES = ("white", "black")
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31 23:59:59.999 UTC, the last a date can show
# What the station reads of a board (docs/mqtt.md, "The broker": sizes): anything beyond
# is refused before it is parsed, so no board can make the station read or keep more.
MAX_JSON_BYTES = 64 * 1024
MAX_PGN_BYTES = 256 * 1024  # the broker's max_packet_size: a board never sends more
MAX_PLIES = 1200  # 600 moves, more than twice the longest tournament game
MAX_TEXT = 300  # characters of an alert's text, a reply's error, a termination
MAX_GAME_ID = 64


class ContractError(BoardCtlError, ValueError):
    """A message that does not follow docs/mqtt.md."""


@dataclass(frozen=True)
class Topic:
    board: str
    kind: str


def parse_topic(topic: str, prefix: str = DEFAULT_PREFIX) -> Topic | None:
    """The board and kind of a board's own topic; None for anything else (commands,
    other prefixes), which the station simply does not read."""
    parts = topic.split("/")
    head = prefix.split("/")
    if len(parts) != len(head) + 2 or parts[:len(head)] != head:
        return None
    board, kind = parts[len(head)], parts[len(head) + 1]
    if not BOARD_ID.fullmatch(board) or kind not in BOARD_TOPICS:
        return None
    return Topic(board, kind)


def command_topic(prefix: str, board: str, command: str) -> str:
    if not BOARD_ID.fullmatch(board):
        raise ContractError(f"not a board id: {board!r}")
    if command not in COMMANDS:
        raise ContractError(f"not a command: {command!r}")
    return f"{prefix}/{board}/cmd/{command}"


def subscription(prefix: str = DEFAULT_PREFIX) -> str:
    return f"{prefix}/+/+"


def shown(value: Any, limit: int = 40) -> str:
    """`value` for a log line: its repr cut to `limit` characters (a refused payload may
    hold megabytes, or an integer Python will not turn into text)."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond sys.get_int_max_str_digits()
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def json_payload(payload: bytes) -> dict[str, Any]:
    if len(payload) > MAX_JSON_BYTES:
        raise ContractError(f"{count(len(payload), 'byte')}: more than the {MAX_JSON_BYTES} a board's "
                            "JSON message may have")
    try:
        value = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ContractError(f"not JSON: {exc}") from None
    except RecursionError:  # json recurses per level: "[[[[..." runs it out
        raise ContractError("not JSON the station reads: nested too deep") from None
    if not isinstance(value, dict):
        raise ContractError("not a JSON object")
    if value.get("v", 1) != 1:
        raise ContractError(f"unknown version v={shown(value.get('v'))}")
    time_ms = value.get("time")
    if isinstance(time_ms, int) and not isinstance(time_ms, bool) and \
            not 0 <= time_ms <= MAX_EPOCH_MS:
        # the pages and the broadcast turn it into a date: it must be one
        raise ContractError(f"time: {time_ms} is not milliseconds since 1970 up to the year 9999")
    return value


def text_payload(payload: bytes) -> str:
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError(f"not UTF-8: {exc}") from None


def seconds_to_ms(value: Any, what: str) -> int | None:
    """Clock seconds (floats on the wire) as integer milliseconds inside the station."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ContractError(f"{what}: not a number: {shown(value)}")
    try:
        ms = float(value) * 1000
    except OverflowError:  # an integer beyond any float
        ms = math.inf
    if not math.isfinite(ms):  # checked after scaling: 1e308 s is no time either
        raise ContractError(f"{what}: not a finite number")
    return round(ms)


def require_int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContractError(f"{key}: not an integer: {shown(value)}")
    return value


def require_str(data: dict[str, Any], key: str, limit: int = MAX_TEXT) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ContractError(f"{key}: missing or not a string")
    if len(value) > limit:
        raise ContractError(f"{key}: {len(value)} characters, at most {limit}")
    return value


def optional_str(data: dict[str, Any], key: str, limit: int = MAX_TEXT) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = shown(value, limit)
    if not isinstance(value, str):
        raise ContractError(f"{key}: not a string: {shown(value)}")
    if len(value) > limit:
        raise ContractError(f"{key}: {len(value)} characters, at most {limit}")
    return value
