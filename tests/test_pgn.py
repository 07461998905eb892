"""The PGN the board writes is read without complaint by python-chess and pgn-extract."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.simulate import RenderStyle, render_game, render_violation
from conftest import missing_tool
from corpus import corpus, replay_rendered

PGN_EXTRACT = shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")


def _sample_records():  # type: ignore[no-untyped-def]
    games = corpus()
    yield from (replay_rendered(render_game(g, seed=i)) for i, g in enumerate(games[:40]))
    yield from (replay_rendered(render_game(g, seed=i, style=RenderStyle(start_ply=9)))
                for i, g in enumerate(games[40:60]))
    for i, code in enumerate(["illegal-move", "touch-move", "clock-no-move", "move-changed"]):
        yield replay_rendered(render_violation(games[60 + i], code, seed=i))


@pytest.mark.slow
def test_pgn_reads_back_in_python_chess_with_the_same_moves() -> None:
    for replayed in _sample_records():
        text = replayed.record.pgn_text()
        game = chess.pgn.read_game(io.StringIO(text))
        assert game is not None and not game.errors, text
        assert list(game.mainline_moves()) == replayed.moves
        headers = game.headers
        for tag in ("Event", "Site", "Date", "Round", "White", "Black", "Result"):
            assert tag in headers
        assert headers["Result"] == replayed.result
        assert headers["Date"] != "????.??.??"
        if replayed.rendered.start_fen != chess.STARTING_FEN:
            assert headers["SetUp"] == "1" and headers["FEN"] == replayed.rendered.start_fen


@pytest.mark.slow
def test_pgn_extract_accepts_every_game(tmp_path: Path) -> None:
    if not PGN_EXTRACT:
        missing_tool("pgn-extract is not installed (Debian package pgn-extract)")
    records = list(_sample_records())
    games = tmp_path / "games.pgn"
    games.write_text("\n".join(r.record.pgn_text() for r in records), encoding="utf-8")
    out = tmp_path / "out.pgn"
    done = subprocess.run([PGN_EXTRACT, "-s", "-o", str(out), str(games)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr  # no warning about any game
    kept = out.read_text(encoding="utf-8").count("[Event ")
    assert kept == len(records)


def test_irregularities_are_comments_in_the_pgn() -> None:
    replayed = replay_rendered(render_violation(corpus()[3], "illegal-move", seed=3))
    text = replayed.record.pgn_text()
    assert "illegal-move" in text and "+2 min" in text


@pytest.mark.parametrize("result", ["1-0", "0-1", "1/2-1/2"])
def test_termination_tag(result: str) -> None:
    games = [g for g in corpus() if g.headers["Result"] == result]
    replayed = replay_rendered(render_game(games[0], seed=0))
    headers = chess.pgn.read_headers(io.StringIO(replayed.record.pgn_text()))
    assert headers is not None and headers["Termination"] == "normal"
