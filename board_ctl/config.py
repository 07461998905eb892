"""The service's configuration: a TOML file read with `tomllib` into frozen dataclasses.

Every key is checked at start-up and a bad one is a `ConfigError` naming it
(``board.backend must be one of serial, gpio, emulator, got 'x'``); unknown keys and
sections are errors too, so a typo never silently falls back to a default. Nothing
configured at all is valid: the service then plays the built-in demo game through the
board emulator. `config/board.example.toml` documents every key.
"""

from __future__ import annotations

import math
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import chess

from board_ctl.core.timecontrol import TimeControl

from board_ctl.core.profiles import PROFILES
from board_ctl.errors import ConfigError
from board_ctl.livechess.address import parse_listen

BACKENDS = ("serial", "gpio", "emulator")
ENGINE_SIDES = ("white", "black", "random")
PLAYERS = ("random", "engine")
VIEWS = ("auto", "rich", "plain", "none")
MAX_BCM_PIN = 27  # GPIO0-27 on the 40-pin header


def _choices(*names: str) -> dict[str, Any]:
    return {"choices": names}


def _range(low: float | None = None, high: float | None = None) -> dict[str, Any]:
    return {"min": low, "max": high}


def _pin() -> Any:
    """An optional BCM GPIO number (absent: not fitted)."""
    return field(default=None, metadata={"pins": True})


@dataclass(frozen=True)
class BoardConfig:
    backend: str = field(default="emulator", metadata=_choices(*BACKENDS))
    profile: str = field(default="fide", metadata=_choices(*PROFILES))


@dataclass(frozen=True)
class SerialConfig:
    port: str = "/dev/chessboard"
    baudrate: int = field(default=115200, metadata=_range(1200))
    connect_timeout: float = field(default=10.0, metadata=_range(0.1))
    lost_timeout: float = field(default=3.0, metadata=_range(0.1))


@dataclass(frozen=True)
class EmulatorConfig:
    log: str = ""  # empty: the built-in demo game
    speed: float = field(default=4.0, metadata=_range(0.01, 1000.0))
    # With [opponent]: how the emulator chooses the person's moves (random legal moves,
    # or the engine at its weakest) and the seed of its choices and hands ("": random).
    player: str = field(default="random", metadata=_choices(*PLAYERS))
    seed: int | None = None


@dataclass(frozen=True)
class ButtonPins:
    promote_q: int | None = _pin()
    promote_r: int | None = _pin()
    promote_b: int | None = _pin()
    promote_n: int | None = _pin()
    draw_offer_white: int | None = _pin()
    draw_offer_black: int | None = _pin()
    draw_accept_white: int | None = _pin()
    draw_accept_black: int | None = _pin()
    claim_white: int | None = _pin()
    claim_black: int | None = _pin()
    resign_white: int | None = _pin()
    resign_black: int | None = _pin()
    arbiter: int | None = _pin()
    takeback: int | None = _pin()
    hint: int | None = _pin()


@dataclass(frozen=True)
class GpioConfig:
    rows: tuple[int, ...] = field(default=(4, 17, 27, 22, 5, 6, 13, 19),
                                  metadata={"length": 8, "pins": True})
    cols: tuple[int, ...] = field(default=(26, 18, 23, 24, 25, 12, 16, 20),
                                  metadata={"length": 8, "pins": True})
    scan_hz: int = field(default=100, metadata=_range(10, 1000))
    debounce: int = field(default=3, metadata=_range(1, 50))
    settle_us: int = field(default=30, metadata=_range(0, 10000))
    clock_white: int | None = _pin()
    clock_black: int | None = _pin()
    buttons: ButtonPins = field(default_factory=ButtonPins)


@dataclass(frozen=True)
class StatusConfig:
    white_to_move: int | None = _pin()
    black_to_move: int | None = _pin()
    alert: int | None = _pin()
    game_over: int | None = _pin()
    buzzer: int | None = _pin()
    # Playing a computer: its LED (thinking, its move shown, a hint), and the piece its
    # shown move promotes to (beside the promotion selector's buttons).
    computer: int | None = _pin()
    promote_q: int | None = _pin()
    promote_r: int | None = _pin()
    promote_b: int | None = _pin()
    promote_n: int | None = _pin()
    active_high: bool = True

    @property
    def any(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self)
                   if f.name != "active_high")


@dataclass(frozen=True)
class GameConfig:
    fen: str = ""  # empty: the standard starting position
    event: str = ""
    site: str = ""
    white: str = ""
    black: str = ""
    round: str = ""
    time_control: str = ""  # PGN TimeControl ("5400+30", "300d5", "40/5400+30:1800+30")

    def tags(self) -> dict[str, str]:
        names = {"event": "Event", "site": "Site", "white": "White", "black": "Black",
                 "round": "Round"}
        return {tag: getattr(self, key) for key, tag in names.items() if getattr(self, key)}

    @property
    def start_fen(self) -> str:
        return chess.Board(self.fen).fen() if self.fen else chess.STARTING_FEN


@dataclass(frozen=True)
class OutputConfig:
    dir: str = "games"
    data_dir: str = ""  # the archive (journals); "": archive.default_data_dir()


@dataclass(frozen=True)
class DisplayConfig:
    view: str = field(default="auto", metadata=_choices(*VIEWS))


@dataclass(frozen=True)
class OpponentConfig:
    """A computer as one of the players (board-ctl run --opponent)."""

    engine: str = ""  # "": two players at the board; else a UCI engine's name or path
    side: str = field(default="black", metadata=_choices(*ENGINE_SIDES))  # the engine's
    level: int | None = field(default=None, metadata=_range(0, 20))  # UCI Skill Level
    elo: int | None = field(default=None, metadata=_range(100, 4000))  # UCI_Elo
    movetime: float | None = field(default=None, metadata=_range(0.01, 3600.0))  # s a move
    book: str = ""  # a Polyglot opening book


@dataclass(frozen=True)
class LiveChessConfig:
    listen: str = ""  # "": off; HOST:PORT serves LiveChess clients (board-ctl run --livechess)
    serialnr: str = ""  # "": a stable number made from the host name and the board's port
    origins: tuple[str, ...] = ("https://lichess.org", "https://www.chess.com",
                                "https://chess.com")


@dataclass(frozen=True)
class Config:
    board: BoardConfig = field(default_factory=BoardConfig)
    serial: SerialConfig = field(default_factory=SerialConfig)
    emulator: EmulatorConfig = field(default_factory=EmulatorConfig)
    gpio: GpioConfig = field(default_factory=GpioConfig)
    status: StatusConfig = field(default_factory=StatusConfig)
    game: GameConfig = field(default_factory=GameConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    opponent: OpponentConfig = field(default_factory=OpponentConfig)
    livechess: LiveChessConfig = field(default_factory=LiveChessConfig)
    source: str = field(default="", metadata={"internal": True})  # the file it came from

    def with_overrides(self, **sections: Mapping[str, Any]) -> Config:
        """A copy with some keys replaced (command-line options), validated like the file."""
        raw = {name: {key: value for key, value in values.items() if value is not None}
               for name, values in sections.items()}
        merged = self
        for name, values in raw.items():
            if values:
                section = getattr(self, name)
                checked = _section(type(section), values, name, base=section)
                merged = replace(merged, **{name: checked})
        _check_cross(merged)
        return merged


# ---------------------------------------------------------------- loading


def load_config(path: str | Path | None) -> Config:
    """The configuration in `path`, or the defaults when path is None."""
    if path is None:
        return Config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    return parse_config(text, str(path))


def parse_config(text: str, source: str = "<config>") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    try:
        config: Config = _section(Config, data, "")
        _check_cross(config)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return replace(config, source=source)


def _section(cls: type, data: Any, path: str, base: Any = None) -> Any:
    where = path or "the config file"
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a table ([{path}]), got {_show(data)}")
    known = {f.name: f for f in fields(cls) if not f.metadata.get("internal")}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"unknown key {_join(path, key)} in {where} "
                f"(known: {', '.join(known)})")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _join(path, key)
        spec = known[key]
        kind = hints[key]
        if isinstance(kind, type) and hasattr(kind, "__dataclass_fields__"):
            values[key] = _section(kind, value, name,
                                   base=getattr(base, key) if base is not None else None)
        else:
            values[key] = _value(kind, value, name, spec.metadata)
    if base is not None:
        return replace(base, **values)
    return cls(**values)


def _value(kind: Any, value: Any, name: str, meta: Mapping[str, Any]) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        (inner,) = args
        return _value(inner, value, name, meta)
    if origin is tuple:
        if not isinstance(value, list):
            raise ConfigError(f"{name} must be a list, got {_show(value)}")
        length = meta.get("length")
        if length is not None and len(value) != length:
            raise ConfigError(f"{name} must list {length} values, got {len(value)}")
        (inner, _) = typing.get_args(kind)
        return tuple(_value(inner, item, f"{name}[{i}]", meta) for i, item in enumerate(value))
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{name} must be true or false, got {_show(value)}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name} must be an integer, got {_show(value)}")
        if meta.get("pins") and not 0 <= value <= MAX_BCM_PIN:
            raise ConfigError(f"{name} must be a BCM GPIO number 0-{MAX_BCM_PIN}, got {value}")
        _check_range(value, name, meta)
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{name} must be a number, got {_show(value)}")
        if not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number, got {value}")
        _check_range(value, name, meta)
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string, got {_show(value)}")
        choices = meta.get("choices")
        if choices is not None and value not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        return value
    raise TypeError(f"config type {kind!r} of {name} is not supported")  # a bug here


def _check_range(value: float, name: str, meta: Mapping[str, Any]) -> None:
    low, high = meta.get("min"), meta.get("max")
    if low is not None and value < low:
        raise ConfigError(f"{name} must be at least {low:g}, got {value:g}")
    if high is not None and value > high:
        raise ConfigError(f"{name} must be at most {high:g}, got {value:g}")


def _check_cross(config: Config) -> None:
    """Checks that need several keys: the FEN, and no GPIO pin used twice."""
    if config.game.fen:
        try:
            board = chess.Board(config.game.fen)
        except ValueError as exc:
            raise ConfigError(f"game.fen is not a FEN: {exc}") from None
        if not board.is_valid():
            raise ConfigError(f"game.fen is not a legal position ({board.status()!r})")
    if config.game.time_control:
        try:
            TimeControl.parse(config.game.time_control)
        except ValueError as exc:
            raise ConfigError(f"game.time_control: {exc}") from None
    opponent = config.opponent
    if opponent.engine and opponent.level is not None and opponent.elo is not None:
        raise ConfigError("opponent.level and opponent.elo both set: choose one")
    if opponent.engine and config.board.backend == "emulator" and config.emulator.log:
        raise ConfigError("emulator.log with opponent.engine: the emulator plays the "
                          "person's side itself; leave emulator.log empty")
    if opponent.book and not Path(opponent.book).expanduser().is_file():
        raise ConfigError(f"opponent.book: no such file {opponent.book}")
    if config.livechess.listen:
        parse_listen(config.livechess.listen)  # a ConfigError naming livechess.listen
    used: dict[int, str] = {}
    for name, pin in pin_assignments(config):
        if pin in used:
            raise ConfigError(f"{name} uses GPIO{pin}, already used by {used[pin]}")
        used[pin] = name


def pin_assignments(config: Config) -> list[tuple[str, int]]:
    """(key, BCM pin) of every pin the configured backend and outputs will use."""
    out: list[tuple[str, int]] = []
    status = config.status
    for f in fields(status):
        value = getattr(status, f.name)
        if f.name != "active_high" and value is not None:
            out.append((f"status.{f.name}", value))
    if config.board.backend == "gpio":
        gpio = config.gpio
        out += [(f"gpio.rows[{i}]", pin) for i, pin in enumerate(gpio.rows)]
        out += [(f"gpio.cols[{i}]", pin) for i, pin in enumerate(gpio.cols)]
        for key in ("clock_white", "clock_black"):
            if getattr(gpio, key) is not None:
                out.append((f"gpio.{key}", getattr(gpio, key)))
        for f in fields(gpio.buttons):
            value = getattr(gpio.buttons, f.name)
            if value is not None:
                out.append((f"gpio.buttons.{f.name}", value))
    return out


def all_keys(cls: type = Config, path: str = "") -> list[str]:
    """Every documented key, dotted (for the example file's test)."""
    keys: list[str] = []
    hints = typing.get_type_hints(cls)
    for f in fields(cls):
        if f.metadata.get("internal"):
            continue
        kind = hints[f.name]
        name = _join(path, f.name)
        if isinstance(kind, type) and hasattr(kind, "__dataclass_fields__"):
            keys += all_keys(kind, name)
        else:
            keys.append(name)
    return keys


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
