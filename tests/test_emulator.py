"""End to end: board-emulator as a real process on a pty, BoardLink on the other side."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import chess
import pytest
import serial

from board_ctl.core import events as ev
from board_ctl.core.effects import Blink, Colour, LedFrame, SquareLight, StatusLights
from board_ctl.sensorlog import load_sensor_log
from conftest import stop_process
from firmware_bridge import protocol as P
from firmware_bridge.link import BoardLink

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
# The spec's example (docs/examples), else the demo game the package ships (the same
# game, as a board reports it).
OPERA = EXAMPLES / "opera-game.jsonl"
if not OPERA.is_file():
    OPERA = ROOT / "board_ctl" / "data" / "demo-opera-game.jsonl"
UNDERPROMOTION = EXAMPLES / "underpromotion-noclock.jsonl"
SPEED = 50.0


class Emulator:
    """board-emulator in a subprocess; stdout read line by line with deadlines."""

    def __init__(self, tmp_path: Path, *args: str, stdin: bool = False) -> None:
        self.link = tmp_path / "board"
        self.stderr = (tmp_path / "emulator.err").open("w+b")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "firmware_bridge.emulator", "--link", str(self.link), *args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=self.stderr, cwd=ROOT, env=env)
        self._buf = b""

    def line(self, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"no line from the emulator; stderr: {self.errors()}")
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EOFError(f"emulator exited; stderr: {self.errors()}")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode()

    def wait_for(self, prefix: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line = self.line(deadline - time.monotonic())
            if line.startswith(prefix):
                return line

    def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self) -> None:
        stop_process(self.proc)
        self.stderr.close()


@pytest.fixture
def emulators() -> Iterator[list[Emulator]]:
    started: list[Emulator] = []
    yield started
    for emu in started:
        emu.close()


def start(emulators: list[Emulator], tmp_path: Path, *args: str, stdin: bool = False) -> Emulator:
    emu = Emulator(tmp_path, *args, stdin=stdin)
    emulators.append(emu)
    emu.wait_for("LINK")
    return emu


def read_until_exit(link: BoardLink, emu: Emulator, limit: float = 30.0) -> list[ev.Event]:
    events: list[ev.Event] = []
    deadline = time.monotonic() + limit
    while emu.proc.poll() is None:
        assert time.monotonic() < deadline, f"emulator still running; {emu.errors()}"
        events += link.read_events(0.2)
    return events


def read_until(link: BoardLink, done: Callable[[list[ev.Event]], bool], limit: float = 10.0) -> list[ev.Event]:
    events: list[ev.Event] = []
    deadline = time.monotonic() + limit
    while not done(events):
        assert time.monotonic() < deadline, f"gave up waiting; got {events}"
        events += link.read_events(0.2)
    return events


def key(e: ev.Event) -> tuple:
    return (type(e).__name__,) + tuple(getattr(e, f) for f in e.__slots__ if f != "t")


def board_after(events: list[ev.Event], occupied: int = chess.Board().occupied) -> int:
    for e in events:
        if isinstance(e, ev.Lifted):
            occupied &= ~chess.BB_SQUARES[e.square]
        elif isinstance(e, ev.Placed):
            occupied |= chess.BB_SQUARES[e.square]
    return occupied


@pytest.mark.slow
def test_opera_game_end_to_end(emulators: list[Emulator], tmp_path: Path) -> None:
    record = tmp_path / "leds.jsonl"
    emu = start(emulators, tmp_path, "--log", str(OPERA), "--speed", str(SPEED),
                "--record", str(record))
    link = BoardLink(str(emu.link))
    link.open(timeout=10)
    lights = (SquareLight(chess.E2, Colour.GREEN), SquareLight(chess.E4, Colour.RED, Blink.FAST))
    link.send_leds(LedFrame(0.0, lights, StatusLights(white_to_move=True)))
    events = read_until_exit(link, emu)
    link.close()
    assert emu.proc.returncode == 0, emu.errors()
    assert not emu.link.exists() and not emu.link.is_symlink()  # removed on exit

    expected = load_sensor_log(OPERA).events
    assert events[0] == ev.Snapshot(events[0].t, chess.Board().occupied)
    got = events[1:]
    assert [key(e) for e in got] == [key(e) for e in expected]
    for g, e in zip(got, expected):  # the log's timing, scaled, to the millisecond
        assert (g.t - got[0].t) == pytest.approx((e.t - expected[0].t) / SPEED, abs=0.003)
    assert link.stats.gaps == 0 and link.stats.dropped == 0 and link.stats.connects == 1

    lines = record.read_text().splitlines()
    assert len(lines) == 1
    assert '"sq": "e4", "colour": "red", "blink": "fast"' in lines[0]
    assert '"white_to_move": true' in lines[0]


def test_start_at_and_hold_at_until(emulators: list[Emulator], tmp_path: Path) -> None:
    emu = start(emulators, tmp_path, "--log", str(OPERA), "--speed", str(SPEED),
                "--start-at", "40", "--until", "60")
    log = load_sensor_log(OPERA).events
    before = [e for e in log if e.t < 40]
    window = [e for e in log if 40 <= e.t <= 60]
    link = BoardLink(str(emu.link))
    link.open(timeout=10)
    events = read_until(link, lambda evs: len(evs) >= 1 + len(window))
    assert events[0] == ev.Snapshot(events[0].t, board_after(before))
    assert [key(e) for e in events[1:]] == [key(e) for e in window]
    assert link.read_events(0.3) == []  # holding still at 60 (heartbeats agree: swallowed)
    emu.proc.send_signal(signal.SIGTERM)
    assert emu.proc.wait(timeout=10) == 128 + signal.SIGTERM
    assert not emu.link.is_symlink()
    link.close()


@pytest.mark.slow
def test_yanked_cable_heals_with_a_snapshot(emulators: list[Emulator], tmp_path: Path) -> None:
    emu = start(emulators, tmp_path, "--log", str(OPERA), "--speed", str(SPEED),
                "--yank-at", "60", "--yank-for", "0.3")
    link = BoardLink(str(emu.link), backoff=(0.02, 0.2))
    link.open(timeout=10)
    events = read_until_exit(link, emu)
    link.close()
    assert emu.proc.returncode == 0, emu.errors()
    log = load_sensor_log(OPERA).events
    assert link.stats.connects == 2 and link.stats.disconnects >= 1

    snaps = [i for i, e in enumerate(events) if isinstance(e, ev.Snapshot)]
    assert len(snaps) == 2
    first, second = events[1:snaps[1]], events[snaps[1] + 1:]
    # nothing lost before the yank ...
    assert [key(e) for e in first] == [key(e) for e in log[:len(first)]]
    assert first[-1].t < 60 / SPEED + 0.1
    # ... and after it, every event the emulator sent, from a snapshot that explains them
    k = len(log) - len(second)
    assert k > len(first)  # the cable was out for a while: some events were never sent
    assert [key(e) for e in second] == [key(e) for e in log[k:]]
    assert events[snaps[1]] == ev.Snapshot(events[snaps[1]].t, board_after(log[:k]))
    # the board's clock ran on, so times still match the log's
    for g, e in zip(first + second, log[:len(first)] + log[k:]):
        assert g.t - first[0].t == pytest.approx((e.t - log[0].t) / SPEED, abs=0.005)


def test_interactive_and_garbage_both_ways(emulators: list[Emulator], tmp_path: Path) -> None:
    emu = start(emulators, tmp_path, "--interactive", stdin=True)
    link = BoardLink(str(emu.link))
    link.open(timeout=10)
    (snap,) = read_until(link, lambda evs: len(evs) >= 1)
    assert snap == ev.Snapshot(snap.t, chess.Board().occupied)

    emu.type("garbage 64\ne2e4 clock\npromote n\nresign b\nd7d5 e4d5\n")
    events = read_until(link, lambda evs: len(evs) >= 10)
    assert [key(e) for e in events] == [
        ("Lifted", chess.E2), ("Placed", chess.E4), ("ClockPressed", chess.WHITE, None),
        ("PromotionChosen", chess.KNIGHT), ("Resigned", chess.BLACK),
        ("Lifted", chess.D7), ("Placed", chess.D5),
        ("Lifted", chess.D5), ("Lifted", chess.E4), ("Placed", chess.D5),  # a capture
    ]
    assert link.stats.dropped >= 1 and link.stats.gaps == 0

    # someone else scribbles into the port: the board drops it and goes on
    fd = os.open(emu.link, os.O_WRONLY | os.O_NOCTTY)
    os.write(fd, b"\x03\x03\r\nimport machine\r\n\x04\x00\x01\x02\xff" * 3)
    os.close(fd)
    link.send_leds(LedFrame(0.0, (SquareLight(chess.D5, Colour.GREEN),),
                            StatusLights(black_to_move=True, alert=Blink.SLOW)))
    link.ping(77)
    read_until(link, lambda _: link.last_pong == 77)
    line = emu.wait_for("LEDS")
    assert line == "LEDS d5 green | black to move, alert (slow)"
    emu.type("quit\n")
    assert emu.proc.wait(timeout=10) == 0
    assert not emu.link.is_symlink()
    link.close()


def test_raw_protocol_over_the_pty(emulators: list[Emulator], tmp_path: Path) -> None:
    """Version mismatch, snapshot on request, and bytes 0x00/0x03/0x0A/0x0D in a frame."""
    emu = start(emulators, tmp_path, "--interactive", stdin=True)
    port = serial.serial_for_url(str(emu.link), baudrate=115200, timeout=0.1)
    decoder = P.Decoder()

    def receive(n: int) -> list[P.Message]:
        got: list[P.Message] = []
        deadline = time.monotonic() + 5
        while len(got) < n and time.monotonic() < deadline:
            got += decoder.feed(port.read(port.in_waiting or 1))
        return got

    port.write(P.encode(P.HELLO, 0, "future host", "x", version=2))
    ack, err = receive(2)
    assert ack.name == "HELLO_ACK" and ack.version == P.PROTOCOL_VERSION
    assert (err.code, err.text) == (P.ERR_VERSION, "board speaks protocol 1, host sent 2")
    sender = P.Sender()
    port.write(sender.frame(P.HELLO, "raw", "test") + sender.frame(P.REQUEST_SNAPSHOT)
               + sender.frame(P.PING, 0x0D0A0300))
    got = receive(4)
    assert [(m.name, getattr(m, "reason", None)) for m in got] == [
        ("HELLO_ACK", None), ("SNAPSHOT", P.ON_CONNECT), ("SNAPSHOT", P.ON_REQUEST),
        ("PONG", None)]
    assert got[3].token == 0x0D0A0300 and decoder.dropped == 0
    port.close()


def test_log_with_start_fen_and_promotion_selector(emulators: list[Emulator],
                                                   tmp_path: Path) -> None:
    path = UNDERPROMOTION
    if not path.is_file():
        path = tmp_path / "underpromotion.jsonl"
        path.write_text(
            '{"t": 0.0, "ev": "start", "fen": "8/5P1k/8/8/8/8/6KP/8 w - - 0 1"}\n'
            '{"t": 1.5, "ev": "lift", "sq": "f7"}\n{"t": 2.0, "ev": "place", "sq": "f8"}\n'
            '{"t": 2.3, "ev": "promote", "piece": "n"}\n'
            '{"t": 4.7, "ev": "lift", "sq": "h7"}\n{"t": 5.4, "ev": "place", "sq": "g7"}\n')
    log = load_sensor_log(path)
    emu = start(emulators, tmp_path, "--log", str(path), "--speed", str(SPEED))
    link = BoardLink(str(emu.link))
    link.open(timeout=10)
    events = read_until_exit(link, emu)
    link.close()
    assert emu.proc.returncode == 0, emu.errors()
    assert events[0] == ev.Snapshot(events[0].t, chess.Board(log.start.fen).occupied)
    assert [key(e) for e in events[1:]] == [key(e) for e in log.events]
    assert ("PromotionChosen", chess.KNIGHT) in [key(e) for e in events]


def test_stale_link_is_replaced(emulators: list[Emulator], tmp_path: Path) -> None:
    (tmp_path / "board").symlink_to("/dev/pts/no-such-pty")  # left by a killed emulator
    emu = start(emulators, tmp_path, "--interactive", stdin=True)
    assert os.readlink(emu.link).startswith("/dev/pts/") and emu.link.exists()
    emu.type("quit\n")
    assert emu.proc.wait(timeout=10) == 0 and not emu.link.is_symlink()


def test_unreadable_log_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "firmware_bridge.emulator", "--link", str(tmp_path / "b"),
         "--log", str(tmp_path / "missing.jsonl")],
        capture_output=True, text=True, timeout=30, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2
    assert "cannot read" in result.stderr and "missing.jsonl" in result.stderr
    assert not (tmp_path / "b").is_symlink()


def test_a_link_in_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "firmware_bridge.emulator", "--link",
         str(tmp_path / "no-such-dir" / "x"), "--interactive"],
        capture_output=True, text=True, timeout=30, cwd=ROOT, stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"board-emulator: --link {tmp_path / 'no-such-dir' / 'x'}: its folder "
        f"{tmp_path / 'no-such-dir'} does not exist"]


def test_a_second_emulator_on_the_same_link_is_refused(emulators: list[Emulator],
                                                       tmp_path: Path) -> None:
    """The second one says who has the link and exits 1; the first keeps its link (it
    used to be taken over, and deleted when the second one exited)."""
    first = start(emulators, tmp_path, "--interactive", stdin=True)
    device = os.readlink(first.link)
    result = subprocess.run(
        [sys.executable, "-m", "firmware_bridge.emulator", "--link", str(first.link),
         "--interactive"],
        capture_output=True, text=True, timeout=30, cwd=ROOT, stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"board-emulator: --link {first.link} is in use by another board-emulator (pid "
        f"{first.proc.pid}): stop that one, or give this one another --link"]
    assert os.readlink(first.link) == device  # still the first one's pty
    with BoardLink(str(first.link)) as link:  # and it still answers there
        link.open(timeout=10)
        assert link.board is not None
    first.type("quit\n")
    assert first.proc.wait(timeout=10) == 0
    assert not first.link.is_symlink() and not (tmp_path / ".board.lock").exists()


def test_the_board_id_is_the_same_at_every_run_of_a_link(emulators: list[Emulator],
                                                         tmp_path: Path) -> None:
    """A host resumes a game on the board it was played on: an emulator restarted on the
    same link is the same board, one on another link another."""
    (tmp_path / "other").mkdir()
    ids = []
    for folder in (tmp_path, tmp_path, tmp_path / "other"):
        emu = start(emulators, folder, "--interactive", stdin=True)
        with BoardLink(str(emu.link)) as link:
            link.open(timeout=10)
            assert link.board is not None
            ids.append(link.board.board_id)
        emu.type("quit\n")
        assert emu.proc.wait(timeout=10) == 0
    assert ids[0] == ids[1] != ids[2]
