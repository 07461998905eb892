"""`board-ctl ladder`: standings of the seed-002 club ladder from PGN files or the archive."""

from __future__ import annotations

import argparse
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.cells import cell_len

from board_ctl.archive import Archive, default_data_dir
from board_ctl.errors import BoardCtlError
from board_ctl.ladder import Ladder, RatedGame, Standing, level_name, ranks, signed
from board_ctl.ladder_sources import Loaded, from_archive, read_pgn
from board_ctl.words import count

PROG = "board-ctl ladder"


def pad(text: str, width: int) -> str:
    """Left-aligned in `width` terminal cells (a Chinese name takes two cells a character)."""
    return text + " " * max(0, width - cell_len(text))


def standings_table(standings: list[Standing]) -> str:
    if not standings:
        return "no rated games\n"
    width = max(6, *(cell_len(row.player) for row in standings))
    lines = [f"{'place':>5}  {pad('player', width)}  {'points':>9}  {'level':>5}  {'games':>5}"]
    for place, row in zip(ranks(standings), standings):
        lines.append(f"{place:>5}  {pad(row.player, width)}  {row.points:>9.2f}  "
                     f"{level_name(row.points):>5}  {row.games:>5}")
    return "\n".join(lines) + "\n"


def games_table(history: list[RatedGame]) -> str:
    """Each rated game with both players' points before it and what it moved."""
    if not history:
        return "no rated games\n"
    sides = [(f"{r.game.white} ({r.exchange.white_before:.2f})",
              f"{r.game.black} ({r.exchange.black_before:.2f})") for r in history]
    white_w = max(cell_len(white) for white, _ in sides)
    black_w = max(cell_len(black) for _, black in sides)
    lines = []
    for rated, (white, black) in zip(history, sides):
        lines.append(f"{rated.number:>4}  {pad(white, white_w)} - {pad(black, black_w)}  "
                     f"{rated.game.result:<7}  {rated.exchange.text():>17}  {rated.exchange.rule}")
    return "\n".join(lines) + "\n"


def _number(value: Decimal) -> float:
    return float(value)  # a hundredth's shortest float text is that hundredth


def game_json(rated: RatedGame) -> dict[str, Any]:
    moved = rated.exchange
    return {"game": rated.number, "white": rated.game.white, "black": rated.game.black,
            "result": rated.game.result,
            "white_before": _number(moved.white_before),
            "black_before": _number(moved.black_before),
            "white_change": _number(moved.white_change),
            "black_change": _number(moved.black_change),
            "rule": moved.rule}


def load(sources: list[tuple[str, str]]) -> Loaded:
    """Every source's games, sources in the order given. BoardCtlError: one unreadable."""
    loaded = Loaded()
    for kind, where in sources:
        if kind == "pgn":
            loaded.extend(read_pgn(Path(where)))
            continue
        archive = Archive(Path(where))
        try:
            games = archive.games()
        except OSError as exc:
            raise BoardCtlError(f"cannot read the archive {archive.games_dir}: {exc}") from None
        if not games:
            loaded.notes.append(f"no games in {archive.games_dir}")
        loaded.extend(from_archive(games, f"archive {where}"))
    return loaded


def run(args: argparse.Namespace) -> int:
    sources = args.sources or [("archive", str(default_data_dir()))]
    try:
        loaded = load(sources)
    except BoardCtlError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    for note in loaded.notes:
        print(f"{PROG}: {note}", file=sys.stderr)
    ladder = Ladder().play_all(loaded.games)
    print(f"{PROG}: {count(len(loaded.games), 'game')} rated, {loaded.skipped} skipped, "
          f"{count(len(ladder.standings()), 'player')}", file=sys.stderr)
    if args.json:
        rows = ([game_json(rated) for rated in ladder.history] if args.games
                else [row.to_json() for row in ladder.standings()])
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    elif args.games:
        sys.stdout.write(games_table(ladder.history))
    else:
        sys.stdout.write(standings_table(ladder.standings()))
    return 0
