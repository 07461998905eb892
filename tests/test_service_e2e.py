"""`board-ctl run` end to end: board-emulator in one process on a real pty, the service in
another, real games' sensor logs in; the PGN must be the one `board-ctl replay` makes of
the same log, through a yanked cable and line noise too."""

from __future__ import annotations

import io
import os
import socket
import threading
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_log
from board_ctl.sensorlog import read_sensor_log
from conftest import read_jsonl, read_pgn
from firmware_bridge.clock_device import ClockDevice
from servicekit import (
    EmulatorProcess,
    GarbageRelay,
    board_ctl,
    child_env,
    game_from,
    comparable,
    move_times,
    render,
    without_date,
)

SPEED = "20"


def replay_pgn(path: Path) -> tuple[str, list[str]]:
    with path.open(encoding="utf-8") as stream:
        record = replay_log(read_sensor_log(stream), PROFILES["fide"])
    return record.pgn_text(), [m.move.uci() for m in record.moves]


def service_config(tmp_path: Path, fen: str = "", time_control: str = "",
                   **serial: float) -> Path:
    path = tmp_path / "board.toml"
    keys = {"connect_timeout": 10.0, "lost_timeout": 1.0, **serial}
    game = f"fen = \"{fen}\"\n" + (f"time_control = \"{time_control}\"\n" if time_control else "")
    path.write_text("[serial]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())
                    + f"[game]\n{game}[display]\nview = \"plain\"\n",
                    encoding="utf-8")
    return path


def run_game(tmp_path: Path, log: Path, *emulator_args: str, speed: str = SPEED,
             relay: bool = False, noise_writer: bool = False,
             fen: str = "", time_control: str = "") -> tuple[str, Path, str]:
    """Play `log` through the emulator into `board-ctl run --once`; (PGN, PGN path, stdout)."""
    emulator = EmulatorProcess(tmp_path / "board", "--log", str(log), "--speed", speed,
                               *emulator_args)
    port = tmp_path / "board"
    garbage = None
    if relay:
        garbage = GarbageRelay(tmp_path / "board", tmp_path / "noisy")
        port = tmp_path / "noisy"
    if noise_writer:  # someone else scribbles into the port: it reaches the board
        fd = os.open(port, os.O_WRONLY | os.O_NOCTTY)
        os.write(fd, b"\x03\x03\r\nimport machine\r\n\x04\x00\x01\x02\xff" * 4)
        os.close(fd)
    pgn = tmp_path / "out.pgn"
    try:
        config = service_config(tmp_path, fen, time_control)
        result = board_ctl("run", "--config", str(config), "--port",
                           str(port), "--once", "--pgn", str(pgn), cwd=tmp_path)
    finally:
        code = emulator.close()
        if garbage is not None:
            garbage.close()
    assert result.returncode == 0, result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    assert code == 0, emulator.errors()
    if garbage is not None:
        assert garbage.injected > 5
    return pgn.read_text(encoding="utf-8"), pgn, result.stdout


# (file, game, plies): whole short games, and parts of long ones (from their position,
# through their en passant captures, castlings and promotions, some to the result).
GAMES = [("classics.pgn", 0, None), ("classics.pgn", 8, None),
         ("stockfish-300.pgn", 63, (56, None)), ("stockfish-300.pgn", 100, (72, None)),
         ("stockfish-300.pgn", 109, (10, 36))]


@pytest.mark.slow
@pytest.mark.parametrize("pgn_file,index,plies", GAMES,
                         ids=[f"{p}#{i}" for p, i, _ in GAMES])
def test_real_games_give_the_replays_pgn(tmp_path: Path, pgn_file: str, index: int,
                                         plies: tuple[int, int | None] | None) -> None:
    rendered = render(pgn_file, index, seed=index, plies=plies)
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    expected, moves = replay_pgn(log)
    assert moves == [m.uci() for m in rendered.moves]  # the replay itself is right

    fen = rendered.start_fen if rendered.start_fen != chess.STARTING_FEN else ""
    text, pgn, stdout = run_game(tmp_path, log, fen=fen)
    assert comparable(text) == comparable(expected)
    got, want = move_times(text), move_times(expected)
    assert len(got) == len(want) == len(moves)
    assert all(abs(a - b) <= int(SPEED) * 0.001 + 0.0011 for a, b in zip(got, want))
    # the service's own sensor log, beside the PGN, replays to exactly its PGN
    journal = pgn.with_name("out.sensor.jsonl")
    assert without_date(replay_pgn(journal)[0]) == without_date(text)
    report = read_jsonl(pgn.with_name("out.report.jsonl"))
    assert [r["uci"] for r in report if r["kind"] == "move"] == moves
    if rendered.result != "*":
        assert f"RESULT {rendered.result}" in stdout


@pytest.mark.slow
@pytest.mark.parametrize("time_control", ["60+1", ""])
def test_an_external_clocks_times_are_the_record(tmp_path: Path, time_control: str) -> None:
    """The board relays an external clock's display with each press (CLOCK_TIMES): the
    PGN's [%clk] are the clock's whole seconds, with or without a configured control."""
    rendered = render("classics.pgn", 0, seed=3)
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    with log.open(encoding="utf-8") as stream:
        presses = [e for e in read_sensor_log(stream).events if isinstance(e, ev.ClockPressed)]
    device = ClockDevice(60, 1)  # an independent model of the clock the emulator plays
    shown = [device.press(p.side, p.t) for p in presses]
    want = [times[0] if press.side else times[1] for press, times in zip(presses, shown)]

    text, pgn, _ = run_game(tmp_path, log, "--external-clock", "60+1",
                            time_control=time_control)
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    got = [node.clock() for node in game.mainline()]
    assert got == want[:len(got)] and len(got) == len(rendered.moves)
    assert ("[TimeControl \"60+1\"]" in text) == bool(time_control)
    report = read_jsonl(pgn.with_name("out.report.jsonl"))
    assert [r["code"] for r in report if r["kind"] == "alert"] == []
    # the service's sensor log carries the clock's times: its replay is the same game
    with pgn.with_name("out.sensor.jsonl").open(encoding="utf-8") as stream:
        replayed = replay_log(read_sensor_log(stream), PROFILES["fide"])
    assert [m.clock for m in replayed.moves] == got


@pytest.mark.slow
@pytest.mark.parametrize("when", [0.35, 0.7])
def test_yanked_cable_loses_no_move(tmp_path: Path, when: float) -> None:
    """The cable out for 0.1 s at 10x (about a second of play, the snapshot after the
    reconnection shows what happened meanwhile): every move is still in the PGN."""
    rendered = render("classics.pgn", 8, seed=5)  # Legall - Saint Brie
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    yank_at = rendered.lines[-1]["t"] * when
    text, pgn, stdout = run_game(tmp_path, log, "--yank-at", f"{yank_at:.3f}", "--yank-for",
                                 "0.1", speed="10")
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert list(game.mainline_moves()) == rendered.moves
    assert game.headers["Result"] == rendered.result
    assert "board link lost" in stdout and "board link back" in stdout
    assert "ALERT" not in stdout
    # the journal has the reconnection's snapshot: its replay gives the same game
    assert without_date(replay_pgn(pgn.with_name("out.sensor.jsonl"))[0]) == without_date(text)


@pytest.mark.slow
def test_garbage_on_the_link_changes_nothing(tmp_path: Path) -> None:
    rendered = render("classics.pgn", 8, seed=11)  # Legall - Saint Brie
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    expected, _ = replay_pgn(log)
    text, _, _ = run_game(tmp_path, log, relay=True, noise_writer=True)
    assert comparable(text) == comparable(expected)


@pytest.mark.slow
def test_nothing_configured_plays_the_demo_and_tells_systemd(tmp_path: Path) -> None:
    notify = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    datagrams: list[str] = []

    def listen() -> None:  # like systemd: read them as they come
        while (data := sock.recv(4096)) != b"STOPPING=1":
            datagrams.append(data.decode())
        datagrams.append("STOPPING=1")

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    try:
        result = board_ctl("run", "--once", "--speed", "40", cwd=tmp_path,
                           env=child_env(NOTIFY_SOCKET=str(notify), WATCHDOG_USEC="200000"))
        listener.join(timeout=5)
    finally:
        sock.close()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    (pgn,) = (tmp_path / "games").glob("*.pgn")
    game = read_pgn(pgn)
    assert game is not None
    opera = game_from("classics.pgn", 0)
    assert list(game.mainline_moves()) == list(opera.mainline_moves())
    assert game.headers["Result"] == "1-0" and game.headers["White"] == "Morphy, Paul"
    assert len(list((tmp_path / "games").glob("*.sensor.jsonl"))) == 1
    assert "17. Rd8#" in result.stdout and "RESULT 1-0 (checkmate)" in result.stdout
    assert datagrams[0].startswith("READY=1\nSTATUS=board ")
    assert datagrams.count("WATCHDOG=1") >= 3
    assert datagrams[-1] == "STOPPING=1"


def test_missing_port_is_one_line(tmp_path: Path) -> None:
    config = service_config(tmp_path, connect_timeout=0.3)
    result = board_ctl("run", "--config", str(config), "--port", str(tmp_path / "nothing"),
                       "--once", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith("board-ctl run: no board on ") and "does not exist" in lines[0]
