"""The referee's effects on many rendered logs, this checkout against another commit's.

    python tools/referee_diff.py [--against REF] [--games N] [--seeds S] [--jobs J]
                                 [--handling] [--outputs]

For work on the referee that must not change what it does (speed, a carve): the corpus's
games are rendered as sensor logs in many ways (with and without a clock, sloppy hands,
each scripted violation, sim2's physical behaviours, games against a computer and online
ones through the LiveChess endpoint's release rule), and every log is replayed through
both referees, event by event. Every effect (moves, alerts, notes, penalties, LED frames
with their times, the result) must be the same; the first difference of each log that
differs is printed, with the event that caused it.

The logs are rendered once, by this checkout's simulator; REF (default HEAD) is exported
with `git archive` and run in its own process.

`--handling` adds the simulator's handling behaviours (board_ctl.simulate.behaviours:
slow slides, knocked pieces, knock-off captures, illegal castling, a blitz scramble).
`--outputs` compares what `board-ctl replay` writes instead of the effects: the log
reader's errors and warnings, the report's lines and the PGN's text (for work on the
reader and the writers, which must not change a byte).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

Log = tuple[str, str, dict]  # (name, sensor-log text, referee options)


def renderings(games: int, seeds: int, handling: bool = False) -> Iterator[Log]:
    """The logs to compare: every rendering kind over the first `games` corpus games."""
    import sim2
    from corpus import corpus

    from board_ctl.simulate import RenderStyle, render_game
    from board_ctl.simulate.violations import (NEEDS_CLOCK, VIOLATION_CODES, NoEligiblePly,
                                               render_violation)

    chosen = corpus()[:games]
    sloppy = dict(bounce_pairs=(0, 10), slide_prob=0.9, idle_lift_prob=0.2,
                  capture_styles=(1, 1, 1, 1, 1), promotion_styles=(1, 1),
                  promote_timings=(1, 1, 1, 1))
    for i, game in enumerate(chosen):
        for seed in range(seeds):
            for clock in (True, False):
                tag = f"g{i}s{seed}{'c' if clock else 'n'}"
                yield (f"{tag}-plain", render_game(
                    game, seed=seed, style=RenderStyle(use_clock=clock)).jsonl(), {})
                yield (f"{tag}-sloppy", render_game(
                    game, seed=seed, style=RenderStyle(use_clock=clock, **sloppy)).jsonl(), {})
                if not clock:
                    yield (f"{tag}-released", render_game(
                        game, seed=seed, style=RenderStyle(use_clock=False)).jsonl(),
                        {"release_completes": True})
                for code in VIOLATION_CODES:
                    if code in NEEDS_CLOCK and not clock:
                        continue
                    try:
                        rendered = render_violation(game, code, seed=seed,
                                                    style=RenderStyle(use_clock=clock))
                    except NoEligiblePly:
                        continue
                    yield f"{tag}-{code}", rendered.jsonl(), {}
            for kind in (None, *sim2.VIOLATIONS):
                try:
                    case = sim2.render_case(game, seed * 7 + i, violation=kind,
                                            overlap_p=0.3, skew_p=0.3)
                except sim2.NotApplicable:
                    continue
                yield f"g{i}s{seed}-sim2-{kind or 'clean'}", case.jsonl(), {}
            if handling:
                yield from handling_logs(game, f"g{i}s{seed}", seed * 1000 + i)
    yield from remote_games(max(4, seeds * 4))


def handling_logs(game: object, tag: str, seed: int) -> Iterator[Log]:
    """The game rendered with each handling behaviour, in each clock mode it allows."""
    from board_ctl.simulate import BEHAVIOURS, NoEligiblePly, render_behaviour

    for behaviour in BEHAVIOURS.values():
        if not behaviour.new:
            continue
        for clock in behaviour.clock_modes:
            try:
                rendered = render_behaviour(game, behaviour.name, seed=seed,  # type: ignore[arg-type]
                                            use_clock=clock)
            except NoEligiblePly:
                continue
            name = f"{tag}{'c' if clock else 'n'}-{behaviour.name}"
            yield name, rendered.jsonl(), {"profile": rendered.profile}


def remote_games(count: int) -> Iterator[Log]:
    """Games against a (random) computer, as the emulator's person plays them: their fed
    events written back as sensor logs."""
    from remotekit import play

    from board_ctl.core import events as ev
    from board_ctl.sensorlog import dumps, event_to_json, start_to_json
    from firmware_bridge.player import Person, Script

    for seed in range(count):
        use_clock = seed % 2 == 1
        script = Script.parse("mistake@2,mistake@5" if seed % 5 == 4 else "")
        played = play(Person(seed=seed, use_clock=use_clock, script=script),
                      remote=seed % 4 < 2, seed=seed, max_plies=60,
                      time_control="900+5" if use_clock else None)
        lines = [start_to_json(played.start)] + [
            event_to_json(event) for event in played.events if not isinstance(event, ev.Tick)]
        yield f"remote{seed}", "".join(dumps(obj) + "\n" for obj in lines), {}


def effects_of(text: str, options: dict) -> list[str]:
    """Every effect the referee gives for this log, in order, each tagged with the
    number of the event that caused it (-1: the log's end)."""
    from board_ctl.core.profiles import PROFILES
    from board_ctl.core.referee import Referee
    from board_ctl.core.timecontrol import TimeControl
    from board_ctl.sensorlog import read_sensor_log

    log = read_sensor_log(text.splitlines())
    start = log.start
    tc = TimeControl.parse(start.time_control) if start.time_control else None
    referee = Referee(start.fen, PROFILES[options.get("profile", "fide")], time_control=tc,
                      remote=start.remote,
                      release_completes=options.get("release_completes",
                                                    start.release_completes))
    out: list[str] = []
    for number, event in enumerate(log.events):
        out += [f"{number} {shown(effect)}" for effect in referee.feed(event)]
    out += [f"-1 {shown(effect)}" for effect in referee.finish()]
    return out


def shown(effect: object) -> str:
    """An effect's repr without the fields at their defaults: a field one side's effects
    have and the other's do not (added since) is no difference while it is unused."""
    import dataclasses

    if not dataclasses.is_dataclass(effect):
        return repr(effect)
    fields = [f"{field.name}={getattr(effect, field.name)!r}"
              for field in dataclasses.fields(effect)
              if field.default is dataclasses.MISSING or getattr(effect, field.name) != field.default]
    return f"{type(effect).__name__}({', '.join(fields)})"


PGN_DATE = "2026.01.01"  # (the PGN's Date tag: the same text on both sides)


def outputs_of(text: str, options: dict) -> list[str]:
    """What `board-ctl replay` writes for this log: the reader's errors and warnings, the
    report's lines, the PGN's lines."""
    import dataclasses
    import datetime as dt
    import io

    from board_ctl.core.profiles import PROFILES
    from board_ctl.replay import replay_log
    from board_ctl.sensorlog import read_sensor_log

    log = read_sensor_log(io.StringIO(text))
    if "release_completes" in options:
        log.start = dataclasses.replace(log.start, release_completes=options["release_completes"])
    record = replay_log(log, PROFILES[options.get("profile", "fide")])
    out = [f"error {e}" for e in log.errors] + [f"warning {w}" for w in log.warnings]
    out += record.report_lines()
    out += record.pgn_text(dt.date.fromisoformat(PGN_DATE.replace(".", "-"))).splitlines()
    return out


def digest(lines: list[str]) -> str:
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()


COMPARED = {"effects": effects_of, "outputs": outputs_of}


def worker(logs_path: str, out_path: str, what: str = "effects") -> None:
    """Replay every log with the board_ctl on sys.path; write each log's digest."""
    logs = json.loads(Path(logs_path).read_text())
    compared = COMPARED[what]
    digests = {name: digest(compared(text, options)) for name, text, options in logs}
    Path(out_path).write_text(json.dumps(digests))


def run_worker(code: Path, logs_path: Path, out_path: Path, what: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(code))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                    str(logs_path), str(out_path), what], env=env, check=True)
    return json.loads(out_path.read_text())


def first_difference(code: Path, text: str, options: dict, what: str = "effects") -> str:
    """The first effect (or output line) that differs, this checkout's against `code`'s."""
    here = COMPARED[what](text, options)
    script = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
              "from referee_diff import COMPARED; "
              "print(json.dumps(COMPARED[sys.argv[3]](sys.stdin.read(), "
              "json.loads(sys.argv[2]))))")
    there = json.loads(subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).resolve().parent), json.dumps(options),
         what], input=text, capture_output=True, text=True, check=True, cwd=code,
        env=dict(os.environ, PYTHONPATH=str(code))).stdout)
    for i, (a, b) in enumerate(zip(here, there)):
        if a != b:
            return f"{what} line {i}:\n    here:  {a}\n    there: {b}"
    return f"one stream is longer: {len(here)} lines here, {len(there)} there"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="HEAD", help="the commit to compare with")
    parser.add_argument("--games", type=int, default=40, help="the first N corpus games")
    parser.add_argument("--seeds", type=int, default=2, help="renderings of each kind a game")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes a side")
    parser.add_argument("--handling", action="store_true",
                        help="add the simulator's handling behaviours to the logs")
    parser.add_argument("--outputs", action="store_true",
                        help="compare the reader's errors, the report and the PGN, not the "
                        "effects")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0

    from bench_service import export_commit

    sys.path.insert(0, str(ROOT))
    what = "outputs" if args.outputs else "effects"
    logs = list(renderings(args.games, args.seeds, args.handling))
    events = sum(text.count("\n") for _, text, _ in logs)
    print(f"{len(logs)} logs, {events} events; {what} against {args.against}", flush=True)
    with tempfile.TemporaryDirectory(prefix="referee-diff-") as tmp:
        other = export_commit(args.against, Path(tmp) / "other")
        chunks = [logs[i::args.jobs] for i in range(args.jobs)]
        jobs = []
        for side, code in (("here", ROOT), ("there", other)):
            for i, chunk in enumerate(chunks):
                path = Path(tmp) / f"logs{i}.json"
                path.write_text(json.dumps(chunk))
                jobs.append((side, code, path, Path(tmp) / f"{side}{i}.out"))
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            done = list(pool.map(run_worker, *zip(*[(c, p, o, what) for _, c, p, o in jobs])))
        results: dict[str, dict[str, str]] = {"here": {}, "there": {}}
        for (side, *_), digests in zip(jobs, done):
            results[side].update(digests)
        differing = [(name, text, options) for name, text, options in logs
                     if results["here"][name] != results["there"][name]]
        print("differing:", " ".join(name for name, _, _ in differing))
        for name, text, options in differing[:10]:
            print(f"{name}: {first_difference(other, text, options, what)}")
    print(f"same {what}: {len(logs) - len(differing)} of {len(logs)} logs"
          + (f"; {len(differing)} differ" if differing else ""))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
