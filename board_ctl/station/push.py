"""Pushing a round to a broadcast (lichess's `POST /api/broadcast/round/{id}/push`):
the whole round's PGN as text/plain with a bearer token, after every change, at most
one push in flight and one every `interval_s`.

Always the whole round: lichess marks a round finished when every game of a push is,
so pushing only the changed game could end the round while other boards still play."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class PushStatus:
    pushes: int = 0
    failures: int = 0
    last_time_ms: int | None = None
    last_ok: bool | None = None
    last_error: str | None = None
    game_errors: list[str] = field(default_factory=list)


def post_pgn(url: str, token: str | None, pgn: str, timeout_s: float) -> dict[str, Any]:
    """One push; the parsed response, or OSError/ValueError with the reason."""
    request = urllib.request.Request(url, data=pgn.encode("utf-8"), method="POST")
    request.add_header("Content-Type", "text/plain; charset=utf-8")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace")
        raise OSError(f"HTTP {exc.code}: {detail}") from None
    value = json.loads(body.decode("utf-8"))
    if not isinstance(value, dict):
        raise ValueError("the response is not a JSON object")
    return value


class Pusher:
    def __init__(self, url: str, token: str | None, round_name: str,
                 render: Callable[[], str], interval_s: float = 2.0,
                 timeout_s: float = 10.0) -> None:
        self.url = url
        self.token = token
        self.round = round_name
        self.render = render
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.status = PushStatus()
        self._pushed: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._last_start = 0.0

    def changed(self, round_name: str) -> None:
        """Something of a round changed (called on the station's loop)."""
        if round_name != self.round:
            return
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            self._again = False
            wait = self._last_start + self.interval_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_start = time.monotonic()
            await self._push_once()
            if not self._again:
                return

    async def _push_once(self) -> None:
        text = self.render()
        if not text or text == self._pushed:
            return
        status = self.status
        try:
            response = await asyncio.to_thread(post_pgn, self.url, self.token, text,
                                               self.timeout_s)
        except (OSError, ValueError) as exc:
            status.failures += 1
            status.last_ok, status.last_error = False, str(exc)
            log.warning("push of round %s to %s failed: %s", self.round, self.url, exc)
            self._again = True  # try again after the interval
            return
        finally:
            status.last_time_ms = time.time_ns() // 1_000_000
        self._pushed = text
        status.pushes += 1
        status.last_ok, status.last_error = True, None
        games = response.get("games")
        status.game_errors = [
            f"{g.get('tags', {}).get('White', '?')} - {g.get('tags', {}).get('Black', '?')}: "
            f"{g['error']}"
            for g in games if isinstance(g, dict) and g.get("error")
        ] if isinstance(games, list) else []
        for error in status.game_errors:
            log.warning("push of round %s: %s", self.round, error)

    async def drain(self) -> None:
        """Wait for the push in flight (tests, shutdown)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)
