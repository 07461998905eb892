"""The app ports as one of the service's observers (`board-ctl run --dgt/--chesslink`).

`show` hands each state to every port's thread; the squares an app asks to light and
the clock commands it sends come back to the service's loop as commands on its queue
(`ShowAppLights`, `ShowAppNote`): the service decides what the LEDs show, and the
referee's alerts keep priority there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import serial

from board_ctl.apps.chesslinksession import ChessLinkSession
from board_ctl.apps.dgtsession import DgtSession
from board_ctl.apps.port import AppPort
from board_ctl.apps.transport import LineSettings, Transport
from board_ctl.core.effects import Effect, SquareLight
from board_ctl.service.messages import Command
from board_ctl.service.view import ViewState

if TYPE_CHECKING:
    from board_ctl.service.service import Service

log = logging.getLogger(__name__)

DGT_LINE = LineSettings(9600)  # 8N1
CHESSLINK_LINE = LineSettings(38400, bytesize=serial.SEVENBITS, parity=serial.PARITY_ODD)


@dataclass(frozen=True)
class ShowAppLights(Command):
    """The squares an app asks to light (replacing what it lit before)."""

    source: str
    lights: tuple[SquareLight, ...]

    def run(self, service: Service) -> None:
        service.set_app_lights(self.source, self.lights)


@dataclass(frozen=True)
class ShowAppNote(Command):
    """What an app asked its clock to show (or a port's news), for the terminal view."""

    text: str

    def run(self, service: Service) -> None:
        service.message(self.text)


def dgt_port(name: str, serialnr: str, *, start_fen: str, scale: float = 1.0) -> AppPort:
    return AppPort("DGT", "the DGT board protocol", Transport(name, DGT_LINE),
                   DgtSession(serialnr),
                   start_fen=start_fen, scale=scale)


def chesslink_port(name: str, *, parity_bit: bool = True, start_fen: str,
                   scale: float = 1.0) -> AppPort:
    return AppPort("ChessLink", "Millennium ChessLink", Transport(name, CHESSLINK_LINE),
                   ChessLinkSession(parity_bit=parity_bit), start_fen=start_fen, scale=scale)


class AppPorts:
    def __init__(self, ports: Sequence[AppPort],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ports = tuple(ports)
        self._now = clock
        self._submit: Callable[[object], None] | None = None
        self._scale: Callable[[], float] = lambda: 1.0
        self._started: list[AppPort] = []

    def start(self, submit: Callable[[object], None],
              scale: Callable[[], float] = lambda: 1.0) -> list[str]:
        """Open every port and start its thread; what to tell the user. A port that
        cannot be made raises HardwareError, with the ones opened before it closed.
        `scale()`: how much faster than the wall's the game's time runs (the board's
        clock; an emulator played at --speed N), read with each state."""
        self._submit = submit
        self._scale = scale
        said = []
        try:
            for port in self.ports:
                said.append(port.open())
                port.on_lights = self._lights
                port.on_note = self._note
                port.start()
                self._started.append(port)
        except BaseException:
            self.close()
            raise
        return said

    def _lights(self, source: str, lights: tuple[SquareLight, ...]) -> None:
        if self._submit is not None:
            self._submit(ShowAppLights(source, lights))

    def _note(self, text: str) -> None:
        if self._submit is not None:
            self._submit(ShowAppNote(text))

    # ------------------------------------------------------------------ an observer

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        now, scale = self._now(), self._scale()
        for port in self._started:
            port.post(state, now, scale)

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        started, self._started = self._started, []
        for port in started:
            port.stop()
            # (output dropped is no trouble when no app was reading: a pty nobody opened)
            troubled = port.session.ignored or port.guesses
            log.log(logging.WARNING if troubled else logging.INFO, "%s", port.summary())
        for port in self.ports:
            if port not in started:
                port.transport.close()
