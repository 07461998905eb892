"""Helpers for the LiveChess endpoint tests: a client that does what lichess.org/dgt/play
does, a board emulator that holds still until told to go on, and the game excerpts
that carry every kind of move a feed must get right.

The client follows the page's own logic (lichess-org/lila ui/dgt/src/play.ts, read, not
copied): the literal ``{"id":1,"call":"eboards"}`` on open; on the reply with id 1
(compared loosely, as the page does) the first board's serial number and a subscribe
with id 2 for feed id 1; the last ``board`` of any feed kept; a ``setup`` with id 3
that resets its own expectation to ``san: []``; on a feed with ``san``: an empty list or
the same list again ignored, else ``len(san) - len(previous san)`` new moves, each
parsed against its own board (an unparsable one is what the page announces as an
illegal move).

Run as a program, this file is a board emulator (firmware_bridge.emulator, unchanged
but for its pauses): it plays its log up to the first ``--until`` and holds there until
SIGUSR1, then plays on to the next ``--until`` with the log's own spacing, and so on, as
a player who waits for the screen.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import io
import json
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a program by the tests
    sys.path.insert(0, str(ROOT))

from board_ctl.core import events as ev  # noqa: E402
from board_ctl.core.profiles import PROFILES  # noqa: E402
from board_ctl.livechess.address import Listen  # noqa: E402
from board_ctl.livechess.endpoint import LiveChessEndpoint  # noqa: E402
from board_ctl.sensorlog import StartInfo, read_sensor_log  # noqa: E402
from board_ctl.service.game import OutputNamer  # noqa: E402
from board_ctl.service.service import RunOptions, Service  # noqa: E402
from board_ctl.simulate import RenderStyle  # noqa: E402
from firmware_bridge.emulator import Emulator, PtyLink  # noqa: E402
from servicekit import FakeBoard, wait_until  # noqa: E402

EBOARDS = '{"id":1,"call":"eboards"}'  # byte for byte what the page sends on open


def open_ws(url: str, origin: str | None = "https://lichess.org") -> Any:
    """A WebSocket connection as a browser page on `origin` opens it (a context manager)."""
    from websockets.sync.client import connect

    return connect(url, origin=origin, proxy=None)  # type: ignore[arg-type]


def loosely_one(value: Any) -> bool:
    """JavaScript's ``value == '1'``, as the page compares the reply's id."""
    return value is not True and (value == 1 or value == "1")


class LichessDgtClient:
    """lichess.org/dgt/play's side of the LiveChess WebSocket, for tests."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws  # an open connection (websockets.sync.client.ClientConnection)
        self.messages: list[dict[str, Any]] = []
        self.boards: list[dict[str, Any]] | None = None
        self.serialnr = "0"  # the page's "no board yet"
        self.last_board: str | None = None
        self.last_legal: dict[str, Any] | None = None
        self.local = chess.Board()
        self.applied: list[str] = []  # SAN the page accepted since its setup
        self.problems: list[str] = []  # what the page would announce or log as errors
        self.feeds: list[dict[str, Any]] = []  # every feed param with a san
        self.ws.send(EBOARDS)

    def receive(self, timeout: float) -> dict[str, Any]:
        message = json.loads(self.ws.recv(timeout=timeout))
        self.messages.append(message)
        self._handle(message)
        return message

    def pump(self, until: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
        """Handle messages until `until()` holds, or fail after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what or until}; last messages: "
                                     f"{self.messages[-3:]}")
            try:
                self.receive(timeout=left)
            except TimeoutError:
                continue

    def setup(self, fen: str) -> None:
        self.ws.send(json.dumps({"id": 3, "call": "call", "param": {
            "id": 1, "method": "setup", "param": {"fen": fen}}}))
        self.local = chess.Board(fen)
        self.last_legal = {"board": "", "san": []}
        self.applied = []

    def _handle(self, message: dict[str, Any]) -> None:
        param = message.get("param")
        if message.get("response") == "feed" and isinstance(param, dict) and param.get("board"):
            self.last_board = param["board"]
        if message.get("response") == "call" and loosely_one(message.get("id")):
            assert isinstance(param, list), message
            self.boards = param
            self.serialnr = param[0]["serialnr"]
            self.ws.send(json.dumps({"id": 2, "call": "subscribe", "param": {
                "feed": "eboardevent", "id": 1, "param": {"serialnr": self.serialnr}}}))
            if param[0]["state"] not in ("ACTIVE", "INACTIVE"):
                self.problems.append(f"board {self.serialnr} is not properly connected")
        elif (message.get("response") == "feed" and isinstance(param, dict)
              and param.get("san") is not None):
            self._moves(param)

    def _moves(self, param: dict[str, Any]) -> None:
        san = param["san"]
        self.feeds.append(param)
        if not san:
            return
        if self.last_legal is not None and self.last_legal["san"] == san:
            return  # a duplicate
        new = 1 if self.last_legal is None else len(san) - len(self.last_legal["san"])
        self.last_legal = param
        for text in san[len(san) - new:] if new > 0 else []:
            try:
                move = self.local.parse_san(str(text).strip())
            except ValueError:
                self.problems.append(f"illegal move {text!r} on {self.local.fen()}")
                continue
            self.local.push(move)
            self.applied.append(text)


# ---------------------------------------------------------------- the games


@dataclass(frozen=True)
class Window:
    """Plies start..end of a corpus game: a mid-game position and the moves from it."""

    game: chess.pgn.Game
    start: int
    end: int

    def board_at(self, ply: int) -> chess.Board:
        board = self.game.board()
        for move in list(self.game.mainline_moves())[:ply]:
            board.push(move)
        return board

    @property
    def fen(self) -> str:
        return self.board_at(self.start).fen()

    def sans(self) -> list[str]:
        board = self.board_at(self.start)
        out = []
        for move in list(self.game.mainline_moves())[self.start:self.end]:
            out.append(board.san(move))
            board.push(move)
        return out


def kinds(board: chess.Board, move: chess.Move, reply: chess.Move | None) -> set[str]:
    """What a move is, of what the tests need: castling, en passant, promotion, and a
    capture answered by a recapture on the same square."""
    found = set()
    if board.is_castling(move):
        found.add("castling")
    if board.is_en_passant(move):
        found.add("en passant")
    if move.promotion:
        found.add("promotion")
    if board.is_capture(move) and reply is not None and reply.to_square == move.to_square:
        board.push(move)
        if board.is_capture(reply):
            found.add("recapture")
        board.pop()
    return found


ALL_KINDS = frozenset({"castling", "en passant", "promotion", "recapture"})


def windows(games: Iterator[chess.pgn.Game] | tuple[chess.pgn.Game, ...],
            min_start: int = 8) -> list[Window]:
    """For each game that has them all, the shortest window that starts in the middle
    game (at least `min_start` plies in) with every kind of ALL_KINDS; shortest first."""
    found = []
    for game in games:
        board = game.board()
        moves = list(game.mainline_moves())
        at: list[set[str]] = []
        for i, move in enumerate(moves):
            at.append(kinds(board, move, moves[i + 1] if i + 1 < len(moves) else None))
            board.push(move)
        later: list[set[str]] = [set() for _ in range(len(moves) + 1)]
        for i in range(len(moves) - 1, -1, -1):
            later[i] = later[i + 1] | at[i]
        best: Window | None = None
        for start in range(min_start, len(moves)):
            if not later[start] >= ALL_KINDS:
                break
            seen: set[str] = set()
            for end in range(start, len(moves)):
                seen |= at[end]
                if seen >= ALL_KINDS:
                    stop = min(end + 2, len(moves))  # the recapture itself too
                    if best is None or stop - start < best.end - best.start:
                        best = Window(game, start, stop)
                    break
        if best is not None:
            found.append(best)
    return sorted(found, key=lambda w: w.end - w.start)


def check_feeds(feeds: list[dict[str, Any]]) -> None:
    """Every feed's `board` is the position after its moves from its `start` (never a
    half-made move), and within one start the moves only grow."""
    previous: tuple[str, list[str]] | None = None
    for param in feeds:
        board = chess.Board(param["start"])
        for san in param["san"]:
            board.push_san(san)
        assert param["board"] == board.board_fen(), param
        if previous is not None and previous[0] == param["start"]:
            assert param["san"][:len(previous[1])] == previous[1], (previous, param)
        previous = (param["start"], param["san"])


def rearrange(occupied: int, target: int, t: float, gap: float = 0.3) -> list[Any]:
    """A person putting the pieces where the LEDs show: extra ones off, missing ones on."""
    from board_ctl.core import events as ev

    out: list[Any] = []
    for square in chess.scan_forward(occupied & ~target):
        t += gap
        out.append(ev.Lifted(round(t, 4), square))
    for square in chess.scan_forward(target & ~occupied):
        t += gap
        out.append(ev.Placed(round(t, 4), square))
    return out


# ---------------------------------------------------------------- the service on a fake board


START = chess.Board().occupied
SERIAL = "3000147740"
QUICK = RenderStyle(think=(0.2, 0.9), long_think_prob=0.0, hand=(0.2, 0.6),
                    clock_delay=(0.1, 0.4), idle_lift_prob=0.0)


@functools.cache
def game_windows() -> tuple[Window, ...]:
    from corpus import corpus

    return tuple(windows(corpus()))



class Rig:
    """A service on a fake board with the endpoint as its observer."""

    def __init__(self, tmp_path: Path, start: StartInfo = StartInfo(),
                 origins: tuple[str, ...] = ("https://lichess.org",),
                 **endpoint_options: Any) -> None:
        self.board = FakeBoard()
        self.endpoint = LiveChessEndpoint(Listen("127.0.0.1", 0), serialnr=SERIAL,
                                          start=start, origins=origins, **endpoint_options)
        self.service = Service(self.board, profile=PROFILES["fide"], start=start,
                               namer=OutputNamer(tmp_path), options=RunOptions(),
                               observers=[self.endpoint], clock=lambda: 100.0)
        self.endpoint.start(self.service.submit)
        self.service.open()

    @property
    def url(self) -> str:
        return self.endpoint.url

    def feed(self, items: Iterable[object]) -> None:
        for item in items:
            self.service.queue.put(item)
        self.drain()

    def drain(self) -> None:
        while not self.service.queue.empty():
            self.service.step(timeout=0)

    def take_command(self) -> None:
        """A client's command reaches the loop through its queue: handle it."""
        wait_until(lambda: not self.service.queue.empty(), what="the client's command")
        self.drain()

    def close(self) -> None:
        self.service.close()


def log_events(rendered_jsonl: str, shift: float) -> list[ev.Event]:
    """A rendered log's events, `shift` seconds later (the board's link time)."""
    log = read_sensor_log(io.StringIO(rendered_jsonl))
    assert not log.errors
    return [dataclasses.replace(e, t=round(e.t + shift, 6)) for e in log.events]


# ---------------------------------------------------------------- a board that waits


class HeldEmulator(Emulator):
    """The emulator, holding at each of `holds` (log times, ascending) until the next
    SIGUSR1, then playing on from there: a person who waits for the screen."""

    goes = 0  # SIGUSR1s received (the signal handler counts them)

    def __init__(self, *args: Any, holds: list[float], **kwargs: Any) -> None:
        super().__init__(*args, until=holds[0] if holds else None, **kwargs)
        self.holds = holds
        self.released = 0  # holds let go so far

    def _play(self, now: float) -> None:
        while (self.released < HeldEmulator.goes and self.until is not None
               and self.origin is not None):
            held_since = self.origin + (self.until - self.start_at) / self.speed
            if now >= held_since:  # the log time U now plays at `now`
                self.origin += now - held_since
            self.released += 1
            self.until = self.holds[self.released] if self.released < len(self.holds) else None
        super()._play(now)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--link", required=True, type=Path)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--speed", type=float, default=1.0)
    parser.add_argument("--until", type=float, action="append", required=True,
                        help="a log time to hold at until the next SIGUSR1 (repeatable)")
    args = parser.parse_args(argv)
    with args.log.open(encoding="utf-8") as stream:
        log = read_sensor_log(stream)
    assert not log.errors, log.errors

    def go_on(signum: int, frame: object) -> None:
        HeldEmulator.goes += 1

    signal.signal(signal.SIGUSR1, go_on)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    emulator = HeldEmulator(PtyLink(args.link), list(log.events),
                            chess.Board(log.start.fen).occupied, speed=args.speed,
                            holds=sorted(args.until))
    return emulator.run()


if __name__ == "__main__":
    sys.exit(main())
