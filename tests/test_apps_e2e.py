"""`board-ctl run --dgt pty:... --chesslink pty:...` end to end: the service in its own
process on a real pty, the board emulator in another playing a real game rendered by
the simulator, and a DGT host and a ChessLink host (tests/dgtclient.py,
tests/chesslinkclient.py, written from the protocols' descriptions) reading the board
as chess programs do, both at once. Every position they read is held to the game: one
of its positions or a move in progress, each position read after its move, the end the
game's end. With and without a clock; an illegal move reinstated and a knocked piece;
garbage on both ports while a game is played; a serial device that goes away and comes
back; and with --opponent, --livechess and --mqtt together."""

from __future__ import annotations

import contextlib
import io
import os
import random
import signal
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Collection, Iterator
from pathlib import Path

import chess
import chess.pgn
import pytest
import serial

from appskit import check_timeline, positions_of, skippable
from board_ctl.simulate import RenderStyle, render_game
from board_ctl.simulate.render import RenderedGame
from board_ctl.simulate.violations import render_violation
from chesslinkclient import ChessLinkClient
from conftest import stop_process
from dgtclient import BOARD, UPDATE_NICE, DgtClient
from servicekit import ROOT, child_env, game_from, wait_until

SPEED = 8.0
QUICK = RenderStyle(think=(0.3, 1.2), long_think_prob=0.0, hand=(0.2, 0.6),
                    clock_delay=(0.1, 0.4), idle_lift_prob=0.05)
QUICK_NO_CLOCK = RenderStyle(use_clock=False, think=(0.3, 1.5), long_think_prob=0.0,
                             hand=(0.2, 0.6), idle_lift_prob=0.05)


def whole_game() -> chess.pgn.Game:
    """A real game (86 plies) with castling both ways, en passant, a promotion and a
    capture recaptured."""
    return game_from("stockfish-300.pgn", 298)


class HeldBoard:
    """The board emulator (tests/livechesskit.py as a program), holding before its first
    event until go(): the apps connect first."""

    def __init__(self, link: Path, log: Path, hold: float) -> None:
        self.err = (link.parent / "board.err").open("w+b")
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "livechesskit.py"), "--link", str(link),
             "--log", str(log), "--speed", str(SPEED), "--until", str(hold)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err, cwd=ROOT,
            env=child_env())
        wait_until(lambda: link.exists() or self.proc.poll() is not None, 30,
                   what="the emulator's link")

    def go(self) -> None:
        self.proc.send_signal(signal.SIGUSR1)

    def errors(self) -> str:
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def close(self) -> None:
        stop_process(self.proc)
        self.err.close()


@contextlib.contextmanager
def service(tmp_path: Path, *args: str, ports: tuple[str, ...], under: tuple[str, ...] = ()
            ) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """`board-ctl run --view plain ... ` (run by the command `under`, if any); yields it
    and its output file once every one of `ports` (the lines it prints for them) is open."""
    out = tmp_path / "service.out"
    with out.open("w") as stream:
        proc = subprocess.Popen(
            [*under, sys.executable, "-m", "board_ctl.cli", "run", "--view", "plain",
             "--data-dir", str(tmp_path / "data"), *args],
            cwd=tmp_path, env=child_env(), stdin=subprocess.DEVNULL, stdout=stream,
            stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: all(f" on {p}" in out.read_text() for p in ports)
                   or proc.poll() is not None, 60, what="the app ports")
        assert proc.poll() is None, out.read_text()
        yield proc, out
    finally:
        stop_process(proc)  # type: ignore[arg-type]


class Reader(threading.Thread):
    """Pumps the two hosts until stopped (they read as the apps would, all along)."""

    def __init__(self, *clients: DgtClient | ChessLinkClient) -> None:
        super().__init__(daemon=True)
        self.clients = clients
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                for client in self.clients:
                    client.pump(0.005)
        except BaseException as exc:  # the service went away under it: its end
            self.error = exc

    def finish(self) -> None:
        self.stop.set()
        self.join(10)


def connect(tmp_path: Path) -> tuple[DgtClient, ChessLinkClient]:
    """Both hosts, set up as their programs do: DGT in the nice update mode with a board
    dump; ChessLink reporting on every change, with a status."""
    dgt = DgtClient(str(tmp_path / "dgt"))
    dgt.send(UPDATE_NICE)
    dgt.board_dump()
    link = ChessLinkClient(str(tmp_path / "chesslink"))
    link.request("W0203", "w")
    link.status()
    return dgt, link


def placements_read(client: DgtClient | ChessLinkClient) -> list[str]:
    boards = client.boards if isinstance(client, DgtClient) else client.statuses
    out: list[str] = []
    for _, placement in boards:
        if not out or out[-1] != placement:
            out.append(placement)
    return out


def play(tmp_path: Path, rendered: RenderedGame, *extra: str, under: tuple[str, ...] = ()
         ) -> tuple[DgtClient, ChessLinkClient, str, str]:
    """The rendered game through the service (run by `under`) with both ports and both
    hosts reading; the hosts, the PGN written and the service's output."""
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    config = tmp_path / "board.toml"
    config.write_text(f'[game]\nfen = "{rendered.start_fen}"\n', encoding="utf-8")
    link = tmp_path / "board"
    board = HeldBoard(link, log, hold=rendered.lines[1]["t"] / 2)
    try:
        with service(tmp_path, "--config", str(config), "--port", str(link), "--once",
                     "--pgn", str(tmp_path / "out.pgn"), "--dgt", f"pty:{tmp_path / 'dgt'}",
                     "--chesslink", f"pty:{tmp_path / 'chesslink'}", *extra,
                     ports=(f"pty:{tmp_path / 'dgt'}", f"pty:{tmp_path / 'chesslink'}"),
                     under=under) as (proc, out):
            dgt, chesslink = connect(tmp_path)
            reader = Reader(dgt, chesslink)
            reader.start()
            board.go()
            assert proc.wait(timeout=240) == 0, out.read_text()[-3000:]
            reader.finish()
            output = out.read_text()
        assert board.proc.wait(timeout=30) == 0, board.errors()
    finally:
        board.close()
    dgt.close()
    chesslink.close()
    return dgt, chesslink, (tmp_path / "out.pgn").read_text(encoding="utf-8"), output


def check_both(dgt: DgtClient, chesslink: ChessLinkClient, rendered: RenderedGame,
               pgn: str, violation_plies: Collection[int] = frozenset()) -> None:
    played = chess.pgn.read_game(io.StringIO(pgn))
    assert played is not None
    moves = list(played.mainline_moves())
    assert moves == rendered.moves or moves == rendered.moves[:-1], pgn
    positions = positions_of(rendered.start_fen, rendered.moves)
    clock = any(line.get("ev") == "clock" for line in rendered.lines)
    may_skip = set() if clock else skippable(rendered.start_fen, rendered.moves)
    for name, client in (("DGT", dgt), ("ChessLink", chesslink)):
        check_timeline(placements_read(client), positions, violation_plies=violation_plies,
                       may_skip=may_skip, last_unfinished=moves != rendered.moves,
                       where=name)
    assert dgt.skipped == 0  # every byte the board sent was part of a message
    assert chesslink.bad_check == chesslink.bad_parity == chesslink.skipped == 0


@pytest.mark.slow
@pytest.mark.parametrize("style", [QUICK, QUICK_NO_CLOCK], ids=["clock", "no-clock"])
def test_a_whole_game_read_by_both_apps(tmp_path: Path, style: RenderStyle) -> None:
    rendered = render_game(whole_game(), seed=7, style=style)
    timed = ("--time-control", "600+5") if style.use_clock else ()
    dgt, chesslink, pgn, output = play(tmp_path, rendered, *timed)
    check_both(dgt, chesslink, rendered, pgn)
    assert "best reading" not in output
    if style.use_clock:  # the DGT host read our clock: both sides' times, the lever
        # (before the game starts, no clock runs: the first reading may say so)
        started = next(i for i, c in enumerate(dgt.clocks) if c.connected)
        readings = dgt.clocks[started:]
        assert len(readings) > 20 and all(c.connected for c in readings)
        assert {c.status & 0x02 for c in readings} == {0, 2}  # the lever went both ways
        assert min(c.left for c in readings) < 600 and min(c.right for c in readings) < 600
        assert max(max(c.left, c.right) for c in readings) <= 600 + 5 * len(rendered.moves)
    else:
        assert all(not c.connected for c in dgt.clocks)


def slow_disk(delay: float) -> tuple[str, ...]:
    """A command prefix under which every fsync and fdatasync of the service takes
    `delay` s more, as a Raspberry Pi's SD card's (tests/slowdisk.py)."""
    return (sys.executable, str(ROOT / "tests" / "slowdisk.py"), str(delay))


@pytest.mark.slow
def test_a_slow_sd_card_still_shows_every_position(tmp_path: Path) -> None:
    """Every fsync held 0.15 s (an SD card's): the service takes the events that came
    meanwhile as one batch, and the hosts are still shown each position in turn, each
    move's own, not only the batch's last (a press and the reply's first lift once came in
    one batch, and a ChessLink host never saw the position between them)."""
    rendered = render_game(whole_game(), seed=7, style=QUICK)
    dgt, chesslink, pgn, _ = play(tmp_path, rendered, "--time-control", "600+5",
                                  under=slow_disk(0.15))
    check_both(dgt, chesslink, rendered, pgn)


@pytest.mark.slow
def test_an_illegal_move_and_a_knocked_piece(tmp_path: Path) -> None:
    """An illegal move reinstated (the piece read where it was put, then back) and, in the
    same game, a knocked piece read as it lies; the record is the game's."""
    game = whole_game()
    first = render_violation(game, "illegal-move", seed=3, style=QUICK)
    (_, illegal_ply), = first.expected_alerts
    knocked = render_violation(game, "position-mismatch", seed=4, style=QUICK)
    (_, knocked_ply), = knocked.expected_alerts
    for rendered, ply in ((first, illegal_ply), (knocked, knocked_ply)):
        tmp = tmp_path / f"ply{ply}"
        tmp.mkdir()
        dgt, chesslink, pgn, output = play(tmp, rendered)
        assert "illegal-move" in output if rendered is first else "position-mismatch" in output
        check_both(dgt, chesslink, rendered, pgn, violation_plies={ply, ply + 1})


def dgt_host_lines(tmp_path: Path) -> tuple[int, int]:
    """(master, slave) of a pty whose slave path is kept at tmp_path/device: a serial
    device as the service opens it; the test holds the other end, as a PC on USB."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    device = tmp_path / "device"
    device.unlink(missing_ok=True)
    device.symlink_to(os.ttyname(slave))
    return master, slave


@pytest.mark.slow
def test_garbage_on_both_ports_during_a_game(tmp_path: Path) -> None:
    """While a game is played, a third program writes garbage, truncated and oversized
    requests into both ports; the hosts' own requests keep being answered and the board
    they read stays the game's; the ignored requests are counted."""
    rendered = render_game(whole_game(), seed=11, style=QUICK)
    log = tmp_path / "game.jsonl"
    rendered.write(log)
    link = tmp_path / "board"
    board = HeldBoard(link, log, hold=rendered.lines[1]["t"] / 2)
    rng = random.Random(5)
    try:
        with service(tmp_path, "--port", str(link), "--once", "--pgn",
                     str(tmp_path / "out.pgn"), "--dgt", f"pty:{tmp_path / 'dgt'}",
                     "--chesslink", f"pty:{tmp_path / 'chesslink'}",
                     ports=(f"pty:{tmp_path / 'dgt'}", f"pty:{tmp_path / 'chesslink'}")
                     ) as (proc, out):
            dgt, chesslink = connect(tmp_path)
            noise = [os.open(tmp_path / name, os.O_WRONLY | os.O_NOCTTY)
                     for name in ("dgt", "chesslink")]
            board.go()
            sent = 0
            while proc.poll() is None:
                for fd in noise:
                    junk = rng.choice([
                        bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64))),
                        bytes([0x2B, 0x0A, 0x03, 0x0A]),  # a clock message cut short
                        bytes([0x60, 0x48]) + bytes(rng.getrandbits(7) for _ in range(90)),
                        b"L20" + b"F" * 300, b"W02", b"S00"])
                    os.write(fd, junk)
                    sent += 1
                # the hosts ask as programs do, between the garbage (until the game's end
                # closes the ports under them)
                try:
                    assert len(dgt.board_dump()) > 0
                    chesslink.status()
                    dgt.pump(0.05)
                    chesslink.pump(0.05)
                except serial.SerialException:
                    assert proc.wait(timeout=30) == 0
                    break
            for fd in noise:
                os.close(fd)
            output = out.read_text()
        assert proc.returncode == 0, output[-3000:]
    finally:
        board.close()
    dgt.close()
    chesslink.close()
    assert sent > 20
    final = chess.pgn.read_game(io.StringIO((tmp_path / "out.pgn").read_text()))
    assert final is not None and list(final.mainline_moves()) == rendered.moves
    assert dgt.board_fen() == rendered.final_board().board_fen()
    # (the ChessLink host reads by asking: its last answer may come a ply or two before the
    # game's end closes the port under it; what it read is the game's all the same)
    assert chesslink.board_fen() in positions_of(rendered.start_fen, rendered.moves)
    ignored = [line for line in output.splitlines() if "requests answered" in line]
    assert len(ignored) == 2 and all(" 0 ignored" not in line for line in ignored), ignored


@pytest.mark.slow
def test_a_serial_device_that_goes_away_is_opened_again(tmp_path: Path) -> None:
    """--dgt on a device (a pty whose slave the service opens by a path, as /dev/ttyGS0):
    the far end closed (a cable pulled), then a new one at the same path: the service
    plays on, and the new host is answered."""
    master, slave = dgt_host_lines(tmp_path)
    device = tmp_path / "device"
    try:
        with service(tmp_path, "--once", "--speed", "4", "--dgt", str(device),
                     ports=(str(device),)) as (proc, out):
            os.write(master, bytes([BOARD]))
            got = wait_read(master, 67)
            assert got[0] == 0x86
            os.close(master)  # the cable pulled: the service's side hangs up
            os.close(slave)
            wait_until(lambda: "went away" in out.read_text(), 20, what="the port going")
            master, slave = dgt_host_lines(tmp_path)  # plugged in again
            wait_until(lambda: "is open again" in out.read_text(), 20, what="reopening")
            os.write(master, bytes([BOARD]))
            assert wait_read(master, 67)[0] == 0x86
            assert proc.poll() is None  # the game went on all along
    finally:
        for fd in (master, slave):
            with contextlib.suppress(OSError):
                os.close(fd)


def wait_read(fd: int, count: int, timeout: float = 10.0) -> bytes:
    import select

    data = b""
    deadline = time.monotonic() + timeout
    while len(data) < count:
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise AssertionError(f"read {data!r} of {count} bytes")
        data += os.read(fd, count - len(data))
    return data


@pytest.mark.slow
def test_with_an_opponent_livechess_and_mqtt(tmp_path: Path) -> None:
    """Both app ports together with --opponent, --livechess and --mqtt: the emulator plays
    the person's side against Stockfish; the apps read the computer's moves as they are
    made on the board (never before), and every other output works."""
    from brokerkit import Broker

    broker = Broker(tmp_path / "broker", {"b01": "board-secret"}).start()
    config = tmp_path / "board.toml"
    config.write_text(f'[mqtt]\nusername = "b01"\npassword_file = '
                      f'"{broker.password_file("b01")}"\n', encoding="utf-8")
    try:
        with service(tmp_path, "--config", str(config), "--opponent", "--level", "0",
                     "--movetime", "0.05", "--once", "--speed", "8", "--pgn",
                     str(tmp_path / "out.pgn"), "--livechess", "127.0.0.1:0",
                     "--mqtt", broker.url, "--board-id", "b01",
                     "--dgt", f"pty:{tmp_path / 'dgt'}",
                     "--chesslink", f"pty:{tmp_path / 'chesslink'}",
                     ports=(f"pty:{tmp_path / 'dgt'}", f"pty:{tmp_path / 'chesslink'}")
                     ) as (proc, out):
            dgt, chesslink = connect(tmp_path)
            reader = Reader(dgt, chesslink)
            reader.start()
            assert proc.wait(timeout=300) == 0, out.read_text()[-3000:]
            reader.finish()
            output = out.read_text()
    finally:
        broker.stop()
    dgt.close()
    chesslink.close()
    assert "LiveChess endpoint: ws://" in output
    pgn = (tmp_path / "out.pgn").read_text(encoding="utf-8")
    played = chess.pgn.read_game(io.StringIO(pgn))
    assert played is not None and played.headers["Black"].startswith("Stockfish")
    positions = positions_of(chess.STARTING_FEN, list(played.mainline_moves()))
    for name, client in (("DGT", dgt), ("ChessLink", chesslink)):
        reads = placements_read(client)
        first = positions.index(reads[0])  # (the game may have begun before they asked)
        # The computer's last move ends the game when it is chosen, before the person
        # makes it on the board (--once then stops): the apps may read the board without it.
        check_timeline(reads, positions[first:], may_skip=set(range(len(positions))),
                       last_unfinished=played.headers["Result"] != "*", where=name)
