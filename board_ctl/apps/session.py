"""What a protocol's session hands back to its port after a request: bytes for the app,
the squares it asks to light, and clock commands for the terminal view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic

import chess

from board_ctl.apps.requestreader import RequestT, TimedRequestReader

if TYPE_CHECKING:
    from board_ctl.apps.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class Lights:
    """The squares an app asks to light (an empty set: all off)."""

    squares: frozenset[chess.Square]
    blink: bool = False


@dataclass
class Output:
    data: bytearray = field(default_factory=bytearray)
    lights: Lights | None = None  # None: no change
    notes: list[str] = field(default_factory=list)  # what the app asked, for the view

    def extend(self, other: Output) -> None:
        self.data += other.data
        if other.lights is not None:
            self.lights = other.lights
        self.notes += other.notes


class RequestSession(Generic[RequestT]):
    """A protocol's board: the app's bytes read by its `reader` into requests, each
    answered by `_answer` from the board as it stands."""

    reader: TimedRequestReader[RequestT]

    def receive(self, data: bytes, now: float, board: Snapshot) -> Output:
        out = Output()
        for request in self.reader.feed(data, now):
            self._answer(request, now, board, out)
        return out

    def deadline(self) -> float | None:
        return self.reader.deadline()

    def expire(self, now: float, board: Snapshot) -> Output:
        """Requests cut short are dropped, and those waiting behind them answered."""
        out = Output()
        for request in self.reader.expire(now):
            self._answer(request, now, board, out)
        return out

    def _answer(self, request: RequestT, now: float, board: Snapshot, out: Output) -> None:
        raise NotImplementedError
