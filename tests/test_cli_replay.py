"""`board-ctl replay` as a user runs it: the public command and its files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import read_pgn

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
    game = read_pgn(tmp_path / "g.pgn")
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
    game = read_pgn(tmp_path / "g.pgn")
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


# ---------------------------------------------------------------- edges (issue 8 §2, §6)

MOVES = [{"t": 1.0, "ev": "lift", "sq": "e2"}, {"t": 1.6, "ev": "place", "sq": "e4"},
         {"t": 2.0, "ev": "clock", "side": "white"}]


def jsonl(*objects: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


def run_in(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, input=stdin)


class Done:
    """What `board-ctl ARGS` did, run in this process (quicker than a new one)."""

    def __init__(self, returncode: int, stderr: str) -> None:
        self.returncode = returncode
        self.stderr = stderr


def cli(cwd: Path, *args: str) -> Done:
    import contextlib
    import io
    import os

    from board_ctl.cli import main

    err = io.StringIO()
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(before)
    return Done(code, err.getvalue())


def one_line(done: subprocess.CompletedProcess[str] | Done) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_outputs_that_cannot_be_written_are_named_and_nothing_is_half_written(
        tmp_path: Path) -> None:
    log = tmp_path / "g.jsonl"
    log.write_text(jsonl(*MOVES))
    report = tmp_path / "r.jsonl"
    for bad in ("/nonexistent/dir/x.pgn", str(tmp_path)):  # no such folder; a folder
        done = cli(tmp_path, "replay", str(log), "--report", str(report), "--pgn", bad)
        assert done.returncode == 2
        assert one_line(done).startswith(f"board-ctl replay: cannot write {bad}: ")
        assert not report.exists()  # all or nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl"]  # no temporary left


def test_replay_reads_standard_input_with_a_bom(tmp_path: Path) -> None:
    done = run_in(tmp_path, "replay", "-", "--pgn", "out.pgn", stdin="\ufeff" + jsonl(*MOVES))
    assert done.returncode == 0, done.stderr
    assert "<stdin>: 1 ply, 0 alerts" in done.stderr
    game = read_pgn(tmp_path / "out.pgn")
    assert game is not None and [m.uci() for m in game.mainline_moves()] == ["e2e4"]


def test_an_empty_log_says_nothing_was_played(tmp_path: Path) -> None:
    for name, text in [("empty.jsonl", ""), ("blank.jsonl", "\n\n"),
                       ("start.jsonl", jsonl({"t": 0, "ev": "start", "time_control": "300"}))]:
        (tmp_path / name).write_text(text)
        done = cli(tmp_path, "replay", name, "--pgn", "out.pgn")
        assert done.returncode == 1
        assert one_line(done) == (f"board-ctl replay: {name}: nothing was played (the log has "
                                  "no event); nothing written")
        assert not (tmp_path / "out.pgn").exists()


def test_a_start_position_that_cannot_be_played_is_fatal(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(jsonl({"t": 0, "ev": "start", "fen": "rnbqkbnr/pppppppp/8 w KQkq - 0 1"},
                         *MOVES))
    done = cli(tmp_path, "replay", str(log), "--pgn", "out.pgn")
    assert done.returncode == 2
    assert one_line(done).startswith(f"board-ctl replay: {log}:line 1: bad FEN ")
    assert not (tmp_path / "out.pgn").exists()  # not a game from the standard position


@pytest.mark.parametrize("path, words", [("/dev/zero", "not a regular file"),
                                         ("missing.jsonl", "No such file or directory")])
def test_a_log_that_is_no_file_is_refused_at_once(tmp_path: Path, path: str,
                                                  words: str) -> None:
    done = cli(tmp_path, "replay", path)
    assert done.returncode == 2
    assert one_line(done) == f"board-ctl replay: cannot read {path}: {words}; nothing written"


def test_lines_of_any_size_cost_only_themselves(tmp_path: Path) -> None:
    """Issue 8 §1-2: 4,000 digits, 3,000 nested brackets, 1e308 on an external clock."""
    good = write_opera(tmp_path).read_text().splitlines()
    bad = ['{"t": 1' + "0" * 4000 + ', "ev": "lift", "sq": "e2"}', "[" * 3000,
           '{"t": 5.0, "ev": "clock", "side": "white", "white": 1e308, "black": 1}']
    log = tmp_path / "bad.jsonl"
    log.write_text("\n".join(good[:2] + bad + good[2:]) + "\n")
    done = cli(tmp_path, "replay", str(log), "--pgn", "g.pgn")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    for number in (3, 4, 5):
        assert f"{log}:line {number}: " in done.stderr
    game = read_pgn(tmp_path / "g.pgn")
    assert game is not None and len(list(game.mainline_moves())) >= 30


@pytest.mark.parametrize("tags, words", [
    ({"_x": "1"}, "'_x' is not a PGN tag name"),
    ({"Annotator": "a\rb"}, "non-printing character '\\r'"),
    ({"Variant": "foo"}, "'foo' is not standard chess"),
])
def test_bad_tags_in_a_log_are_left_out_and_the_pgn_written(tmp_path: Path,
                                                            tags: dict[str, str],
                                                            words: str) -> None:
    log = tmp_path / "tags.jsonl"
    log.write_text(jsonl({"t": 0, "ev": "start", "tags": {**tags, "White": "Ann"}}, *MOVES))
    done = cli(tmp_path, "replay", str(log), "--pgn", "out.pgn")
    assert done.returncode == 0, done.stderr
    assert f"{log}:line 1: " in done.stderr and words in done.stderr
    game = read_pgn(tmp_path / "out.pgn")
    assert game is not None and game.headers["White"] == "Ann"
    assert not set(tags) & set(game.headers)


@pytest.mark.parametrize("name", ["game.pgn", "game.txt"])
def test_a_pgn_given_to_replay_is_one_line_saying_what_replay_reads(
        tmp_path: Path, name: str) -> None:
    """It printed one "not valid JSON" line for each line of the PGN (24 for a game of
    the archive) and never said that replay reads the sensor log."""
    pgn = tmp_path / name
    pgn.write_text((REPO / "tests" / "data" / "games" / "classics.pgn").read_text(
        encoding="utf-8"), encoding="utf-8")  # real games, as an archive exports them
    done = run("replay", str(pgn), "--pgn", str(tmp_path / "out.pgn"))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"board-ctl replay: {pgn} is a PGN file, not a sensor log: replay reads a game's "
        f"sensor log (GAME.sensor.jsonl, beside its PGN; `board-ctl export GAME "
        f"--sensor-log FILE` writes one from the archive); nothing written"]
    assert not (tmp_path / "out.pgn").exists()


def test_a_file_with_no_json_at_all_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\nworld\n\nagain\n", encoding="utf-8")
    done = run("replay", str(junk))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"board-ctl replay: {junk} is not a sensor log (3 lines, none of them JSON): replay "
        f"reads a game's sensor log (GAME.sensor.jsonl, beside its PGN); nothing written"]
