"""Board backends, chosen by name like pyserial's `serial_for_url` picks a port type.

A backend connects in `start(put)` (raising a `BoardCtlError` when it cannot), then
reports from its own thread(s) by calling `put` with core events (``Tick`` included,
so the referee's timers run while nobody moves) and `messages` (link lost, link back,
board done). It takes LED frames with `send_leds` from the service's loop thread.
Backends are imported only when chosen, so a machine without GPIO never loads gpiozero.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from board_ctl.config import Config
from board_ctl.core.effects import LedFrame
from board_ctl.errors import ConfigError

Put = Callable[[object], None]


class Board(Protocol):
    description: str  # for people: which board, on which port, with which firmware
    # Which board this is, the same from one start to the next (a Pico's unique id, not
    # its port or firmware): a game left unfinished resumes only on its own board. Known
    # once `start` has connected.
    identity: str

    def start(self, put: Put) -> None: ...

    def send_leds(self, frame: LedFrame) -> None: ...

    def stop(self) -> None: ...


def open_board(config: Config, *, pin_factory: Any = None,
               time_scale: float | None = None, games: int = 1) -> Board:
    """The backend `board.backend` names, configured but not started. `time_scale`: the
    serial board's clock runs this many times faster than the game (an emulator started
    with --speed; by default the board says so itself). With an [opponent] the emulator
    plays the person's side, `games` games (0: until stopped)."""
    backend = config.board.backend
    if backend == "serial":
        from board_ctl.service.linkboard import LinkBoard

        return LinkBoard(config.serial.port, baudrate=config.serial.baudrate,
                         connect_timeout=config.serial.connect_timeout, time_scale=time_scale)
    if backend == "emulator":
        from board_ctl.service.emulatorboard import EmulatorBoard

        log = Path(config.emulator.log).expanduser() if config.emulator.log else None
        if config.opponent.engine:
            return EmulatorBoard(None, config.emulator.speed, fen=config.game.start_fen,
                                 player=player_args(config, games))
        return EmulatorBoard(log, config.emulator.speed)
    if backend == "gpio":
        from board_ctl.service.gpioboard import GpioBoard

        return GpioBoard(config.gpio, pin_factory=pin_factory)
    raise ConfigError(f"board.backend must be one of serial, gpio, emulator, got {backend!r}")


def player_args(config: Config, games: int) -> tuple[str, ...]:
    """board-emulator's arguments for the person's side against the [opponent]."""
    emulator = config.emulator
    args = ["--play", "auto", "--player", emulator.player, "--games", str(games)]
    if emulator.player == "engine":
        args += ["--player-engine", config.opponent.engine]
    if emulator.seed is not None:
        args += ["--seed", str(emulator.seed)]
    if config.game.time_control:
        args.append("--clock")  # a person with a clock presses it after his moves
    return tuple(args)
