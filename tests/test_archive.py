"""The data directory from the command line: where it is by default (systemd's
StateDirectory), `board-ctl games`, `board-ctl export` of one game or several."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from board_ctl.archive import Archive, default_data_dir
from board_ctl.cli import main
from board_ctl.replay import new_game, replay_log
from board_ctl.core.profiles import PROFILES
from board_ctl.sensorlog import read_sensor_log
from servicekit import pgn_moves, without_date
from test_journal import rendered_log


def archive_of(data: Path, n: int) -> list[str]:
    """`n` rendered corpus games journaled in `data`, the last one left in progress."""
    archive = Archive(data)
    ids = []
    for k in range(n):
        _, log = rendered_log(k + 1)
        game_id, writer = archive.new_game(log.start, dt.datetime(2026, 11, 30, 15, k),
                                           "fide")
        referee, _ = new_game(log.start, PROFILES["fide"])
        over = k < n - 1
        for event in log.events[: None if over else len(log.events) // 2]:
            writer.record(event, referee.feed(event))
        if over:
            writer.record(None, referee.finish())
            writer.end(log.events[-1].t)
        writer.close()
        ids.append(game_id)
    return ids


def test_the_data_dir_is_systemds_state_directory(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.delenv("BOARD_CTL_DATA")
    monkeypatch.setenv("STATE_DIRECTORY", f"{tmp_path / 'state'}:{tmp_path / 'other'}")
    monkeypatch.setenv("HOME", "/dev/null/nohome")  # no home at all: never looked at
    assert default_data_dir() == tmp_path / "state"
    monkeypatch.setenv("BOARD_CTL_DATA", str(tmp_path / "mine"))  # the explicit one wins
    assert default_data_dir() == tmp_path / "mine"
    monkeypatch.delenv("BOARD_CTL_DATA")
    monkeypatch.delenv("STATE_DIRECTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "board-ctl"


def test_games_lists_the_state_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    ids = archive_of(tmp_path / "state", 2)
    monkeypatch.delenv("BOARD_CTL_DATA")
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "state"))
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    assert ids[0] in out and f"{ids[1]}" in out and "(in progress)" in out


def test_export_sensor_logs_of_several_games(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One sensor log a game, in the directory named: the old export wrote none."""
    data = tmp_path / "data"
    ids = archive_of(data, 3)
    logs = tmp_path / "logs"
    assert main(["export", "--data-dir", str(data), "--pgn", str(tmp_path / "all.pgn"),
                 "--sensor-log", str(logs)]) == 0
    assert "3 sensor logs written to" in capsys.readouterr().err
    assert sorted(p.name for p in logs.iterdir()) == [f"{i}.sensor.jsonl" for i in ids]
    games = Archive(data).games()
    for game in games:
        with (logs / f"{game.game_id}.sensor.jsonl").open(encoding="utf-8") as stream:
            log = read_sensor_log(stream)
        assert not log.errors and log.events == game.recovered.events
        if game.finished:  # a finished game's log replays to its PGN
            replayed = replay_log(log, PROFILES["fide"]).pgn_text()
            assert without_date(replayed) == without_date(game.pgn_text())


def test_export_sensor_log_into_a_file_with_several_games_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    archive_of(data, 2)
    target = tmp_path / "one.jsonl"
    target.write_text("keep me\n")
    assert main(["export", "--data-dir", str(data), "--pgn", str(tmp_path / "x.pgn"),
                 "--sensor-log", str(target)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"board-ctl export: --sensor-log {target}: 2 games are exported, one "
                   f"sensor log each: name a directory (or export one game)"]
    assert target.read_text() == "keep me\n" and not (tmp_path / "x.pgn").exists()


def test_export_one_game_and_its_sensor_log(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    ids = archive_of(data, 2)
    out, log = tmp_path / "one.pgn", tmp_path / "one.jsonl"
    assert main(["export", ids[0], "--data-dir", str(data), "--pgn", str(out),
                 "--sensor-log", str(log)]) == 0
    [game] = [g for g in Archive(data).games() if g.game_id == ids[0]]
    assert out.read_text() == game.pgn_text()
    assert log.read_text() == game.sensor_log_text()
    assert len(pgn_moves(out.read_text())) == game.plies


def test_export_to_a_path_that_cannot_be_written_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    archive_of(data, 1)
    assert main(["export", "--data-dir", str(data), "--pgn", "/dev/null/x.pgn"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["board-ctl export: cannot write /dev/null/x.pgn: Not a directory"]
    assert list(tmp_path.glob("**/*.tmp")) == []
