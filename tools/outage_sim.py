"""How well a game survives the board link going down: drop every event in a window of
play, put the board's scan after it (what the service gets on reconnecting), replay.

    python tools/outage_sim.py [--games 40] [--seed 7] [--outage 0.5 1 3 5]

Prints how many games still came out exact with no alert, and the failures with the
events that were lost. A figure to watch, not a test: when a window swallows a press and
the start of the next move, the scan alone cannot always say what happened.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import chess

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from board_ctl.core import events as ev  # noqa: E402
from board_ctl.core.profiles import PROFILES  # noqa: E402
from board_ctl.replay import replay_events  # noqa: E402
from board_ctl.sensorlog import read_sensor_log  # noqa: E402
from board_ctl.simulate import render_game  # noqa: E402
from corpus import corpus  # noqa: E402


def with_outage(events: list[ev.Event], fen: str, start: float, length: float) -> list[ev.Event]:
    occupied = chess.Board(fen).occupied
    out: list[ev.Event] = []
    scanned = False
    for event in events:
        lost = start <= event.t < start + length
        if event.t >= start + length and not scanned:
            out.append(ev.Snapshot(start + length, occupied))
            scanned = True
        if isinstance(event, ev.Lifted):
            occupied &= ~chess.BB_SQUARES[event.square]
        elif isinstance(event, ev.Placed):
            occupied |= chess.BB_SQUARES[event.square]
        if not lost:
            out.append(event)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--outage", type=float, nargs="+", default=[0.5, 1.0, 3.0, 5.0],
                        help="outage lengths to draw from, seconds of play")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    games = corpus()
    exact, failures = 0, []
    for i in range(args.games):
        rendered = render_game(games[rng.randrange(len(games))], seed=i)
        log = read_sensor_log(rendered.jsonl().splitlines())
        start = log.events[-1].t * rng.uniform(0.1, 0.9)
        length = rng.choice(args.outage)
        record = replay_events(log.start, with_outage(log.events, log.start.fen, start, length),
                               PROFILES["fide"])
        alerts = [line["code"] for line in record.report if line["kind"] == "alert"]
        if [m.move for m in record.moves] == rendered.moves and not alerts:
            exact += 1
        else:
            failures.append((i, round(start, 2), length, alerts[:2]))
    print(f"{exact} of {args.games} games exact with no alert after an outage")
    for failure in failures:
        print("  game %d, outage at %.2f s for %.1f s: alerts %s" % failure)


if __name__ == "__main__":
    main()
