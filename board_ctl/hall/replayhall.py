"""Many boards in one process: each a real `Service` (referee, journal, archive) with its
real `BoardPublisher`, fed a replayed sensor log at `speed` times real time by one driver
thread instead of a board on a pty. What the 100-board benchmark (bench/bench_hall.py)
and the in-process hall tests run.

    hall = ReplayHall(root, [HallBoardSpec("b001", start, events, url, password), ...],
                      speed=20)
    hall.start(); hall.run(); hall.close()
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import chess

from board_ctl.archive import Archive
from board_ctl.core import events as ev
from board_ctl.core.effects import Effect, LedFrame
from board_ctl.core.profiles import PROFILES
from board_ctl.hall.publisher import BoardPublisher
from board_ctl.hall.settings import resolve
from board_ctl.sensorlog import StartInfo
from board_ctl.service.backends import Put
from board_ctl.service.game import OutputNamer
from board_ctl.service.messages import BoardDone
from board_ctl.service.service import RunOptions, Service
from board_ctl.service.view import ViewState

log = logging.getLogger(__name__)

TICKS_AFTER = (0.11, 0.21, 0.31, 0.41)  # s after an event: the referee's short timers
TICK_EVERY = 1.0  # s: then this often while nobody moves


def with_ticks(events: Sequence[ev.Event]) -> list[ev.Event]:
    """A log's events with the Ticks a live board sends between them (its timers run)."""
    out: list[ev.Event] = []
    for event, following in zip(events, [*events[1:], None]):
        out.append(event)
        end = following.t if following is not None else event.t + 2.0
        ticks = [event.t + d for d in TICKS_AFTER]
        t = event.t + TICKS_AFTER[-1] + TICK_EVERY
        while t < end:
            ticks.append(t)
            t += TICK_EVERY
        out += [ev.Tick(round(t, 6)) for t in ticks if t < end]
    return out


class ReplayBoard:
    """The board backend of a replayed log: the driver pushes its events; LED frames are
    counted (and the time the latest one was sent, for latency figures)."""

    description = "replayed sensor log"
    identity = "replayed sensor log"

    def __init__(self) -> None:
        self.put: Put | None = None
        self.frames = 0
        self.last_frame_at = 0.0

    def start(self, put: Put) -> None:
        self.put = put

    def send_leds(self, frame: LedFrame) -> None:
        self.frames += 1
        self.last_frame_at = time.perf_counter()

    def stop(self) -> None:
        pass


class _Closer:
    """The publisher as the service's observer, except that closing only asks it to stop
    (the hall stops a hundred at once, then waits for them together)."""

    def __init__(self, publisher: BoardPublisher) -> None:
        self.publisher = publisher

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        self.publisher.show(state, effects)

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        self.publisher.request_stop()


@dataclass
class HallBoardSpec:
    board_id: str
    start: StartInfo
    events: list[ev.Event]  # the log's events (time in log seconds)
    url: str
    password: str | None = None
    username: str = ""


@dataclass
class HallBoard:
    spec: HallBoardSpec
    service: Service
    publisher: BoardPublisher
    board: ReplayBoard
    items: list[ev.Event] = field(default_factory=list)
    next: int = 0
    done: bool = False


class ReplayHall:
    def __init__(self, root: Path, specs: Sequence[HallBoardSpec], speed: float = 20.0,
                 pgn_every: float = 1.0, drain: float = 30.0) -> None:
        self.root = root
        self.speed = speed
        self.drain = drain
        self.boards: list[HallBoard] = []
        for spec in specs:
            folder = root / spec.board_id
            archive = Archive(folder / "data")
            settings = resolve(spec.url, spec.board_id, username=spec.username)
            if spec.password is not None:
                settings = replace(settings, password=spec.password)
            publisher = BoardPublisher(settings, archive, pgn_every=pgn_every)
            board = ReplayBoard()
            service = Service(board, profile=PROFILES["fide"], start=spec.start,
                              namer=OutputNamer(folder / "games"),
                              options=RunOptions(once=True, linger=0.0), archive=archive,
                              observers=[_Closer(publisher)])
            publisher.attach(service)
            start = ev.Snapshot(0.0, chess.Board(spec.start.fen).occupied)
            self.boards.append(HallBoard(spec, service, publisher, board,
                                         [start, *with_ticks(spec.events)]))
        self.started_at = 0.0
        self._stop = threading.Event()

    def start(self) -> None:
        for board in self.boards:
            board.service.open()
            board.publisher.start()

    def log_time(self) -> float:
        return (time.perf_counter() - self.started_at) * self.speed

    def run(self, on_step: Callable[[float], None] | None = None) -> None:
        """Feed every board its events when their time comes (one thread for all), until
        every log has been played."""
        self.started_at = time.perf_counter()
        due = [(b.items[0].t, i) for i, b in enumerate(self.boards) if b.items]
        heapq.heapify(due)
        while due and not self._stop.is_set():
            now = self.log_time()
            if on_step is not None:
                on_step(now)
            t, i = due[0]
            if t > now:
                time.sleep(min((t - now) / self.speed, 0.01))
                continue
            heapq.heappop(due)
            board = self.boards[i]
            service = board.service
            while board.next < len(board.items) and board.items[board.next].t <= now:
                service.submit(board.items[board.next])
                board.next += 1
            while not service.queue.empty():
                if not service.step(0):
                    board.done = True
                    break
            if board.next < len(board.items):
                heapq.heappush(due, (board.items[board.next].t, i))
            else:
                service.submit(BoardDone(t, True, "the log was played"))
                service.step(0)
                board.done = True

    def serve_commands(self) -> None:
        """Carry out commands that arrived after the logs ended (tests)."""
        for board in self.boards:
            while not board.service.queue.empty():
                board.service.handle(board.service.queue.get_nowait())

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        """Close every service (its game written and journaled), then let every publisher
        send what is left (at most `drain` s), all at once."""
        for board in self.boards:
            board.publisher.drain_for = self.drain
            board.service.close()
        for board in self.boards:
            board.publisher.join()
