"""The LiveChess 2.x WebSocket messages: requests parsed, responses built (pure, no I/O).

Requests are ``{"id": N, "call": NAME, "param": ...}``; every response is
``{"response": "call"|"feed"|"error", "id": ..., "param": ..., "time": <epoch ms>}``.
The `id` is echoed exactly as it came, with its JSON type: lichess.org/dgt compares it
loosely today, but a strict comparison of a number with a string broke its board
detection once (lila #20307), so a number must stay a number.

JSON text may spell a lone UTF-16 surrogate (``"\ud800"``): Python's json reads it into
a str that no UTF-8 encoder takes, so echoed it would break the answer (and, as a feed
id, the feed loop that carries every client's feed). A request with such text anywhere
is refused here, as any other bad request: nothing a client sent reaches a response
unless it is text every client can read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from board_ctl.errors import BoardCtlError


class RequestError(BoardCtlError, ValueError):
    """A request that cannot be served; `id` is the request's own id when it had one."""

    def __init__(self, message: str, id: Any = None) -> None:
        super().__init__(message)
        self.id = id


@dataclass(frozen=True)
class Request:
    id: Any  # as the client sent it: a number, a string, or None when absent
    call: str
    param: Any


MAX_SHOWN = 60  # characters of a bad request quoted back in an error


def parse_request(text: str | bytes) -> Request:
    """One client message as a request, or RequestError saying in one line what is wrong."""
    if isinstance(text, bytes):
        raise RequestError("binary frames are not understood: send JSON text")
    try:
        data = json.loads(text, parse_constant=_not_json, parse_float=_finite)
    except ValueError as exc:
        raise RequestError(f"not valid JSON ({exc.__class__.__name__}: {exc}): "
                           f"{_shown(text)}") from None
    except RecursionError:  # json recurses per level: a frame of "[[[[..." runs it out
        raise RequestError(f"not JSON this board reads (nested too deep): {_shown(text)}") from None
    if not isinstance(data, dict):
        raise RequestError(f"a request must be a JSON object, got {_shown(text)}")
    # (an id with such text in it cannot be echoed: the error goes back without one)
    bad_id = _not_unicode({"id": data["id"]}) if "id" in data else None
    bad = bad_id or _not_unicode(data)
    if bad is not None:
        where, value = bad
        shown = _shown(ascii(value[:MAX_SHOWN]))
        raise RequestError(f"{where} is not valid Unicode text (a lone surrogate: {shown})",
                           None if bad_id else data.get("id"))
    request_id = data.get("id")
    call = data.get("call")
    if not isinstance(call, str) or not call:
        raise RequestError(f"a request needs a \"call\" naming what to do, got {_shown(text)}",
                           request_id)
    return Request(request_id, call, data.get("param"))


def _not_unicode(data: dict[str, Any]) -> tuple[str, str] | None:
    """The first string (a key or a value, at any depth) that is not Unicode text (a
    lone surrogate, which UTF-8 cannot encode): (where, the string), else None. The
    walk keeps its own stack: the parser lets nesting go deeper than Python recurses."""
    stack: list[tuple[str, Any]] = [(str(key), value) for key, value in reversed(data.items())]
    for key in data:
        if not _encodable(key):
            return "a key", key
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if not _encodable(value):
                return where, value
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                if not _encodable(key):
                    return f"a key in {where}", key
                stack.append((f"{where}.{key}", item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return None


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _not_json(constant: str) -> None:
    """NaN and Infinity: Python's json takes them, JSON does not; an id echoed with one
    would make the answer text no client can parse."""
    raise ValueError(f"{constant} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is too large for a JSON number")
    return value


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _encode(kind: str, id: Any, param: Any, time_ms: int) -> str:
    return _json({"response": kind, "id": id, "param": param, "time": time_ms})


def call_response(id: Any, param: Any, time_ms: int) -> str:
    return _encode("call", id, param, time_ms)


def encode_id(id: Any) -> str:
    """A feed id as JSON, once, when it is subscribed (see Feed)."""
    return _json(id)


class Feed:
    """One feed's param encoded once, for every subscription: each feed message is the
    subscription's own id (encode_id) spliced in, byte for byte what `_encode` makes."""

    def __init__(self, param: dict[str, Any], time_ms: int) -> None:
        self._tail = f',"param":{_json(param)},"time":{_json(time_ms)}}}'

    def to(self, encoded_id: str) -> str:
        return '{"response":"feed","id":' + encoded_id + self._tail


def feed_response(feed_id: Any, param: dict[str, Any], time_ms: int) -> str:
    """A feed message: `feed_id` is the id the client chose when it subscribed."""
    return Feed(param, time_ms).to(encode_id(feed_id))


def error_response(id: Any, message: str, time_ms: int) -> str:
    return _encode("error", id, {"message": message}, time_ms)


def field(param: Any, name: str, kind: type | tuple[type, ...], what: str, id: Any) -> Any:
    """``param[name]`` checked to be of `kind`, else a RequestError naming it."""
    if not isinstance(param, dict) or name not in param:
        raise RequestError(f"{what} needs \"{name}\" in its param", id)
    value = param[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise RequestError(f"{what}: \"{name}\" has the wrong type: {_shown(json.dumps(value))}",
                           id)
    return value
