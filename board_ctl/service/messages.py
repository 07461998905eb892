"""What a board backend puts on the service's queue besides the core's events."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The board stopped answering (a yanked cable); the backend is reconnecting."""

    t: float
    reason: str


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The board answers again; its snapshot follows on the queue."""

    t: float
    detail: str


@dataclass(frozen=True, slots=True)
class BoardDone:
    """The board will report nothing more (the emulator reached the end of its log)."""

    t: float
    ok: bool
    detail: str


BoardMessage = LinkDown | LinkUp | BoardDone
