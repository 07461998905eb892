"""What a board backend (or a command) puts on the service's queue besides the core's events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from board_ctl.sensorlog import StartInfo

if TYPE_CHECKING:
    from board_ctl.service.service import Service


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


@dataclass(frozen=True, slots=True)
class NewGame:
    """A command (an arbiter, a LiveChess client): the game in progress ends unfinished,
    and the next starts from `start` (None: the same start as before) once the board
    shows it; the LEDs guide the pieces there."""

    start: StartInfo | None = None
    reason: str = "a new game was asked for"


class Command:
    """Work from outside the board (an arbiter's order over MQTT) that must run on the
    loop thread, where it may read and change the game as a board event does."""

    def run(self, service: Service) -> None:
        raise NotImplementedError


BoardMessage = LinkDown | LinkUp | BoardDone
