"""`board-ctl run`: the service on the board, from the command line or systemd.

    board-ctl run [--config FILE] [--port PATH_OR_URL] [--profile P] [--time-control TC] [--pgn OUT]
                  [--report OUT] [--once] [--speed N] [--view auto|rich|plain|none]
                  [--data-dir DIR] [--livechess [ADDR]] [--opponent [ENGINE]]
                  [--engine-side SIDE] [--level N] [--movetime S] [--require-board]
                  [--dgt PORT] [--chesslink PORT]

Every game is archived in the data directory with its crash-safe journal; a game left
unfinished there (the service was killed, the power went) is resumed at start-up.

With nothing configured it plays the built-in demo game through the board emulator on a
real pty. Expected failures (a bad config, no board, a pin that cannot be used) are one
line on stderr and a non-zero exit: 2 for the configuration, 1 for the rest; 3 with
--once when the engine has given up (the game saved unfinished); 128 + the signal for a
Ctrl-C or SIGTERM that stops the start.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from board_ctl.core.profiles import PROFILES
from board_ctl.errors import BoardCtlError, ConfigError
from board_ctl.livechess.address import DEFAULT_LISTEN

if TYPE_CHECKING:  # imported when the service runs: `board-ctl --help` stays quick
    from board_ctl.archive import Archive
    from board_ctl.config import Config
    from board_ctl.opponent.opponent import Opponent
    from board_ctl.service.service import Service
    from board_ctl.service.view import View

CONFIG_ENV = "BOARD_CTL_CONFIG"
VIEW_HELP = ("terminal view: rich (a live board), plain (one line per move and alert), "
             "none; auto (the default) picks rich on a terminal, plain otherwise")
# Where a config key's value came from on the command line, to name it in a message.
OPTION_OF_KEY = {"board.profile": "--profile", "board.backend": "--port",
                 "serial.port": "--port", "emulator.log": "--port",
                 "emulator.speed": "--speed", "game.time_control": "--time-control",
                 "display.view": "--view", "output.data_dir": "--data-dir",
                 "livechess.listen": "--livechess", "mqtt.url": "--mqtt",
                 "mqtt.board_id": "--board-id", "opponent.engine": "--opponent",
                 "opponent.side": "--engine-side", "opponent.level": "--level",
                 "opponent.movetime": "--movetime", "dgt.port": "--dgt",
                 "chesslink.port": "--chesslink"}


def add_parser(subparsers: Any) -> None:
    run = subparsers.add_parser(
        "run", help="run the board: moves, alerts, LEDs and PGN, live",
        description="Run the service on the board. With nothing configured, plays the "
                    "built-in demo game through the board emulator. Exit status: 0 done; "
                    "1 the board or a pin cannot be used, or the service failed; 2 a bad "
                    "option or config (one line naming it); 3 with --once, the engine "
                    "gave up (the game is saved unfinished); 130 or 143 a Ctrl-C or "
                    "SIGTERM before the board was running.")
    run.add_argument("--config", type=Path, metavar="FILE",
                     help=f"TOML config file (default: ${CONFIG_ENV}, else built-in defaults; "
                          f"see config/board.example.toml)")
    run.add_argument("--port", metavar="PATH_OR_URL",
                     help="the board: a serial port or any pyserial URL (serial backend), "
                          "emulator://[LOG] (the board emulator playing LOG, default the "
                          "demo game) or gpio:// (a matrix on this Pi's pins)")
    run.add_argument("--profile", choices=sorted(PROFILES), help="rule profile")
    run.add_argument("--time-control", metavar="TC",
                     help="the clock's time control in PGN form (5400+30, 300d5, "
                          "40/5400+30:1800+30; default: [game] time_control, else the "
                          "emulator log's, else none)")
    run.add_argument("--pgn", type=Path, metavar="OUT",
                     help="write the game's PGN here; its sensor log and report go beside "
                          "it (game.pgn: game.sensor.jsonl, game.report.jsonl); a "
                          "second game gets game-2.pgn")
    run.add_argument("--report", type=Path, metavar="OUT",
                     help="write the game report (JSON Lines) here (default: beside the PGN)")
    run.add_argument("--once", action="store_true",
                     help="stop when the game ends or the board has nothing more to report")
    run.add_argument("--speed", type=float, metavar="N",
                     help="emulator backend: play its log N times faster; serial backend: "
                          "the board's clock runs N times faster than the game (a "
                          "board-emulator --speed N; it says so itself, so rarely needed)")
    run.add_argument("--view", choices=("auto", "rich", "plain", "none"), help=VIEW_HELP)
    run.add_argument("--data-dir", metavar="DIR",
                     help="the archive: a folder and a crash-safe journal for every game; an "
                          "unfinished game there is resumed at start-up (default: [output] "
                          "data_dir, else {data_dir})")
    run.add_argument("--mqtt", metavar="URL",
                     help="publish the games to the hall's MQTT broker, mqtt://HOST[:PORT] or "
                          "mqtts://HOST[:PORT] (default: [mqtt] url); see docs/mqtt.md")
    run.add_argument("--board-id", metavar="ID",
                     help="this board's id on the broker (default: [mqtt] board_id)")
    run.add_argument("--opponent", nargs="?", const="stockfish", metavar="ENGINE",
                     help="play a computer: a UCI engine (a name on PATH or in /usr/games, or "
                          "a path; default stockfish) plays one side, its moves lit on the "
                          "board for you to make; with the emulator backend, the emulator "
                          "plays your side (default: [opponent] engine)")
    run.add_argument("--engine-side", choices=("white", "black", "random"),
                     help="the side the engine plays (default: [opponent] side, else black)")
    run.add_argument("--level", type=int, metavar="N",
                     help="the engine's strength, 0-20 (UCI Skill Level; default: full)")
    run.add_argument("--movetime", type=float, metavar="S",
                     help="seconds the engine takes a move (default: its clock with a time "
                          "control, else 1)")
    run.add_argument("--require-board", action="store_true",
                     help="refuse the board emulator (the demo game): a configuration "
                          "left unedited is an error (exit status 2), not a demo played "
                          "as a service (the systemd unit runs with it)")
    run.add_argument("--livechess", nargs="?", const=DEFAULT_LISTEN, metavar="ADDR",
                     help="serve LiveChess clients (lichess.org/dgt, chess.com) on ADDR "
                          f"(default {DEFAULT_LISTEN}; else [livechess] listen)")
    run.add_argument("--dgt", metavar="PORT",
                     help="answer the DGT board protocol on PORT (chess programs that use a "
                          "DGT board): a serial device such as the USB gadget's /dev/ttyGS0 "
                          "or /dev/rfcomm0, or pty:LINK (default: [dgt] port); see "
                          "docs/apps.md")
    run.add_argument("--chesslink", metavar="PORT",
                     help="answer Millennium ChessLink on PORT, as --dgt (default: "
                          "[chesslink] port)")
    run.set_defaults(func=run_command)


def run_command(args: argparse.Namespace) -> int:
    from board_ctl.service.view import make_view

    try:
        config = _config(args)
        _check_board(config, args)
    except ConfigError as exc:
        print(f"board-ctl run: {exc}", file=sys.stderr)
        return 2
    view = make_view(config.display.view)
    _route_logging(view)
    service: Service | None = None
    signals = _signals()
    try:
        with signals:  # from the start: a signal while the engine starts ends it too
            service = _service(config, args, view)
            signals.service = service
            gc.freeze()  # what start-up made lives on: keep it out of the collector's scans
            code = service.run()
    except _Interrupted as exc:
        view.close()
        print(f"board-ctl run: {exc}", file=sys.stderr)
        return 128 + exc.signum
    except ConfigError as exc:
        view.close()
        print(f"board-ctl run: {exc}", file=sys.stderr)
        return 2
    except (BoardCtlError, OSError) as exc:
        view.close()
        print(f"board-ctl run: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        view.close()
        print("board-ctl run: interrupted", file=sys.stderr)
        return 130
    view.close()
    if service.error:
        print(f"board-ctl run: {service.error}", file=sys.stderr)
    return code


def _check_board(config: Config, args: argparse.Namespace) -> None:
    """The emulator where a real board is expected: refused with --require-board, said
    under systemd (a unit of one's own without the option) so that a demo does not pass
    for the board."""
    if config.board.backend != "emulator":
        return
    path = args.config or os.environ.get(CONFIG_ENV)
    where = f"in {path}" if path else "the default: no config file given"
    if args.require_board:
        raise ConfigError(
            f'board.backend is "emulator" (the built-in demo game; {where}), but '
            f'--require-board asks for a real board: set [board] backend = "serial" (a '
            f'Pico on USB, as config/board.pi.toml) or "gpio" (docs/install.md)')
    if os.environ.get("INVOCATION_ID"):  # set by systemd for every service it starts
        logging.getLogger(__name__).warning(
            'running under systemd with board.backend "emulator" (%s): this plays the '
            'demo game, not a board; set [board] backend = "serial" or "gpio" '
            '(docs/install.md)', where)


def _config(args: argparse.Namespace) -> Config:
    from board_ctl.config import load_config

    path = args.config or os.environ.get(CONFIG_ENV) or None
    config = load_config(path)
    board: dict[str, Any] = {"profile": args.profile}
    serial: dict[str, Any] = {}
    emulator: dict[str, Any] = {"speed": args.speed}
    port = args.port
    if port:  # by URL, as pyserial's serial_for_url: emulator://[LOG], gpio://, else serial
        if port.startswith("emulator://"):
            board["backend"] = "emulator"
            emulator["log"] = port[len("emulator://"):] or None
        elif port.startswith("gpio://"):
            board["backend"] = "gpio"
        else:
            board["backend"] = "serial"
            serial["port"] = port
    game = {"time_control": args.time_control}
    opponent = {"engine": args.opponent, "side": args.engine_side, "level": args.level,
                "movetime": args.movetime}
    return config.with_overrides(OPTION_OF_KEY, board=board, serial=serial,
                                 emulator=emulator, game=game, display={"view": args.view},
                                 output={"data_dir": args.data_dir},
                                 mqtt={"url": getattr(args, "mqtt", None),
                                       "board_id": getattr(args, "board_id", None)},
                                 livechess={"listen": args.livechess}, opponent=opponent,
                                 dgt={"port": getattr(args, "dgt", None)},
                                 chesslink={"port": getattr(args, "chesslink", None)})


def _service(config: Config, args: argparse.Namespace, view: View) -> Service:
    try:  # first: a missing engine is said before anything starts
        opponent = _opponent(config)
    except BoardCtlError as exc:  # named as the user gave it: the option, else the key
        key = "opponent.engine"
        if getattr(args, "opponent", None) and str(exc).startswith(f"{key}:"):
            raise type(exc)(OPTION_OF_KEY[key] + str(exc)[len(key):]) from None
        raise
    try:
        return _start_service(config, args, view, opponent)
    except BaseException:
        if opponent is not None:
            opponent.close()
        raise


def _opponent(config: Config) -> Opponent | None:
    settings = config.opponent
    if not settings.engine:
        return None
    from board_ctl.opponent.engine import EngineSettings
    from board_ctl.opponent.opponent import Opponent, OpponentSettings

    engine = EngineSettings(engine=settings.engine, level=settings.level, elo=settings.elo,
                            book=settings.book)
    opponent = Opponent(OpponentSettings(engine, settings.side, settings.movetime))
    opponent.start()
    return opponent


def _start_service(config: Config, args: argparse.Namespace, view: View,
                   opponent: Opponent | None) -> Service:
    from board_ctl.archive import Archive, default_data_dir
    from board_ctl.apps.run import ports_from_config
    from board_ctl.livechess.run import endpoint_from_config
    from board_ctl.sensorlog import StartInfo
    from board_ctl.service.backends import open_board
    from board_ctl.service.game import OutputNamer
    from board_ctl.service.sdnotify import Notifier
    from board_ctl.service.service import RunOptions, Service
    from board_ctl.service.statuslights import StatusOutputs

    status = StatusOutputs(config.status)
    board = open_board(config, time_scale=args.speed if config.board.backend == "serial"
                       else None, games=1 if args.once else 0)
    time_control = config.game.time_control or None
    tags = {**config.game.tags(), **config.mqtt.tags()}
    start = StartInfo(fen=config.game.start_fen, tags=tags, time_control=time_control,
                      default_time=config.game.default_time)
    log_start = getattr(board, "start_info", None)
    if log_start is not None:  # the emulator's log says where its game starts
        found = log_start()
        start = StartInfo(fen=config.game.start_fen if config.game.fen else found.fen,
                          tags={**found.tags, **tags},
                          time_control=time_control or found.time_control,
                          default_time=config.game.default_time)
    if config.livechess.listen or config.dgt.port or config.chesslink.port:
        # The players' opponent is online (or an app: a program's engine, a web page): the person makes both sides' moves, each only
        # once the page has shown the last one, so without a clock a move released is
        # complete (with a clock, the press completes it as ever).
        start = replace(start, release_completes=True)
    namer = OutputNamer(Path(config.output.dir).expanduser(), args.pgn, args.report)
    options = RunOptions(once=args.once, lost_timeout=config.serial.lost_timeout)
    data_dir = config.output.data_dir
    archive = Archive(Path(data_dir).expanduser() if data_dir else default_data_dir())
    publisher = _publisher(config, archive)
    endpoint = endpoint_from_config(config, start)
    app_ports = ports_from_config(config, start)
    observers = [o for o in (publisher, endpoint, app_ports) if o is not None]
    service = Service(board, profile=PROFILES[config.board.profile], start=start, namer=namer,
                      options=options, view=view, status=status, notifier=Notifier(),
                      archive=archive, observers=observers, opponent=opponent)
    if opponent is not None:
        view.message(f"playing {opponent.label} ({config.opponent.side}); profile "
                     f"{config.board.profile}")
    if app_ports is not None:
        for line in app_ports.start(service.submit, scale=_board_scale(board)):
            view.message(line)
    try:
        if endpoint is not None:
            endpoint.start(service.submit)
            view.message(f"LiveChess endpoint: {endpoint.url} (lichess.org/dgt, chess.com); "
                         "a move goes out at the clock press, or without a clock once its "
                         "piece is released and the board stands still for 1 s")
        if publisher is not None:
            publisher.attach(service)
            publisher.start(wait=MQTT_WAIT)  # a refused login stops here, in one line
    except BaseException:
        if app_ports is not None:  # (their pty links removed)
            app_ports.close()
        raise
    return service


def _board_scale(board: object) -> Any:
    """How much faster than the wall's the board's clock runs (read as states come)."""
    return lambda: float(getattr(board, "scale", 1.0) or 1.0)


MQTT_WAIT = 5.0  # s to wait at start-up for the broker's answer to the board's login


def _publisher(config: Config, archive: Archive) -> Any:
    """The hall's publisher ([mqtt] url), or None."""
    mqtt = config.mqtt
    if not mqtt.url:
        return None
    from board_ctl.hall import BoardPublisher, resolve

    settings = resolve(mqtt.url, mqtt.board_id, username=mqtt.username,
                       password_file=mqtt.password_file, topic_prefix=mqtt.topic_prefix,
                       ca_file=mqtt.ca_file, tags=mqtt.tags())
    return BoardPublisher(settings, archive)


def _route_logging(view: View) -> None:
    """Under the live view, log records print above it, not through it."""
    console = getattr(view, "console", None)
    if console is None:
        return
    from rich.logging import RichHandler

    root = logging.getLogger()
    level = root.level
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(RichHandler(console=console, show_path=False, show_time=False))
    root.setLevel(level)


class _Interrupted(BaseException):
    """SIGTERM or Ctrl-C before the service runs: what was started is ended on the way
    out (an engine process with it), and the exit status is 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"{signal.Signals(signum).name} while starting: stopped, "
                         "nothing started is left running")
        self.signum = signum


class _signals:
    """SIGTERM and the first Ctrl-C finish the game and stop; a second Ctrl-C aborts.
    Before the service runs (`service` None) either one stops the start."""

    def __init__(self) -> None:
        self.service: Service | None = None
        self.interrupted = False
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.saved[sig] = signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        service = self.service
        if service is None:
            if not self.interrupted:  # once: a second one must not cut the ending short
                self.interrupted = True
                raise _Interrupted(signum)
            return
        if signum == signal.SIGINT and service.stop_requested:
            raise KeyboardInterrupt
        service.request_stop()

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
