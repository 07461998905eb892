"""What the DGT and ChessLink request readers share: what the host sent and not yet read,
and since when a request has waited for its rest, so that one cut short is dropped after
`TRUNCATED_AFTER` instead of holding back every request behind it."""

from __future__ import annotations

from typing import Generic, TypeVar

RequestT = TypeVar("RequestT")

TRUNCATED_AFTER = 0.5  # s: a request's body that stops arriving this long is dropped


class TimedRequestReader(Generic[RequestT]):
    """Bytes from the host to requests. A subclass keeps the unread input (`_append`,
    `_unread`) and reads it in `_parse`, asking `stale` whether an incomplete request is
    to be dropped."""

    def __init__(self) -> None:
        self._waiting_since: float | None = None  # an incomplete request since then
        self.unknown = 0  # bytes that started no request
        self.malformed = 0  # requests dropped: a wrong shape, a bad check, cut short

    @property
    def ignored(self) -> int:
        return self.unknown + self.malformed

    def feed(self, data: bytes, now: float) -> list[RequestT]:
        if data:
            self._append(data)
            self._waiting_since = now
        return self._read(now)

    def deadline(self) -> float | None:
        """When an incomplete request will be dropped (None: nothing is waiting)."""
        if not self._unread() or self._waiting_since is None:
            return None
        return self._waiting_since + TRUNCATED_AFTER

    def expire(self, now: float) -> list[RequestT]:
        """Drop a request whose body stopped arriving; the requests after it."""
        return self._read(now)

    def stale(self, now: float) -> bool:
        return self._waiting_since is not None and now - self._waiting_since >= TRUNCATED_AFTER

    def _read(self, now: float) -> list[RequestT]:
        out = self._parse(now)
        if not self._unread():
            self._waiting_since = None
        return out

    def _append(self, data: bytes) -> None:
        raise NotImplementedError

    def _unread(self) -> int:
        raise NotImplementedError

    def _parse(self, now: float) -> list[RequestT]:
        raise NotImplementedError
