"""The `board-ctl` command line."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_log
from board_ctl.sensorlog import read_sensor_log


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
    record = replay_log(log, PROFILES[args.profile])
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
    replay.set_defaults(func=_replay)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
