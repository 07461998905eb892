"""bench/bench_recognition.py counts right: checked on logs whose truth is known (a log
corrupted on purpose is silently wrong; an alert removed, added or on the wrong squares
is missed or false; a move flagged uncertain is never silently wrong)."""

from __future__ import annotations

import copy
import importlib.util
import re
import sys
from pathlib import Path

import chess
import pytest

from board_ctl.simulate import RenderedGame, RenderStyle, render_behaviour, render_game
from test_simulate import GAMES_DIR, classics

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_recognition",
                                               ROOT / "bench" / "bench_recognition.py")
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_recognition"] = bench  # (its dataclasses look their module up)
_spec.loader.exec_module(bench)

PLAIN = RenderStyle(use_clock=False, bounce=False, slides=False, idle_lift_prob=0.0)


def _resigned_game_with_a_last_quiet_move() -> tuple[RenderedGame, chess.Move]:
    """A clean log of a game lost by resignation whose last move was quiet, and another
    legal quiet move of the same piece that would not end the game."""
    for seed, game in enumerate(classics()):
        if game.headers.get("Result") not in ("1-0", "0-1"):
            continue
        board = game.end().board()
        if board.is_checkmate():
            continue
        last = board.pop()
        if board.is_capture(last) or last.promotion or board.is_castling(last):
            continue
        for other in board.legal_moves:
            if (other.from_square == last.from_square and other != last
                    and not board.is_capture(other) and not other.promotion
                    and not board.is_castling(other)):
                board.push(other)
                over = board.outcome(claim_draw=True) is not None or board.is_check()
                board.pop()
                if not over:
                    return render_game(game, seed=seed, style=PLAIN), other
    raise AssertionError("no such game in the corpus")


def test_a_clean_log_is_exact_with_the_right_alerts() -> None:
    rendered, _ = _resigned_game_with_a_last_quiet_move()
    verdict = bench.judge(rendered, bench.replay(rendered))
    assert verdict == bench.Verdict(exact=True, right_alerts=True, false_alert=False,
                                    missed_alert=False, uncertain=False,
                                    silently_wrong=False)
    assert verdict.correct


def test_a_log_corrupted_into_another_legal_move_counts_as_silently_wrong() -> None:
    rendered, other = _resigned_game_with_a_last_quiet_move()
    corrupted = copy.deepcopy(rendered)
    last = corrupted.plies[-1]
    target = chess.square_name(corrupted.moves[-1].to_square)
    for line in corrupted.lines[last.first_line:last.end_line]:
        if line.get("ev") == "place" and line["sq"] == target:
            line["sq"] = chess.square_name(other.to_square)  # the piece put down elsewhere
    record = bench.replay(corrupted)
    assert [m.move for m in record.moves][-1] == other  # the referee read the other move
    verdict = bench.judge(corrupted, record)
    assert not verdict.exact and verdict.silently_wrong
    assert not verdict.false_alert and not verdict.uncertain


def test_alerts_missed_false_on_the_wrong_squares_and_uncertain_moves() -> None:
    game = classics()[5]
    late = render_behaviour(game, "knocked-restored-late", seed=5)
    record = bench.replay(late)
    alerts = [line for line in record.report if line["kind"] == "alert"]
    assert [a["code"] for a in alerts] == ["position-mismatch"]  # (today's referee)

    expected = late.expected_squares[0]
    assert expected is not None and set(alerts[0]["squares"]) == set(expected)
    assert bench.judge(late, record).correct

    missing = copy.deepcopy(record)
    missing.report = [line for line in missing.report if line["kind"] != "alert"]
    verdict = bench.judge(late, missing)
    assert verdict.missed_alert and not verdict.false_alert and not verdict.right_alerts

    elsewhere = copy.deepcopy(record)
    for line in elsewhere.report:
        if line["kind"] == "alert":
            line["squares"] = ["a1"]
    verdict = bench.judge(late, elsewhere)
    assert verdict.missed_alert and verdict.false_alert and not verdict.right_alerts

    extra = copy.deepcopy(record)
    extra.report.append({"t": 1.0, "kind": "alert", "code": "touch-move", "squares": ["e2"]})
    verdict = bench.judge(late, extra)
    assert verdict.false_alert and not verdict.missed_alert and verdict.exact

    # A wrong record is silent unless an alert the ruling does not expect, or an
    # uncertain move, says so: the expected alert is about something else.
    wrong = copy.deepcopy(record)
    wrong.moves = wrong.moves[:-1]
    assert bench.judge(late, wrong).silently_wrong
    extra.moves = extra.moves[:-1]
    assert not bench.judge(late, extra).silently_wrong
    flagged = copy.deepcopy(wrong)
    move_line = next(line for line in flagged.report if line["kind"] == "move")
    move_line["uncertain"] = [move_line["uci"], "a2a3"]
    verdict = bench.judge(late, flagged)
    assert verdict.uncertain and not verdict.silently_wrong and not verdict.correct


def test_the_bench_at_a_small_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = bench.main(["--pgn", str(GAMES_DIR / "classics.pgn"), "--behaviours",
                         "clean,knocked-restored-late", "--limit", "2", "--every", "3",
                         "--wrong-dir", str(tmp_path)])
    out = capsys.readouterr().out
    rows = _rows(out)
    assert [(r[0], r[1]) for r in rows] == [("clean", "yes"), ("clean", "no"),
                                           ("knocked-restored-late", "yes"), ("all", "")]
    for _, _, counts in rows:
        _consistent(counts)
    assert rows[0][2]["logs"] == 2 and rows[-1][2]["logs"] == 6
    wrong = sorted(tmp_path.glob("*.expected.json"))
    assert status == (1 if wrong else 0)


@pytest.mark.slow
def test_the_quick_bench_renders_every_behaviour(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--quick"])
    rows = _rows(capsys.readouterr().out)
    from board_ctl.simulate import BEHAVIOURS

    assert {r[0] for r in rows} == set(BEHAVIOURS) | {"all"}
    for name, _, counts in rows:
        assert counts["logs"] >= 1, name  # every behaviour shows in a few games
        _consistent(counts)


def _rows(out: str) -> list[tuple[str, str, dict[str, int]]]:
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("behaviour"))
    rows = []
    for line in lines[head + 1:]:
        m = re.match(r"(\S+)\s+(yes|no)?\s+([\d\s]+)$", line)
        assert m, line
        numbers = [int(n) for n in m[3].split()]
        rows.append((m[1], m[2] or "", dict(zip(bench.COLUMNS, numbers, strict=True))))
    return rows


def _consistent(c: dict[str, int]) -> None:
    assert 0 <= c["exact"] <= c["logs"] and 0 <= c["right alerts"] <= c["logs"]
    assert c["silently wrong"] <= c["logs"] - c["exact"]
    assert c["right alerts"] + max(c["false alerts"], c["missed alerts"]) <= c["logs"]


@pytest.mark.slow
def test_worker_processes_give_the_same_table_as_one_process(
        capsys: pytest.CaptureFixture[str]) -> None:
    """--jobs J sends each worker the games by name (parsed games do not pickle: too
    deep) and prints the table one process prints."""
    options = ["--behaviours", "slow-slide,knocked-restored-late", "--every", "40",
               "--limit", "2"]
    tables = []
    for jobs in ("1", "2"):
        bench.main([*options, "--jobs", jobs])
        tables.append(capsys.readouterr().out)
    assert "slow-slide" in tables[0] and "knocked-restored-late" in tables[0]
    assert tables[1] == tables[0]
