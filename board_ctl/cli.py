"""The `board-ctl` command line: replay a sensor log, run the board, list and export the
archived games, check a configuration.

Start-up is kept short (a Pi Zero imports slowly): this module and the parser import
only argparse and the rule profiles; each command imports what it uses when it runs.

Exit status: 0 done; 1 nothing to do (`replay` of a log with no event) or the service
failed; 2 bad input: a file that cannot be read or written, a bad option or config.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from board_ctl import __version__
from board_ctl.core.profiles import PROFILES
from board_ctl.errors import BoardCtlError
from board_ctl.words import count

MAX_ERRORS_SHOWN = 100  # bad lines printed one by one; the rest are counted


def _replay(args: argparse.Namespace) -> int:
    from board_ctl.errors import SensorLogError
    from board_ctl.outputs import write_all
    from board_ctl.replay import replay_log, start_profile
    from board_ctl.sensorlog import load_sensor_log, parse_time_control

    name = "<stdin>" if args.log == "-" else args.log
    try:
        time_control = (parse_time_control(args.time_control)
                        if args.time_control is not None else None)
    except (ValueError, BoardCtlError) as exc:
        return _fail("replay", f"--time-control: {exc}")
    try:
        log = load_sensor_log(args.log)
    except SensorLogError as exc:  # unreadable, or a start position no game can have
        where = f"{name}:" if exc.line is not None else ""
        return _fail("replay", f"{where}{exc}; nothing written")
    if not log.events and log.start_line is None and log.errors and all(
            error.reason.startswith("not valid JSON") for error in log.errors):
        # nothing in it is a sensor log's line: say what it is and what replay reads,
        # not one "not valid JSON" a line
        if _looks_like_pgn(args.log):
            return _fail("replay", f"{name} is a PGN file, not a sensor log: replay reads "
                                   f"a game's sensor log (GAME.sensor.jsonl, beside its "
                                   f"PGN; `board-ctl export GAME --sensor-log FILE` writes "
                                   f"one from the archive); nothing written")
        return _fail("replay", f"{name} is not a sensor log ({count(len(log.errors), 'line')}"
                               f", none of them JSON): replay reads a game's sensor log "
                               f"(GAME.sensor.jsonl, beside its PGN); nothing written")
    if time_control is None and log.start.time_control:
        time_control = parse_time_control(log.start.time_control)
    profile = start_profile(log.start, args.profile)
    record = replay_log(log, profile, time_control) if log.events else None
    _print_errors(name, sorted(log.errors + log.warnings, key=lambda e: e.line or 0))
    if record is None:
        if any(error.line != log.start_line for error in log.errors):
            return _fail("replay", f"{name} has no readable event; nothing written")
        print(f"board-ctl replay: {name}: nothing was played (the log has no event); "
              "nothing written", file=sys.stderr)
        return 1
    report = "\n".join(record.report_lines()) + "\n"
    outputs = [(Path(args.pgn), record.pgn_text())] if args.pgn else []
    if args.report:
        outputs.append((Path(args.report), report))
    elif not args.pgn:
        outputs.append((Path("-"), report))
    try:
        write_all([(path, text) for path, text in outputs if str(path) != "-"])
    except BoardCtlError as exc:
        return _fail("replay", f"{exc}; nothing written")
    for path, text in outputs:
        if str(path) == "-":
            sys.stdout.write(text)
    moves = len(record.moves)
    alerts = sum(1 for line in record.report if line["kind"] == "alert")
    result = record.result.result if record.result else "*"
    print(f"{name}: {count(moves, 'ply', 'plies')}, {count(alerts, 'alert')}, result "
          f"{result}, {count(len(log.errors), 'bad line')}", file=sys.stderr)
    return 0


def _looks_like_pgn(path: str) -> bool:
    """A PGN game's file: named .pgn, or beginning with a tag pair ([Event "..."])."""
    if path == "-":
        return False  # (standard input was read already)
    if path.lower().endswith(".pgn"):
        return True
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as stream:
            head = stream.read(4096)
    except OSError:
        return False
    return re.match(r'\s*\[[A-Za-z0-9_]+\s+"', head) is not None


def _print_errors(name: str, errors: list[Any]) -> None:
    for error in errors[:MAX_ERRORS_SHOWN]:
        print(f"{name}:{error}", file=sys.stderr)
    if len(errors) > MAX_ERRORS_SHOWN:
        print(f"{name}: ... and {len(errors) - MAX_ERRORS_SHOWN} more",
              file=sys.stderr)


def _fail(command: str, message: str, status: int = 2) -> int:
    print(f"board-ctl {command}: {message}", file=sys.stderr)
    return status


def _archive(args: argparse.Namespace) -> Any:
    from board_ctl.archive import Archive, default_data_dir

    return Archive(Path(args.data_dir) if args.data_dir else default_data_dir())


def _missing_data_dir(args: argparse.Namespace, command: str) -> int | None:
    """A --data-dir given that does not exist is a typo, not an empty archive: one line,
    exit status 2 (the default one may simply not be made yet)."""
    if args.data_dir and not Path(args.data_dir).is_dir():
        return _fail(command, f"--data-dir {args.data_dir}: no such directory (the data "
                              f"directory `board-ctl run --data-dir` wrote to)")
    return None


def _games(args: argparse.Namespace) -> int:
    from board_ctl.record import UNKNOWN_EVENT

    failed = _missing_data_dir(args, "games")
    if failed is not None:
        return failed
    archive = _archive(args)
    if args.abandon:
        return _abandon(archive, args.abandon)
    games = archive.games()
    if not games:
        print(f"no games in {archive.games_dir}")
        return 0
    print(f"{'game':<20} {'event':<22} {'white - black':<34} {'plies':>5}  result")
    for game in games:
        tags = game.tags
        players = f"{tags.get('White', '?')} - {tags.get('Black', '?')}"
        print(f"{game.game_id:<20} {tags.get('Event', UNKNOWN_EVENT)[:22]:<22} "
              f"{players[:34]:<34} {game.plies:>5}  {game.status}")
        for problem in game.recovered.problems:
            print(f"  ! {problem}")
    unfinished = [g for g in games if not g.finished]
    if unfinished:
        print(f"{count(len(unfinished), 'game')} in progress: each goes on when "
              f"`board-ctl run` starts on its board and the board shows its position; "
              f"`board-ctl games --abandon GAME` leaves one unfinished for good")
    return 0


def _abandon(archive: Any, name: str) -> int:
    """`games --abandon GAME`: the game stays as it is, unfinished, and is never resumed."""
    from board_ctl.archive import ArchiveError, DataDirBusy

    try:
        lock = archive.lock()
    except DataDirBusy as exc:  # the service there has the game: it is not ours to end
        return _fail("games", f"{exc.owner_text}: its board abandons its unfinished game "
                              f"when set up in the start position; or stop it first", 1)
    try:
        try:
            game = archive.find(name)
        except ArchiveError as exc:
            return _fail("games", str(exc))
        if game.finished:
            what = "abandoned already" if game.abandoned else f"over ({game.result})"
            return _fail("games", f"game {game.game_id} is {what}: nothing to abandon")
        archive.abandon(game)
    finally:
        lock.release()
    print(f"game {game.game_id} abandoned: its {count(game.plies, 'ply', 'plies')} stay "
          f"in the archive (`board-ctl export {game.game_id}`); no start resumes it")
    return 0


def _export(args: argparse.Namespace) -> int:
    from board_ctl.archive import ArchiveError
    from board_ctl.outputs import write_all

    failed = _missing_data_dir(args, "export")
    if failed is not None:
        return failed
    archive = _archive(args)
    try:
        if args.event:
            games = archive.event_games(args.event)
        elif args.game:
            games = [archive.find(args.game)]
        else:
            games = archive.games()
    except ArchiveError as exc:
        print(f"board-ctl export: {exc}", file=sys.stderr)
        return 2
    if not games:
        print(f"board-ctl export: no games in {archive.games_dir}", file=sys.stderr)
        return 2
    logs = _sensor_log_paths(args.sensor_log, games) if args.sensor_log else []
    if isinstance(logs, str):
        print(f"board-ctl export: {logs}", file=sys.stderr)
        return 2
    for game in games:
        for problem in game.recovered.problems:
            print(f"board-ctl export: {problem}", file=sys.stderr)
    text = "\n".join(game.pgn_text() for game in games)
    files = [(path, game.sensor_log_text()) for game, path in logs]
    if args.pgn not in (None, "-"):
        files.insert(0, (Path(args.pgn), text))
    if len(logs) > 1:  # the directory named for them
        logs[0][1].parent.mkdir(parents=True, exist_ok=True)
    write_all(files)  # every file whole, or none (an OutputError names the file)
    if args.pgn in (None, "-"):
        sys.stdout.write(text)
    else:
        print(f"{count(len(games), 'game')} written to {args.pgn}", file=sys.stderr)
    if logs:
        where = logs[0][1] if len(logs) == 1 else logs[0][1].parent
        print(f"{count(len(logs), 'sensor log')} written to {where}", file=sys.stderr)
    return 0


def _sensor_log_paths(target: str, games: list[Any]) -> list[tuple[Any, Path]] | str:
    """Where each game's sensor log goes: one game, the file named (or GAME.sensor.jsonl
    in a directory named); several, GAME.sensor.jsonl each in the directory named. A
    problem as one line instead."""
    path = Path(target)
    if len(games) == 1 and not path.is_dir():
        return [(games[0], path)]
    if path.exists() and not path.is_dir():
        return (f"--sensor-log {target}: {count(len(games), 'game')} are exported, one sensor log "
                f"each: name a directory (or export one game)")
    return [(game, path / f"{game.game_id}.sensor.jsonl") for game in games]


def _ladder(args: argparse.Namespace) -> int:
    from board_ctl.ladder_cli import run  # the ladder is not needed to run a board

    return run(args)


def _arbiter(args: argparse.Namespace) -> int:
    from board_ctl.station.cli import run  # the web and MQTT stack only when used

    return run(args)


def _config_check(args: argparse.Namespace) -> int:
    from board_ctl.config import describe_config, load_config
    from board_ctl.errors import ConfigError
    from board_ctl.service.cli import CONFIG_ENV

    path = args.file or os.environ.get(CONFIG_ENV) or None
    try:
        config = load_config(path)
    except ConfigError as exc:
        return _fail("config check", str(exc))
    origin = (f"{path}" if args.file or path is None else f"{path} (from ${CONFIG_ENV})")
    if path is None:
        print(f"no config file (none given, ${CONFIG_ENV} unset): the built-in defaults")
    else:
        print(f"{origin}: valid")
    for line in describe_config(config):
        print(f"  {line}")
    return 0


class _HelpFormatter(argparse.HelpFormatter):
    """Fills ``{data_dir}`` in a help text only when help is shown: looking the data
    directory up costs imports that no other use of the parser needs."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text and "{data_dir}" in text:
            from board_ctl.archive import default_data_dir

            text = text.replace("{data_dir}", str(default_data_dir()))
        return text


class _Parser(argparse.ArgumentParser):
    """board-ctl's parsers (its subcommands' too): help through _HelpFormatter."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `argv` (the command line about to be parsed). A command whose
    options cost imports (the arbiter station's) gets them only when `argv` names it;
    with None every command is complete."""
    from board_ctl.service.cli import add_parser as add_run_parser

    parser = _Parser(
        prog="board-ctl", description="A reed-switch chessboard's controller and arbiter: "
        "sensor events in; moves, alerts, LEDs and PGN out.")
    parser.add_argument("--version", action="version", version=f"board-ctl {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay = commands.add_parser(
        "replay", help="replay a sensor log: moves, alerts, LED frames and PGN",
        description="Replay a sensor log through the referee, exactly as the board played "
                    "it: the game's PGN and its report (moves, alerts, LED frames). A bad "
                    "line is reported with its number and skipped. Exit status: 0 replayed; "
                    "1 nothing was played (no event); 2 the log, an option or an output "
                    "file cannot be used (then nothing is written).")
    replay.add_argument("log", help="sensor log (JSON Lines); - reads standard input")
    replay.add_argument("--pgn", help="write the game's PGN here")
    replay.add_argument("--report", help="write the game report (JSON Lines) here "
                                         "(default without --pgn: standard output)")
    replay.add_argument("--profile", choices=sorted(PROFILES),
                        help="rule profile (default: the one the log's start line names, "
                             "else fide)")
    replay.add_argument("--time-control", metavar="TC",
                        help="PGN TimeControl, e.g. 5400+30, 300d5 or 40/5400+30:1800+30: "
                             "keep the clocks from the log's times (overrides the log's own)")
    replay.set_defaults(func=_replay)
    add_run_parser(commands)

    games = commands.add_parser(
        "games", help="list the games in the data directory; abandon an unfinished one",
        description="List the games archived in the data directory, finished or in "
                    "progress, with any problem their journals show. A game in progress "
                    "goes on when `board-ctl run` starts on its board and the board shows "
                    "its position; --abandon leaves it unfinished for good. Exit status: "
                    "0 done; 1 the data directory is in use (a service is running there); "
                    "2 no such game or data directory.")
    games.add_argument("--data-dir", help="the data directory (default: {data_dir})")
    games.add_argument("--abandon", metavar="GAME",
                       help="leave this unfinished game unfinished for good (its id as "
                            "listed, or the start of it): its moves stay, no start resumes "
                            "it")
    games.set_defaults(func=_games)

    export = commands.add_parser(
        "export", help="export games as PGN from their journals (also games in progress)",
        description="Export archived games as PGN, rebuilt from their journals: one game, "
                    "every game of an event, or all of them; also a game still being "
                    "played.")
    export.add_argument("game", nargs="?", help="a game's id or the start of it (default: all)")
    export.add_argument("--event", help="every game of this Event tag")
    export.add_argument("--pgn", help="write the PGN here (default: standard output)")
    export.add_argument("--sensor-log", metavar="PATH",
                        help="also write the game's sensor log here; with several games, "
                             "a directory: GAME.sensor.jsonl each")
    export.add_argument("--data-dir", help="the data directory (default: {data_dir})")
    export.set_defaults(func=_export)

    ladder = commands.add_parser(
        "ladder", help="club ladder standings (the club's points and levels) from PGN or the "
                       "archive",
        description="Standings of the club ladder (docs/ladder.md). Games are rated in the "
                    "order their sources are given, each file's games in file order.")
    # Both options feed one list, so games are rated in the order the sources are given.
    ladder.add_argument("--pgn", nargs="+", action="extend", dest="sources", metavar="FILE",
                        type=lambda path: ("pgn", path), help="PGN files, games in file order")
    ladder.add_argument("--data-dir", action="append", dest="sources", metavar="DIR",
                        type=lambda path: ("archive", path),
                        help="a data directory's archive (without any source: {data_dir})")
    ladder.add_argument("--games", action="store_true",
                        help="list each rated game and the points it moved instead")
    ladder.add_argument("--json", action="store_true", help="print JSON")
    ladder.set_defaults(func=_ladder)

    arbiter = commands.add_parser(
        "arbiter", help="the arbiter station: every board of the hall in a browser, "
                        "the arbiter's commands, the live broadcast",
        description="The arbiter station: every board of the hall (over MQTT) in a "
                    "browser, the arbiters' commands, the live broadcast. Exit status: 0 "
                    "stopped; 1 the --listen address cannot be had (in use, or not this "
                    "machine's); 2 a bad option or file.")
    if argv is None or "arbiter" in argv:  # its options import the station: only if used
        from board_ctl.station.cli import add_arguments as add_arbiter_arguments

        add_arbiter_arguments(arbiter)
    arbiter.set_defaults(func=_arbiter)

    config = commands.add_parser(
        "config", help="check a configuration file",
        description="Work with board-ctl's configuration (TOML; see "
                    "config/board.example.toml).")
    config_commands = config.add_subparsers(dest="config_command", required=True,
                                            metavar="ACTION")
    check = config_commands.add_parser(
        "check", help="validate a config without starting anything",
        description="Validate a configuration file as `board-ctl run` would at start-up, "
                    "without opening the board or any pin, and say what was checked. Exit "
                    "status 0 valid, 2 not (one line naming the key).")
    check.add_argument("file", nargs="?", help="the config file (default: "
                                               "$BOARD_CTL_CONFIG, else the built-in defaults)")
    check.set_defaults(func=_config_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args))
    except BoardCtlError as exc:  # expected failures a command did not word itself
        return _fail(args.command, str(exc))
    except BrokenPipeError:
        raise  # the reader of our output left: see entry_point
    except OSError as exc:  # a file named on the command line, and the like
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(args.command, f"{where}{exc.strerror or exc}")
    except KeyboardInterrupt:
        return _fail(args.command, "interrupted", 130)


def entry_point() -> int:
    """`board-ctl`: `main`, and a reader that stops reading (``| head``) is no error."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would complain again when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # as a shell reports a process killed by SIGPIPE
    return code


if __name__ == "__main__":
    sys.exit(entry_point())
