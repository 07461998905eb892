"""Regenerate board_ctl/data/demo-opera-game.jsonl, the game `board-ctl run` plays when
nothing is configured: the Opera game (Morphy, Paris 1858) from tests/data/games/
classics.pgn, rendered by board_ctl.simulate as a board reports it (bounce, slides,
clock presses), with its PGN tags on the start line.

    python tools/make_demo_log.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chess
import chess.pgn

from board_ctl.simulate import RenderStyle, render_game

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "data" / "games" / "classics.pgn"
TARGET = ROOT / "board_ctl" / "data" / "demo-opera-game.jsonl"
SEED = 1858
STYLE = RenderStyle(think=(0.5, 4.0), long_think_prob=0.0)
TAGS = ("Event", "Site", "Date", "Round", "White", "Black")


def main() -> int:
    with SOURCE.open(encoding="utf-8") as stream:
        game = chess.pgn.read_game(stream)
    assert game is not None and "Morphy" in game.headers["White"]
    rendered = render_game(game, seed=SEED, style=STYLE)
    tags = {tag: game.headers[tag] for tag in TAGS if game.headers.get(tag, "?") != "?"}
    lines = [{"t": 0.0, "ev": "start", "fen": chess.STARTING_FEN, "tags": tags}]
    lines += [line for line in rendered.lines if line["ev"] != "start"]
    TARGET.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    print(f"wrote {TARGET} ({len(lines)} lines, {lines[-1]['t']:.1f} s, "
          f"{len(rendered.moves)} plies, {rendered.result})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
