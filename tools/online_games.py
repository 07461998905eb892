"""How online games without a clock come out (`board-ctl run --livechess`, the start
line's `release_completes`): the corpus's real games rendered by the simulator without a
clock, every ply begun only after the page could have shown the last one, fed to the
referee in simulated time.

    python tools/online_games.py [--games N] [--seeds S]

Every game must record exactly its moves, raise no alert, and complete each move before
the next ply's first event (what lichess.org/dgt needs: the person makes the online
opponent's reply only once the page has it); the failures are counted by class.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from board_ctl.simulate import render_game  # noqa: E402
from corpus import corpus  # noqa: E402
from test_release_completes import ONLINE, plies_recorded_in_time  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="corpus games (from the first)")
    parser.add_argument("--seeds", type=int, default=2, help="renderings of each game")
    args = parser.parse_args()
    games = corpus()[:args.games]
    failures: Counter[str] = Counter()
    styles: Counter[str] = Counter()
    plies = 0
    start = time.process_time()
    for game in games:
        for seed in range(args.seeds):
            rendered = render_game(game, seed=seed, style=ONLINE)
            before, moves, alerts = plies_recorded_in_time(rendered, release_completes=True)
            plies += len(rendered.moves)
            styles.update(p.style.split(":")[0] for p in rendered.plies)
            late = [i + 1 for i, n in enumerate(before) if n != i + 1 and not any(
                note.startswith("idle-lift") for note in rendered.plies[i + 1].notes)]
            if moves != rendered.moves:
                failures["record differs from the game"] += 1
            elif alerts:
                failures[f"alert {alerts[0]}"] += 1
            elif late:
                kind = rendered.plies[late[0] - 1].style
                failures[f"a move not complete before the next began ({kind})"] += 1
    played = len(games) * args.seeds
    print(f"{played} games, {plies} plies (" + ", ".join(
        f"{k} {n}" for k, n in styles.most_common()) + ")")
    print(f"exact and in time: {played - sum(failures.values())} of {played}; failures: "
          f"{dict(failures) or 'none'}; {time.process_time() - start:.0f} s CPU")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
