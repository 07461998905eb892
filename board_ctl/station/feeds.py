"""The pages' live feed (server-sent events on /events and /arbiter/events): how many
connections, for how long.

Each page holds one connection for as long as it is open, so connections are what a
client can pile up: 1,100 idle ones used every file descriptor the station had. A client
address keeps at most `per_client` feeds and the station at most `total` (by default a
quarter of its file descriptors, so pages, the broker and the disk always have the
rest); a feed beyond is told to come back later (`retry:`) and closed at once. A feed
ends after `lifetime_s` (the browser's EventSource reconnects by itself and starts from a
fresh snapshot), and a feed whose client stops reading for `send_timeout_s` ends then."""

from __future__ import annotations

import asyncio
import logging
import resource
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

log = logging.getLogger(__name__)


def _descriptors() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else soft


def default_total(cap: int = 1000) -> int:
    """A quarter of this process's file descriptors (its soft RLIMIT_NOFILE), at most
    `cap`, at least 8."""
    return max(8, min(cap, _descriptors() // 4))


def listen_backlog(cap: int = 128) -> int:
    """The web server's listen backlog, which asyncio also takes as the number of
    connections it accepts at once: an eighth of the file descriptors, at most `cap`.
    (uvicorn's 2,048 let a burst of connections take every descriptor before the first
    was answered and closed, and asyncio then logged "Too many open files" once per
    connection left in the batch.)"""
    return max(16, min(cap, _descriptors() // 8))


@dataclass
class FeedLimits:
    per_client: int = 8
    total: int = 0  # 0: default_total()
    lifetime_s: float = 600.0
    send_timeout_s: float = 30.0
    busy_retry_ms: int = 30_000


class FeedGate:
    """The feeds open, by client address."""

    def __init__(self, limits: FeedLimits) -> None:
        self.limits = limits
        self.total = limits.total or default_total()
        self.open: Counter[str] = Counter()

    def enter(self, client: str) -> str | None:
        """Admit a feed for `client` (None), or say why not."""
        if self.open[client] >= self.limits.per_client:
            return f"{self.limits.per_client} live pages open from this address already"
        if sum(self.open.values()) >= self.total:
            return f"the station serves {self.total} live pages already"
        self.open[client] += 1
        return None

    def leave(self, client: str) -> None:
        self.open[client] -= 1
        if self.open[client] <= 0:
            del self.open[client]


class FeedResponse(StreamingResponse):
    """A StreamingResponse that ends when a send does not complete within
    `send_timeout_s` (a client that stopped reading), and calls `on_close` however it
    ends (the feed's place given back)."""

    def __init__(self, *args: object, send_timeout_s: float,
                 on_close: Callable[[], None], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.send_timeout_s = send_timeout_s
        self.on_close = on_close

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.on_close()

    async def stream_response(self, send: Send) -> None:
        async def timed(message: Message) -> None:
            await asyncio.wait_for(send(message), self.send_timeout_s)

        try:
            await super().stream_response(timed)
        except asyncio.TimeoutError:
            log.info("a live page that read nothing for %g s was dropped", self.send_timeout_s)
