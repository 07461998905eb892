"""`board-ctl replay` as a user runs it: the public command and its files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chess.pgn

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
REPO = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60)


def write_opera(tmp_path: Path) -> Path:
    """The spec's own example (docs/examples), else a rendering of the same game."""
    source = EXAMPLES / "opera-game.jsonl"
    if source.exists():
        return source
    from board_ctl.simulate import render_game
    from corpus import corpus
    opera = next(g for g in corpus() if "Opera" in g.headers.get("Event", "")
                 or "Morphy" in g.headers.get("White", ""))
    path = tmp_path / "opera.jsonl"
    render_game(opera, seed=1).write(path)
    return path


def test_replay_writes_pgn_and_report(tmp_path: Path) -> None:
    log = write_opera(tmp_path)
    done = run("replay", str(log), "--pgn", str(tmp_path / "g.pgn"),
               "--report", str(tmp_path / "r.jsonl"))
    assert done.returncode == 0, done.stderr
    game = chess.pgn.read_game((tmp_path / "g.pgn").open())
    assert game is not None and game.end().board().is_checkmate()
    report = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    moves = [line for line in report if line["kind"] == "move"]
    assert len(moves) == 33 and moves[-1]["san"] == "Rd8#"
    assert [line["kind"] for line in report].count("alert") == 0
    assert report[-1]["kind"] in ("result", "leds")
    assert {"kind": "result", "result": "1-0", "termination": "checkmate"}.items() <= next(
        line for line in report if line["kind"] == "result").items()
    assert any(line["kind"] == "leds" for line in report)
    assert [line["t"] for line in report] == sorted(line["t"] for line in report)


def test_bad_lines_are_reported_with_their_number_and_skipped(tmp_path: Path) -> None:
    good = write_opera(tmp_path).read_text().splitlines()
    mangled = good[:3] + ["{not json", '{"t": 9.0, "ev": "teleport", "sq": "e4"}',
                          '{"t": 9.1, "ev": "lift", "sq": "z9"}', "[1, 2]"] + good[3:]
    log = tmp_path / "mangled.jsonl"
    log.write_text("\n".join(mangled) + "\n")
    done = run("replay", str(log), "--pgn", str(tmp_path / "g.pgn"))
    assert done.returncode == 0
    for number, words in [(4, "not valid JSON"), (5, "unknown event 'teleport'"),
                          (6, "square name"), (7, "not a JSON object")]:
        assert f"{log}:line {number}: " in done.stderr and words in done.stderr, done.stderr
    game = chess.pgn.read_game((tmp_path / "g.pgn").open())
    assert game is not None and len(list(game.mainline_moves())) == 33


def test_unreadable_log_is_a_clear_error(tmp_path: Path) -> None:
    done = run("replay", str(tmp_path / "missing.jsonl"))
    assert done.returncode == 2
    assert "cannot read" in done.stderr and "Traceback" not in done.stderr
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\xff\xfe garbage\n")
    done = run("replay", str(garbage))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_profile_option(tmp_path: Path) -> None:
    log = tmp_path / "illegal.jsonl"
    lines = [{"t": 1.0, "ev": "lift", "sq": "g1"}, {"t": 1.5, "ev": "place", "sq": "g3"},
             {"t": 2.0, "ev": "clock", "side": "white"}]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    for profile, penalty in [("fide", 120), ("blitz", 60), ("casual", None)]:
        done = run("replay", str(log), "--profile", profile, "--report", str(tmp_path / "r"))
        assert done.returncode == 0, done.stderr
        report = [json.loads(x) for x in (tmp_path / "r").read_text().splitlines()]
        penalties = [line["seconds"] for line in report if line["kind"] == "penalty"]
        assert penalties == ([penalty] if penalty else [])
