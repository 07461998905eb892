"""The LiveChess 2.x WebSocket messages: requests parsed, responses built (pure, no I/O).

Requests are ``{"id": N, "call": NAME, "param": ...}``; every response is
``{"response": "call"|"feed"|"error", "id": ..., "param": ..., "time": <epoch ms>}``.
The `id` is echoed exactly as it came, with its JSON type: lichess.org/dgt compares it
loosely today, but a strict comparison of a number with a string broke its board
detection once (lila #20307), so a number must stay a number.
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
    request_id = data.get("id")
    call = data.get("call")
    if not isinstance(call, str) or not call:
        raise RequestError(f"a request needs a \"call\" naming what to do, got {_shown(text)}",
                           request_id)
    return Request(request_id, call, data.get("param"))


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


def _encode(kind: str, id: Any, param: Any, time_ms: int) -> str:
    return json.dumps({"response": kind, "id": id, "param": param, "time": time_ms},
                      separators=(",", ":"), ensure_ascii=False)


def call_response(id: Any, param: Any, time_ms: int) -> str:
    return _encode("call", id, param, time_ms)


def feed_response(feed_id: Any, param: dict[str, Any], time_ms: int) -> str:
    """A feed message: `feed_id` is the id the client chose when it subscribed."""
    return _encode("feed", feed_id, param, time_ms)


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
