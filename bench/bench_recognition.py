"""Move recognition: how often the referee reads real games right, behaviour by behaviour.

    python bench/bench_recognition.py [--behaviours NAME,...|new|old] [--clock both|yes|no]
                                      [--pgn FILE] [--games N] [--every K]
                                      [--seeds S] [--seed BASE]
                                      [--limit N] [--quick] [--jobs J] [--wrong-dir DIR]

Every game of the corpus (tests/data/games/) is rendered as a sensor log with each
handling behaviour of the simulator (board_ctl.simulate.behaviours: the older
renderings and the handling mishaps of real players), with and without a clock where
the behaviour allows both, with fixed seeds, and replayed through the real referee as
`board-ctl replay` does (the log written as JSON Lines and read back). Each rendering
carries its ruling (docs/recognition.md): the moves, the result, the alerts and, where
the ruling names them, their squares. Printed per behaviour and clock mode:

  logs            logs rendered (games that cannot show the behaviour are left out)
  exact           the moves and the result as played
  right alerts    exactly the alerts the ruling expects (codes, and squares where named)
  false alerts    an alert the ruling does not expect
  missed alerts   an expected alert not raised
  silently wrong  a move or result not played, and nothing says so: no alert beyond the
                  expected ones, no move flagged uncertain
  uncertain       a report `move` line flagged `"uncertain": [readings...]`

Exit status 0 when every log is exact with the right alerts and none is uncertain, 1
otherwise, 2 for bad options.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from board_ctl.core.profiles import PROFILES  # noqa: E402
from board_ctl.record import GameRecord  # noqa: E402
from board_ctl.replay import replay_log  # noqa: E402
from board_ctl.sensorlog import read_sensor_log  # noqa: E402
from board_ctl.simulate import (  # noqa: E402
    BEHAVIOURS,
    NoEligiblePly,
    RenderedGame,
    render_behaviour,
)

SEED_STRIDE = 100_003  # seed k of game i: BASE + i + k * SEED_STRIDE
COLUMNS = ("logs", "exact", "right alerts", "false alerts", "missed alerts",
           "silently wrong", "uncertain")


@dataclass(frozen=True)
class Verdict:
    """What one replayed log came to against its ruling."""

    exact: bool  # the moves and the result as played
    right_alerts: bool  # exactly the alerts expected
    false_alert: bool  # an alert not expected
    missed_alert: bool  # an expected alert not raised
    uncertain: bool  # a move flagged uncertain
    silently_wrong: bool  # not exact, and nothing flags it

    @property
    def correct(self) -> bool:
        return self.exact and self.right_alerts and not self.uncertain


def _alerts(record: GameRecord) -> list[tuple[str, frozenset[str]]]:
    return [(line["code"], frozenset(line.get("squares") or ()))
            for line in record.report if line["kind"] == "alert"]


def judge(rendered: RenderedGame, record: GameRecord) -> Verdict:
    """The verdict on one replay of `rendered` (its record) against the ruling it carries."""
    moves = [made.move for made in record.moves]
    result = record.result.result if record.result else "*"
    expected_moves = rendered.moves
    expected_alerts = list(rendered.expected_alerts)
    if rendered.ends_with_capture_in_hand():  # (not recorded, and said)
        expected_moves = expected_moves[:-1]
        expected_alerts.append(("move-unfinished", len(expected_moves)))
    exact = moves == expected_moves and result == rendered.result
    raised = _alerts(record)
    left = list(raised)
    missed = False
    for i, (code, _) in enumerate(expected_alerts):
        squares = rendered.expected_squares[i] if i < len(rendered.expected_squares) else None
        match = next((a for a in left if a[0] == code
                      and (squares is None or a[1] == frozenset(squares))), None)
        if match is None:
            missed = True
        else:
            left.remove(match)
    false_alert = bool(left)
    uncertain = any(line["kind"] == "move" and line.get("uncertain")
                    for line in record.report)
    return Verdict(exact=exact, right_alerts=not missed and not false_alert,
                   false_alert=false_alert, missed_alert=missed, uncertain=uncertain,
                   silently_wrong=not exact and not false_alert and not uncertain)


def replay(rendered: RenderedGame) -> GameRecord:
    """As `board-ctl replay` does: the log as JSON Lines, read back, replayed."""
    log = read_sensor_log(io.StringIO(rendered.jsonl()))
    if log.errors:
        raise AssertionError(f"the simulator wrote an unreadable log: {log.errors[0]}")
    return replay_log(log, PROFILES[rendered.profile])


@dataclass
class Row:
    behaviour: str
    use_clock: bool
    counts: Counter[str] = field(default_factory=Counter)
    wrong: list[tuple[int, int, Verdict]] = field(default_factory=list)  # (game, seed, …)

    def add(self, verdict: Verdict, game: int, seed: int) -> None:
        c = self.counts
        c["logs"] += 1
        c["exact"] += verdict.exact
        c["right alerts"] += verdict.right_alerts
        c["false alerts"] += verdict.false_alert
        c["missed alerts"] += verdict.missed_alert
        c["silently wrong"] += verdict.silently_wrong
        c["uncertain"] += verdict.uncertain
        if not verdict.correct:
            self.wrong.append((game, seed, verdict))


def cases(names: Iterable[str], clock: str) -> Iterator[tuple[str, bool]]:
    for name in names:
        for use_clock in BEHAVIOURS[name].clock_modes:
            if clock == "both" or (clock == "yes") == use_clock:
                yield name, use_clock


def run_case(name: str, use_clock: bool, games: list[tuple[int, chess.pgn.Game]],
             seeds: int, base: int, wrong_dir: Path | None = None,
             limit: int | None = None) -> Row:
    """Every game that can show the behaviour, rendered with each seed and judged; at
    most `limit` logs."""
    row = Row(name, use_clock)
    for k in range(seeds):
        for index, game in games:
            if limit is not None and row.counts["logs"] >= limit:
                return row
            seed = base + index + k * SEED_STRIDE
            try:
                rendered = render_behaviour(game, name, seed=seed, use_clock=use_clock)
            except NoEligiblePly:
                continue
            record = replay(rendered)
            verdict = judge(rendered, record)
            row.add(verdict, index, seed)
            if wrong_dir is not None and not verdict.correct:
                _keep(wrong_dir, row, rendered, record, index, seed, verdict)
    return row


def _keep(wrong_dir: Path, row: Row, rendered: RenderedGame, record: GameRecord,
          index: int, seed: int, verdict: Verdict) -> None:
    """The log, and what it should have given against what it gave, for a look."""
    stem = f"{row.behaviour}-{'clock' if row.use_clock else 'no-clock'}-g{index}-s{seed}"
    wrong_dir.mkdir(parents=True, exist_ok=True)
    rendered.write(wrong_dir / f"{stem}.jsonl")
    expected = {"moves": [m.uci() for m in rendered.moves], "result": rendered.result,
                "alerts": rendered.expected_alerts, "squares": rendered.expected_squares,
                "profile": rendered.profile, "verdict": verdict.__dict__,
                "plies": [[p.ply, p.uci, p.style, list(p.notes)] for p in rendered.plies]}
    (wrong_dir / f"{stem}.expected.json").write_text(json.dumps(expected) + "\n")
    (wrong_dir / f"{stem}.report.jsonl").write_text("\n".join(record.report_lines()) + "\n")


@dataclass(frozen=True)
class GameSource:
    """Which games to render, by name: what a worker process is sent, so that it reads
    the games itself (a parsed game is a deep tree of nodes that pickle cannot send)."""

    pgn: tuple[Path, ...]  # () for the corpus
    first: int  # the first N games (0: all)
    every: int  # every K-th game of those

    def load(self) -> tuple[int, list[tuple[int, chess.pgn.Game]]]:
        """(how many games there are, the chosen ones with their indices)."""
        if self not in _LOADED:
            from corpus import corpus

            everything = list(enumerate(_read_games(list(self.pgn)) if self.pgn
                                        else corpus()))
            _LOADED[self] = len(everything), everything[: self.first or None][:: self.every]
        return _LOADED[self]


_LOADED: dict[GameSource, tuple[int, list[tuple[int, chess.pgn.Game]]]] = {}


def _run_case_in_worker(args: tuple[Any, ...]) -> Row:
    name, use_clock, source, *rest = args
    return run_case(name, use_clock, source.load()[1], *rest)


def table(rows: list[Row]) -> str:
    width = max(len(r.behaviour) for r in rows) + 2
    head = f"{'behaviour':<{width}}{'clock':<7}" + "".join(f"{c:>{len(c) + 2}}" for c in COLUMNS)
    lines = [head]
    total: Counter[str] = Counter()
    for r in rows:
        total.update(r.counts)
        lines.append(f"{r.behaviour:<{width}}{'yes' if r.use_clock else 'no':<7}"
                     + "".join(f"{r.counts[c]:>{len(c) + 2}}" for c in COLUMNS))
    lines.append(f"{'all':<{width}}{'':<7}" + "".join(f"{total[c]:>{len(c) + 2}}"
                                                     for c in COLUMNS))
    return "\n".join(lines)


def _behaviour_names(text: str) -> list[str]:
    if text == "all":
        return list(BEHAVIOURS)
    if text in ("new", "old"):
        return [n for n, b in BEHAVIOURS.items() if b.new == (text == "new")]
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BEHAVIOURS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown behaviour {unknown[0]!r}; one of {', '.join(BEHAVIOURS)}")
    return names


def _read_games(paths: list[Path]) -> list[chess.pgn.Game]:
    games = []
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as stream:
            while (game := chess.pgn.read_game(stream)) is not None:
                if not game.errors:
                    games.append(game)
    return games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="behaviours: " + ", ".join(BEHAVIOURS))
    parser.add_argument("--behaviours", type=_behaviour_names, default=list(BEHAVIOURS),
                        metavar="NAMES", help="comma-separated names, or all, new, old "
                        "(default all)")
    parser.add_argument("--clock", choices=("both", "yes", "no"), default="both",
                        help="render with a clock, without, or both where allowed")
    parser.add_argument("--pgn", type=Path, action="append", metavar="FILE",
                        help="games to render (repeatable; default: the corpus, "
                        "tests/data/games/*.pgn)")
    parser.add_argument("--games", type=int, default=0, help="the first N games (0: all)")
    parser.add_argument("--every", type=int, default=1, metavar="K",
                        help="every K-th game of those")
    parser.add_argument("--seeds", type=int, default=1, help="renderings per game")
    parser.add_argument("--seed", type=int, default=0, help="base seed (game i: BASE + i)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="at most N logs per behaviour and clock mode")
    parser.add_argument("--quick", action="store_true",
                        help="a small size for a test: one seed, at most 4 logs per "
                        "behaviour and clock mode (every 7th game)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--wrong-dir", type=Path, metavar="DIR",
                        help="write every log not read right here, with its expectation "
                        "and the report it gave")
    args = parser.parse_args(argv)
    if args.games < 0 or args.every < 1 or args.seeds < 1 or args.jobs < 1 or \
            (args.limit is not None and args.limit < 1):
        parser.error("--games must be 0 or more; --every, --seeds, --limit and --jobs "
                     "1 or more")
    if args.quick:
        args.every, args.seeds, args.limit = max(args.every, 7), 1, min(args.limit or 4, 4)

    source = GameSource(tuple(args.pgn or ()), args.games, args.every)
    available, games = source.load()
    todo = [(name, use_clock, source, args.seeds, args.seed, args.wrong_dir, args.limit)
            for name, use_clock in cases(args.behaviours, args.clock)]
    cap = f", at most {args.limit} logs a case" if args.limit else ""
    print(f"{len(games)} games of {available}, {args.seeds} seed(s) each (base "
          f"{args.seed}){cap}, {len(todo)} behaviour/clock cases; the referee of this "
          "checkout", flush=True)
    rows = []
    done_rows: Iterable[Row]
    with contextlib.ExitStack() as stack:
        if args.jobs > 1:
            import multiprocessing

            pool = stack.enter_context(multiprocessing.Pool(args.jobs))
            done_rows = pool.imap(_run_case_in_worker, todo, chunksize=1)
        else:
            done_rows = map(_run_case_in_worker, todo)
        for done in done_rows:
            rows.append(done)
            print(f"  {done.behaviour} ({'clock' if done.use_clock else 'no clock'}): "
                  f"{done.counts['logs']} logs, {len(done.wrong)} not right", file=sys.stderr,
                  flush=True)
    print(table(rows))
    ok = all(not r.wrong for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
