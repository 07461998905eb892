"""The service's configuration: a TOML file read with `tomllib` into frozen dataclasses.

Every key is checked at start-up and a bad one is a `ConfigError` naming it
(``board.backend must be one of serial, gpio, emulator, got 'x'``); unknown keys and
sections are errors too, so a typo never silently falls back to a default. Nothing
configured at all is valid: the service then plays the built-in demo game through the
board emulator. `config/board.example.toml` documents every key.
"""

from __future__ import annotations

import math
import os
import stat
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from board_ctl.core.profiles import PROFILES
from board_ctl.errors import BoardCtlError, ConfigError
from board_ctl.livechess.address import parse_listen
from board_ctl.printable import quoted

BACKENDS = ("serial", "gpio", "emulator")
ENGINE_SIDES = ("white", "black", "random")
PLAYERS = ("random", "engine")
VIEWS = ("auto", "rich", "plain", "none")
MAX_BCM_PIN = 27  # GPIO0-27 on the 40-pin header
MAX_CONFIG_BYTES = 1 << 20  # a config is a few kB; more is not a config (or /dev/zero)


def _choices(*names: str) -> dict[str, Any]:
    return {"choices": names}


def _range(low: float | None = None, high: float | None = None) -> dict[str, Any]:
    return {"min": low, "max": high}


def _pin() -> Any:
    """An optional BCM GPIO number (absent: not fitted)."""
    return field(default=None, metadata={"pins": True})


def _checked(default: str, check: Callable[[str], object]) -> Any:
    """A string key whose value `check` vets (ValueError says what is wrong)."""
    return field(default=default, metadata={"check": check})


def _check_port(port: str) -> None:
    """A device path or a URL pyserial can open: an unknown scheme would only fail
    when the service tries to connect (and then again and again)."""
    if not port.strip():
        raise ValueError("must name the board's port (a device such as /dev/chessboard, "
                         "or a pyserial URL), not be empty")
    if "://" in port:
        scheme = port.split("://", 1)[0]
        known = pyserial_url_schemes()
        if scheme not in known:
            raise ValueError(f"{quoted(port)} is not a port: pyserial opens no {scheme}:// "
                             f"URL (it knows {', '.join(s + '://' for s in known)})")


def pyserial_url_schemes() -> list[str]:
    """The URL schemes of pyserial's serial_for_url (socket, rfc2217, loop ...)."""
    import pkgutil

    import serial.urlhandler

    return sorted(m.name[len("protocol_"):] for m in pkgutil.iter_modules(
        serial.urlhandler.__path__) if m.name.startswith("protocol_"))


def _check_fen(fen: str) -> None:
    if not fen:
        return
    import chess

    try:
        board = chess.Board(fen)
    except ValueError as exc:
        raise ValueError(f"{quoted(fen)} is not a FEN: {exc}") from None
    if not board.is_valid():
        raise ValueError(f"{quoted(fen)} is not a legal position ({board.status()!r})")


def _check_time_control(text: str) -> None:
    if text:
        from board_ctl.sensorlog import parse_time_control

        parse_time_control(text)


def _tag(name: str) -> Any:
    """A PGN tag's value (empty: left out), checked as every tag is (board_ctl.pgntags)."""

    def check(value: str) -> None:
        if value:
            from board_ctl.pgntags import check_value

            check_value(name, value)

    return _checked("", check)


@dataclass(frozen=True)
class BoardConfig:
    backend: str = field(default="emulator", metadata=_choices(*BACKENDS))
    profile: str = field(default="fide", metadata=_choices(*PROFILES))


@dataclass(frozen=True)
class SerialConfig:
    port: str = _checked("/dev/chessboard", _check_port)
    # 4 Mbaud is the fastest rate Linux's termios names; USB CDC ignores the rate
    baudrate: int = field(default=115200, metadata=_range(1200, 4_000_000))
    connect_timeout: float = field(default=10.0, metadata=_range(0.1, 86400.0))
    lost_timeout: float = field(default=3.0, metadata=_range(0.1, 86400.0))


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
    fen: str = _checked("", _check_fen)  # empty: the standard starting position
    event: str = _tag("Event")
    site: str = _tag("Site")
    white: str = _tag("White")
    black: str = _tag("Black")
    round: str = _tag("Round")
    # PGN TimeControl ("5400+30", "300d5", "40/5400+30:1800+30")
    time_control: str = _checked("", _check_time_control)
    # s: the side to move at the start, not come to the board by then, loses (None: off)
    default_time: float | None = field(default=None, metadata=_range(1.0, 86400.0))

    def tags(self) -> dict[str, str]:
        names = {"event": "Event", "site": "Site", "white": "White", "black": "Black",
                 "round": "Round"}
        return {tag: getattr(self, key) for key, tag in names.items() if getattr(self, key)}

    @property
    def start_fen(self) -> str:
        import chess

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
class MqttConfig:
    """Publishing to the hall's broker (board_ctl.hall); url "": not published."""

    url: str = ""  # mqtt://HOST[:PORT] or mqtts://HOST[:PORT]
    board_id: str = ""
    username: str = ""  # "": the board id
    password_file: str = ""
    topic_prefix: str = "board-ctl"
    ca_file: str = ""  # mqtts: the CA that signed the broker's certificate ("": the system's)
    event: str = ""  # the hall's tags for this board's games (over [game]'s)
    site: str = ""
    round: str = ""
    board_no: int = field(default=0, metadata=_range(0))  # 0: none

    def tags(self) -> dict[str, str]:
        tags = {tag: getattr(self, key) for key, tag in
                (("event", "Event"), ("site", "Site"), ("round", "Round")) if getattr(self, key)}
        if self.board_no:
            tags["Board"] = str(self.board_no)
        return tags


@dataclass(frozen=True)
class LiveChessConfig:
    listen: str = ""  # "": off; HOST:PORT serves LiveChess clients (board-ctl run --livechess)
    serialnr: str = ""  # "": a stable number made from the host name and the board's port
    origins: tuple[str, ...] = ("https://lichess.org", "https://www.chess.com",
                                "https://chess.com")
    # connections open at once (more are refused, HTTP 503), subscriptions per connection
    max_connections: int = field(default=16, metadata=_range(1, 1000))
    max_subscriptions: int = field(default=8, metadata=_range(1, 1000))


def _check_app_port(port: str) -> None:
    """An app port: "" (off), a serial device's path, or pty:LINK."""
    if not port:
        return
    if port.startswith("pty:"):
        if not port[4:].strip():
            raise ValueError("pty: must name the link to make, as pty:/tmp/dgt-board")
        return
    if "://" in port:
        raise ValueError(f"{quoted(port)} is a URL: an app port is a serial device (such as "
                         f"/dev/ttyGS0 or /dev/rfcomm0) or pty:LINK")


def _check_serialnr(serialnr: str) -> None:
    if serialnr and not (serialnr.isascii() and serialnr.isdigit() and 5 <= len(serialnr) <= 10):
        raise ValueError(f"must be 5 to 10 digits, got {quoted(serialnr)}")


@dataclass(frozen=True)
class DgtConfig:
    port: str = _checked("", _check_app_port)  # "": off; a serial device or pty:LINK
    serialnr: str = _checked("", _check_serialnr)  # "": a stable number from host and port


@dataclass(frozen=True)
class ChessLinkConfig:
    port: str = _checked("", _check_app_port)
    parity_bit: bool = True  # the odd-parity bit set on each byte sent (a 7O1 line at 8 bits)


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
    mqtt: MqttConfig = field(default_factory=MqttConfig)
    livechess: LiveChessConfig = field(default_factory=LiveChessConfig)
    dgt: DgtConfig = field(default_factory=DgtConfig)
    chesslink: ChessLinkConfig = field(default_factory=ChessLinkConfig)
    source: str = field(default="", metadata={"internal": True})  # the file it came from

    def with_overrides(self, labels: Mapping[str, str] | None = None,
                       **sections: Mapping[str, Any]) -> Config:
        """A copy with some keys replaced (command-line options), validated like the file.

        `labels` names where a key's value came from ({"game.time_control":
        "--time-control"}): a bad value is reported under that name, not the key's."""
        raw = {name: {key: value for key, value in values.items() if value is not None}
               for name, values in sections.items()}
        merged = self
        labels = labels or {}
        for name, values in raw.items():
            if values:
                section = getattr(self, name)
                checked = _section(type(section), values, name, base=section, labels=labels)
                merged = replace(merged, **{name: checked})
        given = [f"{name}.{key}" for name, values in raw.items() for key in values]
        try:
            _check_cross(merged)
        except ConfigError as exc:  # a check of several keys: named as the option, if one
            message = str(exc)
            for key in given:
                if key in labels and message.startswith((f"{key}:", f"{key} ")):
                    raise ConfigError(labels[key] + message[len(key):]) from None
            raise
        return merged


# ---------------------------------------------------------------- loading


def load_config(path: str | Path | None) -> Config:
    """The configuration in `path`, or the defaults when path is None."""
    if path is None:
        return Config()
    return parse_config(read_config_text(Path(path)), str(path))


def read_config_text(path: Path) -> str:
    """The text of a config file: a regular file (or a pipe) of at most
    MAX_CONFIG_BYTES of UTF-8 (a byte-order mark is allowed). ConfigError otherwise:
    a device such as /dev/zero would be read forever, a terminal would wait for input."""
    try:
        with path.open("rb") as stream:
            mode = os.fstat(stream.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                raise ConfigError(f"config file {path} is not a regular file")
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES >> 10} kB: "
                          "not a board-ctl config")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {exc.start})") from None


def parse_config(text: str, source: str = "<config>") -> Config:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{source}: not valid TOML: nested too deeply") from None
    try:
        config: Config = _section(Config, data, "")
        _check_cross(config)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return replace(config, source=source)


def _section(cls: type, data: Any, path: str, base: Any = None,
             labels: Mapping[str, str] | None = None) -> Any:
    where = path or "the config file"
    labels = labels or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a table ([{path}]), got {_show(data)}")
    known = {f.name: f for f in fields(cls) if not f.metadata.get("internal")}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"unknown key {_join(path, quoted(key) if not key.isidentifier() else key)} "
                f"in {where} (known: {', '.join(known)})")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _join(path, key)
        spec = known[key]
        kind = hints[key]
        if isinstance(kind, type) and hasattr(kind, "__dataclass_fields__"):
            values[key] = _section(kind, value, name,
                                   base=getattr(base, key) if base is not None else None,
                                   labels=labels)
        else:
            values[key] = _value(kind, value, labels.get(name, name), spec.metadata)
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
            raise ConfigError(f"{name} must be a BCM GPIO number 0-{MAX_BCM_PIN}, "
                              f"got {_show(value)}")
        _check_range(value, name, meta)
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{name} must be a number, got {_show(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number, got {value}")
        _check_range(value, name, meta)  # before float(): an integer may be huge
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{name} must be a string, got {_show(value)}")
        choices = meta.get("choices")
        if choices is not None and value not in choices:
            raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {quoted(value)}")
        check = meta.get("check")
        if check is not None:
            try:
                check(value)
            except (ValueError, BoardCtlError) as exc:  # TagError, TimeControlError ...
                raise ConfigError(f"{name}: {exc}") from None
        return value
    raise TypeError(f"config type {kind!r} of {name} is not supported")  # a bug here


def _check_range(value: float, name: str, meta: Mapping[str, Any]) -> None:
    low, high = meta.get("min"), meta.get("max")
    if low is not None and value < low:
        raise ConfigError(f"{name} must be at least {_show(low)}, got {_show(value)}")
    if high is not None and value > high:
        raise ConfigError(f"{name} must be at most {_show(high)}, got {_show(value)}")


def _check_cross(config: Config) -> None:
    """Checks that need several keys (or a file): the emulator's log, the opponent, the
    MQTT board id, the LiveChess address, no port used twice, no GPIO pin used twice."""
    opponent = config.opponent
    if opponent.engine and opponent.level is not None and opponent.elo is not None:
        raise ConfigError("opponent.level and opponent.elo both set: choose one")
    if opponent.engine and config.board.backend == "emulator" and config.emulator.log:
        raise ConfigError("emulator.log with opponent.engine: the emulator plays the "
                          "person's side itself; leave emulator.log empty")
    if opponent.book and not Path(opponent.book).expanduser().is_file():
        raise ConfigError(f"opponent.book: no such file {opponent.book}")
    if config.board.backend == "emulator" and config.emulator.log:
        _check_emulator_log(config.emulator.log)
    if config.mqtt.url:
        from board_ctl.hall.settings import check_board_id, check_prefix, check_url

        check_url(config.mqtt.url)
        check_board_id(config.mqtt.board_id)  # (the password file is read at start)
        check_prefix(config.mqtt.topic_prefix)
    if config.livechess.listen:
        parse_listen(config.livechess.listen)  # a ConfigError naming livechess.listen
    app_ports = [("dgt.port", config.dgt.port), ("chesslink.port", config.chesslink.port)]
    if config.board.backend == "serial":
        app_ports.insert(0, ("serial.port", config.serial.port))
    seen: dict[str, str] = {}
    for key, port in app_ports:
        if port and port in seen:
            raise ConfigError(f"{key} is {quoted(port)}, already used by {seen[port]}")
        seen[port] = key
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


def _check_emulator_log(log: str) -> None:
    """The log the emulator will play can be read and starts from a playable position."""
    from board_ctl.errors import SensorLogError
    from board_ctl.sensorlog import read_start

    try:
        read_start(Path(log).expanduser())
    except SensorLogError as exc:
        where = f"{log}:" if exc.line is not None else ""
        raise ConfigError(f"emulator.log: {where}{exc}") from None


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) >= 10**15:
        return f"a number of {len(str(abs(value)))} digits"
    if isinstance(value, float):
        return f"{value:g}"
    return quoted(value)


def describe_config(config: Config) -> list[str]:
    """What a checked config sets up, one line an item (`board-ctl config check`)."""
    board = config.board
    if board.backend == "serial":
        where = (f"the board on {config.serial.port} at {config.serial.baudrate} baud "
                 f"(given up on after {config.serial.connect_timeout:g} s without an answer)")
    elif board.backend == "emulator":
        where = (f"the board emulator playing {config.emulator.log or 'the built-in demo game'}"
                 f" at {config.emulator.speed:g}x")
    else:
        where = (f"a reed-switch matrix on this Pi's GPIO (rows {list(config.gpio.rows)}, "
                 f"columns {list(config.gpio.cols)}, {config.gpio.scan_hz} scans/s)")
    game = config.game
    tags = ", ".join(f"{tag} {quoted(value)}" for tag, value in game.tags().items())
    pins = pin_assignments(config)
    lines = [
        f"board: {where}; rule profile {board.profile}",
        f"game: {'from ' + quoted(game.fen) if game.fen else 'the standard start position'}; "
        f"clock {game.time_control or 'without a time control'}; "
        f"PGN tags {tags or 'none set'}",
        f"GPIO pins: {len(pins)} used, none twice" if pins else "GPIO pins: none used",
        f"output: games in {config.output.dir or '.'}, archive in "
        f"{config.output.data_dir or 'the default data directory'}; view {config.display.view}",
        *(f"apps: {name} on {port}" for name, port in (
            ("the DGT board protocol", config.dgt.port),
            ("Millennium ChessLink", config.chesslink.port)) if port),
        "checked: every key's name, type and range, the FEN, the time control, the PGN "
        "tags" + (", the port's name" if board.backend == "serial" else "")
        + (", the emulator's log" if board.backend == "emulator" and config.emulator.log
           else "") + ", no pin used twice; nothing was opened or started",
    ]
    return lines
