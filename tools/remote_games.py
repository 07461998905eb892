"""How games against a computer come out, without processes: the referee in simulated time,
the emulator's person (firmware_bridge.player: reads only the LED frames, the simulator's
hands) and a computer that answers with random legal moves once its turn comes.

    python tools/remote_games.py [--games N] [--plies P]

Every game must record exactly the moves chosen, raise no alert, and replay from its
sensor log to the same PGN; the failures are counted by class.
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

from board_ctl.core.profiles import PROFILES  # noqa: E402
from board_ctl.replay import replay_events  # noqa: E402
from firmware_bridge.player import Person, Script  # noqa: E402
from remotekit import play  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--plies", type=int, default=80)
    args = parser.parse_args()
    failures: Counter[str] = Counter()
    plies = alerts = 0
    kinds: Counter[str] = Counter()
    start = time.process_time()
    for seed in range(args.games):
        use_clock = seed % 2 == 1
        remote = seed % 4 < 2
        script = Script.parse("mistake@2,mistake@5" if seed % 5 == 4 else "")
        person = Person(seed=seed, use_clock=use_clock, script=script)
        played = play(person, remote=remote, seed=seed, max_plies=args.plies,
                      time_control="900+5" if use_clock else None)
        moves = [m.move for m in played.record.moves]
        plies += len(moves)
        alerts += len(played.alerts)
        for line in person.log:
            if "(" in line:
                kinds[line.rsplit("(", 1)[1].split(")")[0].split(":")[0]] += 1
        if moves != played.chosen:
            first = next((i for i, (a, b) in enumerate(zip(moves, played.chosen)) if a != b),
                         min(len(moves), len(played.chosen)))
            failures[f"record differs from the moves chosen (first at ply {first + 1})"] += 1
        elif played.alerts:
            failures[f"alert {played.alerts[0]['code']}"] += 1
        elif replay_events(played.start, played.events, PROFILES["fide"]).pgn_text() \
                != played.record.pgn_text():
            failures["the sensor log replays to another PGN"] += 1
    print(f"{args.games} games, {plies} plies ({sum(kinds.values())} made by hand: "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")")
    print(f"exact: {args.games - sum(failures.values())} of {args.games}; alerts: {alerts}; "
          f"failures: {dict(failures) or 'none'}; {time.process_time() - start:.0f} s CPU")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
