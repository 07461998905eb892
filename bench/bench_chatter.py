"""Contact bounce against the referee: every real game of the corpus rendered with N extra
bounce pairs after every lift and place (0.3-2 ms apart), with and without a clock.

    python bench/bench_chatter.py [--games N] [--densities 0-10] [--gap LO HI]

Prints, per density and clock mode, the games replayed exactly (moves and result) and the
alerts raised (there should be none: bounce is noise, never a fault of a player).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from board_ctl.simulate import RenderStyle, render_game  # noqa: E402
from corpus import corpus, replay_rendered  # noqa: E402


def densities(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=0, help="the first N games (0: all)")
    parser.add_argument("--densities", type=densities, default=densities("0-10"),
                        help="extra bounce pairs per change, e.g. 0-10 or 5")
    parser.add_argument("--gap", type=float, nargs=2, default=(0.3, 2.0), metavar=("LO", "HI"),
                        help="ms between the toggles of a bounce (default 0.3 2)")
    args = parser.parse_args()

    games = corpus()[: args.games or None]
    print(f"{len(games)} games; bounce toggles {args.gap[0]}-{args.gap[1]} ms apart")
    print(f"{'pairs':>5} {'clock':>8} {'exact':>9} {'alerts':>7}  codes")
    perfect = True
    for density in args.densities:
        for use_clock in (True, False):
            style = RenderStyle(use_clock=use_clock, bounce_pairs=(density, density),
                                bounce_gap=(args.gap[0] / 1000, args.gap[1] / 1000))
            exact, codes = 0, collections.Counter[str]()
            for seed, game in enumerate(games):
                replayed = replay_rendered(render_game(game, seed=seed, style=style))
                rendered = replayed.rendered
                exact += (replayed.moves == rendered.moves
                          and replayed.result == rendered.result)
                codes.update(replayed.alerts)
            alerts = sum(codes.values())
            perfect &= exact == len(games) and not alerts
            print(f"{density:>5} {'yes' if use_clock else 'no':>8} "
                  f"{exact:>4}/{len(games):<4} {alerts:>7}  {dict(codes) or ''}", flush=True)
    return 0 if perfect else 1


if __name__ == "__main__":
    sys.exit(main())
