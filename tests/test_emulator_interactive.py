"""The interactive emulator (`board-emulator --interactive`) as a person uses it: typed
moves and `clock` presses, the real service (`board-ctl run`) on the other end of the pty.
`clock` must press the lever of the side to move, as the board's status LEDs show it:
after an illegal move that is still the same side."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.core import events as ev
from board_ctl.core.effects import LedFrame, StatusLights
from conftest import read_pgn
from firmware_bridge.link import BoardLink
from servicekit import child_env, wait_until
from test_emulator import Emulator, read_until, start


@pytest.fixture
def emulators() -> Iterator[list[Emulator]]:
    started: list[Emulator] = []
    yield started
    for emu in started:
        emu.close()


def service(tmp_path: Path, link: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--port", str(link), "--once",
         "--pgn", str(tmp_path / "out.pgn"), "--view", "plain"],
        cwd=tmp_path, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


def frames_until(emu: Emulator, text: str, timeout: float = 20.0) -> list[str]:
    """The LEDS lines the emulator prints up to the first one containing `text`."""
    seen = []
    while True:
        line = emu.wait_for("LEDS", timeout)
        seen.append(line)
        if text in line:
            return seen


def finish(emu: Emulator, host: subprocess.Popen[str]) -> tuple[list[str], str]:
    emu.type("quit\n")
    assert emu.proc.wait(timeout=20) == 0
    out, err = host.communicate(timeout=30)
    assert host.returncode == 0, err + out
    return out.splitlines(), err


def presses_logged(tmp_path: Path) -> int:
    """Clock presses in the host's sensor log so far."""
    path = tmp_path / "out.sensor.jsonl"
    return path.read_text(encoding="utf-8").count('"ev": "clock"') if path.exists() else 0


def pgn_moves(path: Path) -> list[str]:
    game = read_pgn(path)
    assert game is not None
    return [node.san() for node in game.mainline()]


@pytest.mark.slow
def test_clock_presses_the_side_to_move_also_after_an_illegal_move(
        emulators: list[Emulator], tmp_path: Path) -> None:
    emu = start(emulators, tmp_path, "--interactive", stdin=True)
    host = service(tmp_path, emu.link)
    try:
        frames_until(emu, "white to move")  # the game started: the opening frame
        emu.type("e2e4\nclock\n")
        frames_until(emu, "black to move")
        emu.type("e7e5\nclock\n")
        frames_until(emu, "white to move")
        emu.type("g1g5\nclock\n")  # a knight cannot go to g5: an illegal move
        shown = frames_until(emu, "alert")[-1]
        assert "white to move" in shown and "g1 green" in shown and "g5 red" in shown
        emu.type("g5g1\n")  # reinstated as the LEDs ask; the same piece must move (4.3)
        shown = frames_until(emu, "g1 blue")[-1]
        assert "red" not in shown and "white to move" in shown
        emu.type("g1f3\nclock\n")  # White's lever again, not Black's
        frames_until(emu, "black to move")
        emu.type("b8c6\nclock\n")
        frames_until(emu, "white to move")
    finally:
        lines, err = finish(emu, host)
    assert pgn_moves(tmp_path / "out.pgn") == ["e4", "e5", "Nf3", "Nc6"]
    alerts = [line for line in lines if "ALERT" in line]
    assert len(alerts) == 1 and "ALERT illegal-move (white)" in alerts[0], lines
    assert "clock-no-move" not in "\n".join(lines) + err


@pytest.mark.slow
def test_several_commands_on_one_line(emulators: list[Emulator], tmp_path: Path) -> None:
    """Typed faster than the host answers: each press is still the mover's."""
    emu = start(emulators, tmp_path, "--interactive", stdin=True)
    host = service(tmp_path, emu.link)
    try:
        frames_until(emu, "white to move")
        emu.type("e2e4 clock e7e5 clock g1f3 clock\n")
        frames_until(emu, "black to move")
        emu.type("b8c6 clock\n")
        # The host has read the fourth press (a "white to move" frame may still be the
        # answer to e5's: the frames of one journal commit come together).
        wait_until(lambda: presses_logged(tmp_path) == 4, timeout=20, what="4 presses")
    finally:
        lines, _ = finish(emu, host)
    assert pgn_moves(tmp_path / "out.pgn") == ["e4", "e5", "Nf3", "Nc6"]
    assert not [line for line in lines if "ALERT" in line], lines


def test_the_status_leds_decide_and_a_black_start(emulators: list[Emulator],
                                                  tmp_path: Path) -> None:
    """A host that only sends frames (BoardLink): before any frame the start position's
    side presses (Black here), after a press the other side, and whatever a frame's status
    LEDs show wins."""
    log = tmp_path / "start.jsonl"
    log.write_text('{"t": 0.0, "ev": "start", "fen": '
                   '"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}\n',
                   encoding="utf-8")
    emu = start(emulators, tmp_path, "--interactive", "--log", str(log), stdin=True)
    link = BoardLink(str(emu.link))
    link.open(timeout=10)
    try:
        read_until(link, lambda evs: len(evs) >= 1)  # the snapshot at connection

        def presses(typed: str, n: int) -> list[chess.Color]:
            emu.type(typed)
            got = read_until(link, lambda evs: sum(isinstance(e, ev.ClockPressed)
                                                   for e in evs) >= n)
            return [e.side for e in got if isinstance(e, ev.ClockPressed)]

        assert presses("e7e5 clock\n", 1) == [chess.BLACK]
        assert presses("clock\n", 1) == [chess.WHITE]
        # the host shows White still to move (as after an illegal move): White presses
        link.send_leds(LedFrame(0.0, (), StatusLights(white_to_move=True)))
        emu.wait_for("LEDS")
        assert presses("clock\n", 1) == [chess.WHITE]
        link.send_leds(LedFrame(0.0, (), StatusLights(black_to_move=True)))
        emu.wait_for("LEDS")
        assert presses("clock\nclock\n", 2) == [chess.BLACK, chess.WHITE]
        link.send_leds(LedFrame(0.0, (), StatusLights(game_over=True)))  # nobody to move
        emu.wait_for("LEDS")
        assert presses("clock\n", 1) == [chess.BLACK]
    finally:
        link.close()
