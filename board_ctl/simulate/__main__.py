"""python -m board_ctl.simulate GAMES.pgn --out DIR [--seed N] [--no-clock]
[--behaviour NAME | --violation CODE] [--limit N]

Writes one sensor log per game, DIR/NNNN.jsonl (NNNN = the game's index in the PGN
file, from 0), and prints how many were written. Game i is rendered with seed N + i.
A game that cannot show the behaviour asked for (no such move) is skipped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import chess.pgn

from board_ctl.simulate.behaviours import BEHAVIOURS, render_behaviour
from board_ctl.simulate.render import RenderStyle, render_game
from board_ctl.simulate.violations import VIOLATION_CODES, NoEligiblePly, render_violation


def read_games(path: Path) -> Iterator[chess.pgn.Game]:
    with path.open(encoding="utf-8", errors="replace") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            yield game


def _behaviours_help() -> str:
    lines = ["behaviours (--behaviour NAME; docs/recognition.md has the ruling of each):"]
    for behaviour in BEHAVIOURS.values():
        clock = "" if False in behaviour.clock_modes else " [clock only]"
        lines.append(f"  {behaviour.name}{clock}: {behaviour.hands}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m board_ctl.simulate", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_behaviours_help())
    ap.add_argument("pgn", type=Path, help="games to render (PGN)")
    ap.add_argument("--out", type=Path, required=True, help="directory for the .jsonl logs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-clock", action="store_true", help="no clock presses at all")
    ap.add_argument("--violation", choices=VIOLATION_CODES, help="inject one violation per game")
    ap.add_argument("--behaviour", choices=sorted(BEHAVIOURS), metavar="NAME",
                    help="render with a named handling behaviour (listed below)")
    ap.add_argument("--limit", type=int, help="render at most this many games")
    ap.add_argument("--start-ply", type=int, default=0, help="start each log from this ply (FEN)")
    args = ap.parse_args(argv)
    if args.behaviour and (args.violation or args.start_ply):
        ap.error("--behaviour sets its own style: no --violation or --start-ply with it")
    if args.behaviour and args.no_clock and False not in BEHAVIOURS[args.behaviour].clock_modes:
        ap.error(f"--behaviour {args.behaviour} needs the clock")

    style = RenderStyle(use_clock=not args.no_clock, start_ply=args.start_ply)
    if args.violation and args.no_clock and args.violation in ("illegal-move", "clock-no-move"):
        ap.error(f"--violation {args.violation} needs the clock")
    args.out.mkdir(parents=True, exist_ok=True)
    written = skipped = 0
    for index, game in enumerate(read_games(args.pgn)):
        if args.limit is not None and index >= args.limit:
            break
        if game.errors:
            print(f"game {index}: skipped, PGN errors: {game.errors[0]}", file=sys.stderr)
            skipped += 1
            continue
        seed = args.seed + index
        try:
            if args.behaviour:
                rendered = render_behaviour(game, args.behaviour, seed=seed,
                                            use_clock=not args.no_clock)
            elif args.violation:
                rendered = render_violation(game, args.violation, seed=seed, style=style)
            else:
                rendered = render_game(game, seed=seed, style=style)
        except (NoEligiblePly, ValueError) as exc:
            print(f"game {index}: skipped, {exc}", file=sys.stderr)
            skipped += 1
            continue
        rendered.write(args.out / f"{index:04d}.jsonl")
        written += 1
    note = f" ({skipped} skipped)" if skipped else ""
    print(f"wrote {written} sensor logs to {args.out}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
