"""The `board-ctl` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from board_ctl.archive import Archive, ArchiveError, default_data_dir
from board_ctl.core.profiles import PROFILES
from board_ctl.core.timecontrol import TimeControl, TimeControlError
from board_ctl.replay import replay_log
from board_ctl.sensorlog import read_sensor_log
from board_ctl.service.cli import add_parser as add_run_parser


def _replay(args: argparse.Namespace) -> int:
    path = Path(args.log)
    try:
        with path.open(encoding="utf-8", errors="replace") as stream:  # bad bytes: bad lines
            log = read_sensor_log(stream)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"board-ctl replay: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    for error in log.errors:
        print(f"{path}:{error}", file=sys.stderr)
    if not log.events and log.errors:
        print(f"board-ctl replay: {path} has no readable event", file=sys.stderr)
        return 2
    try:
        time_control = TimeControl.parse(args.time_control) if args.time_control else None
        if time_control is None and log.start.time_control:
            time_control = TimeControl.parse(log.start.time_control)
    except TimeControlError as exc:
        print(f"board-ctl replay: {exc}", file=sys.stderr)
        return 2
    record = replay_log(log, PROFILES[args.profile], time_control)
    if args.pgn:
        Path(args.pgn).write_text(record.pgn_text(), encoding="utf-8")
    report = "\n".join(record.report_lines()) + "\n"
    if args.report:
        Path(args.report).write_text(report, encoding="utf-8")
    elif not args.pgn:
        sys.stdout.write(report)
    moves = len(record.moves)
    alerts = sum(1 for line in record.report if line["kind"] == "alert")
    result = record.result.result if record.result else "*"
    print(f"{path}: {moves} plies, {alerts} alerts, result {result}, "
          f"{len(log.errors)} bad lines", file=sys.stderr)
    return 0


def _archive(args: argparse.Namespace) -> Archive:
    return Archive(Path(args.data_dir) if args.data_dir else default_data_dir())


def _games(args: argparse.Namespace) -> int:
    archive = _archive(args)
    games = archive.games()
    if not games:
        print(f"no games in {archive.games_dir}")
        return 0
    print(f"{'game':<20} {'event':<22} {'white - black':<34} {'plies':>5}  result")
    for game in games:
        tags = game.tags
        players = f"{tags.get('White', '?')} - {tags.get('Black', '?')}"
        status = game.result if game.finished else f"{game.result} (in progress)"
        print(f"{game.game_id:<20} {tags.get('Event', '-')[:22]:<22} {players[:34]:<34} "
              f"{game.plies:>5}  {status}")
        for problem in game.recovered.problems:
            print(f"  ! {problem}")
    return 0


def _export(args: argparse.Namespace) -> int:
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
    for game in games:
        for problem in game.recovered.problems:
            print(f"board-ctl export: {problem}", file=sys.stderr)
    text = "\n".join(game.pgn_text() for game in games)
    if args.pgn in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.pgn).write_text(text, encoding="utf-8")
        print(f"{len(games)} game(s) written to {args.pgn}", file=sys.stderr)
    if args.sensor_log and len(games) == 1:
        Path(args.sensor_log).write_text(games[0].sensor_log_text(), encoding="utf-8")
    return 0


def _ladder(args: argparse.Namespace) -> int:
    from board_ctl.ladder_cli import run  # the ladder is not needed to run a board

    return run(args)


def _arbiter(args: argparse.Namespace) -> int:
    from board_ctl.station.cli import run  # the web and MQTT stack only when used

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="board-ctl", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser(
        "replay", help="replay a sensor log: moves, alerts, LED frames and PGN")
    replay.add_argument("log", help="sensor log (JSON Lines)")
    replay.add_argument("--pgn", help="write the game's PGN here")
    replay.add_argument("--report", help="write the game report (JSON Lines) here")
    replay.add_argument("--profile", choices=sorted(PROFILES), default="fide",
                        help="rule profile (default: fide)")
    replay.add_argument("--time-control", metavar="TC",
                        help="PGN TimeControl, e.g. 5400+30, 300d5 or 40/5400+30:1800+30: "
                             "keep the clocks from the log's times (overrides the log's own)")
    replay.set_defaults(func=_replay)
    add_run_parser(commands)

    games = commands.add_parser("games", help="list the games in the data directory")
    games.add_argument("--data-dir", help="the data directory (default: %s)" % default_data_dir())
    games.set_defaults(func=_games)

    export = commands.add_parser(
        "export", help="export games as PGN from their journals (also games in progress)")
    export.add_argument("game", nargs="?", help="a game's id or the start of it (default: all)")
    export.add_argument("--event", help="every game of this Event tag")
    export.add_argument("--pgn", help="write the PGN here (default: standard output)")
    export.add_argument("--sensor-log", help="also write the game's sensor log here")
    export.add_argument("--data-dir", help="the data directory")
    export.set_defaults(func=_export)

    ladder = commands.add_parser(
        "ladder", help="club ladder standings (seed 002 points and levels) from PGN or the archive",
        description="Standings of the club ladder (docs/ladder.md). Games are rated in the "
                    "order their sources are given, each file's games in file order.")
    # Both options feed one list, so games are rated in the order the sources are given.
    ladder.add_argument("--pgn", nargs="+", action="extend", dest="sources", metavar="FILE",
                        type=lambda path: ("pgn", path), help="PGN files, games in file order")
    ladder.add_argument("--data-dir", action="append", dest="sources", metavar="DIR",
                        type=lambda path: ("archive", path),
                        help="a data directory's archive (without any source: %s)"
                        % default_data_dir())
    ladder.add_argument("--games", action="store_true",
                        help="list each rated game and the points it moved instead")
    ladder.add_argument("--json", action="store_true", help="print JSON")
    ladder.set_defaults(func=_ladder)

    arbiter = commands.add_parser(
        "arbiter", help="the arbiter station: every board of the hall in a browser, "
                        "the arbiter's commands, the live broadcast")
    from board_ctl.station.cli import add_arguments as add_arbiter_arguments

    add_arbiter_arguments(arbiter)
    arbiter.set_defaults(func=_arbiter)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
