"""How soon does an app read a move? Board event -> DGT field update / ChessLink status.

    nice python3 bench/bench_apps.py [--rounds R]

`board-ctl run` runs as its own process on a real pty (journal on, a fresh data
directory, a 600+5 clock); this script plays the board's side with the firmware's codec
at real speed (the board's clock runs with the wall's, as a real board's does), and two
hosts read the app ports as programs do: a DGT host in the nice update mode and a
ChessLink host with reports on every change (tests/dgtclient.py and
tests/chesslinkclient.py, written from the protocols' descriptions). For each move of
real games it times:

- lift -> the DGT field update emptying the square, and the ChessLink status showing it;
- placement -> the field update with the moved piece, and the status;
- clock press -> the LED frame showing the other side to move (the baseline: the
  latency the service is built for), and -> the DGT clock reading whose lever shows the
  other side's turn.

A lift or a placement is only a change once it has held 100 ms (contact bounce never
reaches anyone); the referee learns that it held at the board's next event or at the
link's next quiet tick, so a change's floor is that 100 ms plus up to one tick. The same
press -> LED frame latency is also measured without the app ports, alternating rounds,
so the ports' cost to the LEDs is a ratio from the same conditions. Prints p50 and p99
and the ratios; the machine's load is printed with them.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
import tty
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_service import (GAMES, Code, fresh_data_dir, percentile,  # noqa: E402
                           status_side)
from chesslinkclient import ChessLinkClient  # noqa: E402
from dgtclient import UPDATE_NICE, DgtClient, field_of  # noqa: E402
from firmware_bridge import protocol as P  # noqa: E402

WAIT = 5.0  # s: an answer not there by then is a failure
PAUSE = 0.15  # s between a change seen and the next (the hand moving on)
PLIES = 40  # plies of each game played


class RealSpeedBoard:
    """The board's side of the link on a pty, its clock running with the wall's."""

    def __init__(self, link: Path) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        link.unlink(missing_ok=True)
        os.symlink(os.ttyname(self.slave), link)
        self.link = link
        self.decoder = P.Decoder()
        self.sender = P.Sender()
        self.started = time.perf_counter()
        self.occupied = chess.Board().occupied
        self.leds: list[tuple[float, P.Message]] = []

    @property
    def ms(self) -> int:
        return int((time.perf_counter() - self.started) * 1000)

    def send(self, mtype: int, *values: object) -> float:
        os.write(self.master, self.sender.frame(mtype, *values))
        return time.perf_counter()

    def receive(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        for msg in self.decoder.feed(os.read(self.master, 4096)):
            if msg.type == P.HELLO:
                self.send(P.HELLO_ACK, "bench 0.1", "bench-board")
                self.send(P.SNAPSHOT, self.occupied, self.ms, P.ON_CONNECT)
            elif msg.type == P.REQUEST_SNAPSHOT:
                self.send(P.SNAPSHOT, self.occupied, self.ms, P.ON_REQUEST)
            elif msg.type == P.PING:
                self.send(P.PONG, msg.token)
            elif msg.type == P.LEDS:
                self.leds.append((time.perf_counter(), msg))

    def square(self, square: chess.Square, occupied: bool) -> float:
        bit = chess.BB_SQUARES[square]
        self.occupied = self.occupied | bit if occupied else self.occupied & ~bit
        return self.send(P.SQUARE, square, occupied, self.ms)

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)
        self.link.unlink(missing_ok=True)


@dataclass
class Samples:
    lift_dgt: list[float] = field(default_factory=list)
    lift_link: list[float] = field(default_factory=list)
    place_dgt: list[float] = field(default_factory=list)
    place_link: list[float] = field(default_factory=list)
    press_leds: list[float] = field(default_factory=list)
    press_clock: list[float] = field(default_factory=list)
    press_leds_without: list[float] = field(default_factory=list)


class Rig:
    def __init__(self, workdir: Path, data: Path, ports: bool) -> None:
        self.workdir = workdir
        self.board = RealSpeedBoard(workdir / "board")
        args = [sys.executable, "-m", "board_ctl.cli", "run", "--port", str(workdir / "board"),
                "--view", "none", "--pgn", str(workdir / "bench.pgn"), "--data-dir", str(data),
                "--time-control", "600+5"]
        if ports:
            args += ["--dgt", f"pty:{workdir / 'dgt'}", "--chesslink",
                     f"pty:{workdir / 'chesslink'}"]
        self.service = subprocess.Popen(args, cwd=workdir, env=Code("this", ROOT).env(),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        self.dgt: DgtClient | None = None
        self.link: ChessLinkClient | None = None
        self.wait(lambda: bool(self.board.leds), "the service's first LED frame")
        if ports:
            self.wait(lambda: (workdir / "dgt").exists() and (workdir / "chesslink").exists(),
                      "the app ports")
            self.dgt = DgtClient(str(workdir / "dgt"))
            self.dgt.send(UPDATE_NICE)
            self.dgt.board_dump()
            self.link = ChessLinkClient(str(workdir / "chesslink"))
            self.link.request("W0203", "w")
            self.link.status()

    def pump(self) -> None:
        self.board.receive(0.0005)
        for client in (self.dgt, self.link):
            if client is not None:
                client.pump(0.0)

    def wait(self, check, what: str) -> float:  # type: ignore[no-untyped-def]
        deadline = time.perf_counter() + WAIT
        while not check():
            if time.perf_counter() > deadline or self.service.poll() is not None:
                raise TimeoutError(f"no {what} within {WAIT} s")
            self.pump()
        return time.perf_counter()

    def rest(self, seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            self.pump()

    def change(self, square: chess.Square, piece: chess.Piece | None, s: Samples) -> None:
        """Lift (piece None) or put down `piece` on `square`; time what the apps read."""
        occupied = piece is not None
        dgt_seen = len(self.dgt.boards) if self.dgt else 0
        link_seen = len(self.link.statuses) if self.link else 0
        sent = self.board.square(square, occupied)
        if self.dgt is None or self.link is None:
            self.rest(PAUSE + 0.2)
            return
        code = 0 if piece is None else "PRNBKQprnbkq".index(piece.symbol()) + 1
        fld = field_of(square)
        got_dgt = self.wait(lambda: any(
            self.dgt.codes[fld] == code for _ in self.dgt.boards[dgt_seen:]),
            f"DGT field update of {chess.square_name(square)}")
        symbol = "." if piece is None else piece.symbol()
        link = self.link

        def status_shows() -> bool:
            return any(_char(p, square) == symbol for _, p in link.statuses[link_seen:])
        got_link = self.wait(status_shows, f"ChessLink status of {chess.square_name(square)}")
        (s.lift_dgt if piece is None else s.place_dgt).append((got_dgt - sent) * 1000)
        (s.lift_link if piece is None else s.place_link).append((got_link - sent) * 1000)
        self.rest(PAUSE)

    def press(self, mover: chess.Color, s: Samples, ports: bool) -> None:
        leds_seen = len(self.board.leds)
        clocks_seen = len(self.dgt.clocks) if self.dgt else 0
        sent = self.board.send(P.CLOCK, P.WHITE if mover else P.BLACK, self.board.ms)
        self.wait(lambda: any(status_side(m) != mover
                              for _, m in self.board.leds[leds_seen:]), "LED frame")
        at = next(t for t, m in self.board.leds[leds_seen:] if status_side(m) != mover)
        (s.press_leds if ports else s.press_leds_without).append((at - sent) * 1000)
        if self.dgt is not None:
            turn_bit = 0x10 if mover == chess.BLACK else 0x08  # left White, right Black
            self.wait(lambda: any(c.status & turn_bit for c in self.dgt.clocks[clocks_seen:]),
                      "DGT clock reading")
            s.press_clock.append((time.perf_counter() - sent) * 1000)
        self.rest(PAUSE)

    def close(self) -> None:
        for client in (self.dgt, self.link):
            if client is not None:
                client.close()
        self.service.terminate()
        self.service.communicate(timeout=30)
        self.board.close()


def _char(placement: str, square: chess.Square) -> str:
    board = chess.Board(None)
    board.set_board_fen(placement)
    piece = board.piece_at(square)
    return "." if piece is None else piece.symbol()


def play_game(rig: Rig, index: int, s: Samples, ports: bool) -> None:
    """The first PLIES plies of the index-th classic (one game a service: the next would
    need the board set up again)."""
    with GAMES.open(encoding="utf-8") as stream:
        for _ in range(index):
            chess.pgn.skip_game(stream)
        game = chess.pgn.read_game(stream)
        assert game is not None
        board = game.board()
        for move in list(game.mainline_moves())[:PLIES]:
            mover = board.piece_at(move.from_square)
            assert mover is not None
            if board.is_en_passant(move):
                rig.change(chess.square(chess.square_file(move.to_square),
                                        chess.square_rank(move.from_square)), None, s)
            elif board.is_capture(move):
                rig.change(move.to_square, None, s)
            rig.change(move.from_square, None, s)
            placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
            if move.promotion:  # its square reads empty until the press: not timed
                rig.board.square(move.to_square, True)
                rig.rest(0.3)
            else:
                rig.change(move.to_square, placed, s)
            if board.is_castling(move):
                rank = chess.square_rank(move.from_square)
                short = board.is_kingside_castling(move)
                rook = chess.Piece(chess.ROOK, mover.color)
                rig.change(chess.square(7 if short else 0, rank), None, s)
                rig.change(chess.square(5 if short else 3, rank), rook, s)
            rig.press(mover.color, s, ports)
            board.push(move)
            if board.is_game_over():
                break


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds, each a game with the app ports and one without")
    parser.add_argument("--data-parent", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    samples = Samples()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-apps-") as tmp:
        for round_ in range(args.rounds):
            for ports in ((True, False) if round_ % 2 == 0 else (False, True)):
                workdir = Path(tmp) / f"r{round_}-{'ports' if ports else 'none'}"
                workdir.mkdir()
                rig = Rig(workdir, fresh_data_dir(args.data_parent), ports)
                try:
                    play_game(rig, round_, samples, ports)
                finally:
                    rig.close()
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}, on "
          f"{os.cpu_count()} CPUs (a shared machine: compare the ratios)")

    def line(name: str, values: list[float]) -> None:
        print(f"  {name:<44} {len(values):>4}   p50 {percentile(values, 50):7.1f}   "
              f"p99 {percentile(values, 99):7.1f}   mean {statistics.mean(values):7.1f}")

    print("latency, ms (board event written -> read by the host):")
    line("lift -> DGT field update", samples.lift_dgt)
    line("placement -> DGT field update", samples.place_dgt)
    line("lift -> ChessLink status", samples.lift_link)
    line("placement -> ChessLink status", samples.place_link)
    line("clock press -> DGT clock reading (lever)", samples.press_clock)
    line("clock press -> LED frame, with the app ports", samples.press_leds)
    line("clock press -> LED frame, without them", samples.press_leds_without)
    fields = samples.place_dgt + samples.lift_dgt
    leds = samples.press_leds
    for p in (50, 99):
        print(f"  p{p}: field update / LED frame {percentile(fields, p) / percentile(leds, p):.1f}x"
              f" (the 100 ms debounce is the field update's floor: minus it, "
              f"{(percentile(fields, p) - 100) / percentile(leds, p):.1f}x); clock reading / "
              f"LED frame {percentile(samples.press_clock, p) / percentile(leds, p):.2f}x; "
              f"LED frame with / without the ports "
              f"{percentile(leds, p) / percentile(samples.press_leds_without, p):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
