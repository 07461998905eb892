"""Games against a remote side (a computer) without processes: the referee in simulated
time, a computer that answers once its turn comes (as board_ctl.opponent does), and the
emulator's person (firmware_bridge.player.Person) who reads only the LED frames and makes
every move with the simulator's hands. What the referee must record is known: exactly
the moves chosen."""

from __future__ import annotations

import datetime as dt
import heapq
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import chess

from board_ctl.core import events as ev
from board_ctl.core.effects import Alert, Effect, GameOver, LedFrame, MoveMade
from board_ctl.core.leds import led_frame
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.core.timecontrol import TimeControl
from board_ctl.journal import JournalWriter, read_journal
from board_ctl.record import GameRecord
from board_ctl.sensorlog import StartInfo
from board_ctl.service.game import GameFiles, GameSession, OutputNamer
from firmware_bridge.player import Person, Remembered

Computer = Callable[[chess.Board, random.Random], chess.Move]
JOURNAL = "journal.jsonl"


def _files(folder: Path, run: int) -> GameFiles:
    """The resumed game's files of each run (the journal is the one that carries on)."""
    out = folder / f"run{run}"
    out.mkdir(parents=True, exist_ok=True)
    return OutputNamer(out).files(1, dt.datetime(2026, 12, 1))


def random_move(board: chess.Board, rng: random.Random) -> chess.Move:
    return rng.choice(sorted(board.legal_moves, key=chess.Move.uci))


@dataclass
class Played:
    start: StartInfo
    events: list[ev.Event]  # the sensor log: everything the referee was fed
    chosen: list[chess.Move]  # the moves as each side chose them, takebacks applied
    record: GameRecord
    alerts: list[Alert]
    result: GameOver | None
    person: Person
    frames: list[LedFrame] = field(default_factory=list)


def play(person: Person, *, remote: chess.Color, seed: int = 0, fen: str = chess.STARTING_FEN,
         profile: str = "fide", time_control: str | None = None,
         computer: Computer = random_move, think: tuple[float, float] = (0.3, 3.0),
         accept_draw: bool = False, max_plies: int = 80, limit: float = 3600.0,
         outages: dict[int, float] | None = None,
         restarts: dict[int, tuple[float, float]] | None = None,
         journal: Path | None = None,
         emulator_restarts: dict[int, float] | None = None,
         fresh: Callable[[Remembered, chess.Bitboard], Person] | None = None) -> Played:
    """`outages`: after the computer's n-th move is announced, the link is down for so many
    seconds: what the person's hands do then never reaches the referee, the board keeps
    showing the last frame it had, and a scan of the board ends the outage.

    `restarts` (with `journal`, a folder for it): `after` s after the computer's n-th move
    is announced, the service is killed (kill -9: its journal is what it had committed),
    and `away` s later it is started again, as `board-ctl run` does: the game resumed from
    its journal (GameSession), the resumed game's LEDs shown, then the board's scan at
    connection fed. Meanwhile the person goes on as he would (the board keeps its last
    frame), the computer's answer is lost with the service, and it thinks again once the
    game is resumed. Each event is committed to the journal as it is fed (one batch).

    `emulator_restarts`: so many seconds after the computer's n-th move is announced, the service
    is killed with its board emulator and started again, as `board-ctl run` with the
    built-in emulator: the game is rebuilt from everything the referee was fed (the
    journal), the person is a new one (`fresh(Remembered, occupied)`: the emulator's, who
    remembers the game as the service tells it) and the board's pieces stand where its
    sensors last said (the service starts its emulator so: a real board keeps its pieces
    through a power cut), less what was in the person's hand; the service shows the game
    where it stands, then the board's scan at connection is fed."""
    restart_at: float | None = None
    rng = random.Random(seed)
    tc = TimeControl.parse(time_control) if time_control else None
    referee = Referee(fen, PROFILES[profile], time_control=tc, remote=remote)
    start = StartInfo(fen=chess.Board(fen).fen(), remote=remote, time_control=time_control)
    record = GameRecord(start.fen, {}, time_control)
    session: GameSession | None = None
    if restarts:
        assert journal is not None
        session = GameSession(1, start, PROFILES[profile], _files(journal, 0), t0=0.0,
                              journal=JournalWriter.create(journal / JOURNAL, start, profile))
        referee, record = session.referee, session.record
    kill_at: float | None = None  # the service dies then
    back_at: float | None = None  # ... and is started again then
    restarted = 0
    queue: list[tuple[float, int, ev.Event]] = []
    order = itertools.count()
    fed: list[ev.Event] = []
    frames: list[LedFrame] = []
    answer: tuple[object, float, ev.Event] | None = None  # (position key, due, event)
    t = 0.0

    def schedule(events: list[ev.Event]) -> None:
        for event in events:
            heapq.heappush(queue, (event.t, next(order), event))

    physical = chess.Board(fen).occupied  # what stands on the board, seen or not
    announced = 0
    link_down_until: float | None = None

    def feed(event: ev.Event) -> None:
        nonlocal physical, announced, link_down_until, kill_at, restart_at
        if isinstance(event, (ev.Lifted, ev.Placed)):
            physical ^= chess.BB_SQUARES[event.square]
            if link_down_until is not None or back_at is not None:
                return  # lost with the link, or with the service
        elif back_at is not None:
            return  # no service to take it
        fed.append(event)
        if session is not None:
            sim_t = event.t
            effects: list[Effect] = session.feed(event)
            session.commit()
        else:
            sim_t = event.t
            effects = referee.feed(event)
            record.extend(effects)
        for effect in effects:
            if isinstance(effect, LedFrame):
                frames.append(effect)
                if link_down_until is None:
                    schedule(person.frame(effect, sim_t))
        if isinstance(event, ev.OpponentMoved):  # (shown on the board, then the link is lost)
            announced += 1
            if outages and announced in outages:
                link_down_until = event.t + outages[announced]
            if restarts and announced in restarts:
                kill_at = event.t + restarts[announced][0]
            if emulator_restarts and announced in emulator_restarts:
                restart_at = event.t + emulator_restarts[announced]

    def key() -> object:
        return (len(referee.board.move_stack), referee.board.fen())

    feed(ev.Tick(0.0))
    while t < limit:
        if referee.result is not None and (person.over or not queue):
            break
        if referee.result is None and answer is None and back_at is None:
            board = referee.board
            if board.turn == remote and referee.remote.execution is None:
                if len(board.move_stack) >= max_plies:
                    break
                if referee.draws.offer == (not remote) and accept_draw:
                    answer = (key(), t + rng.uniform(*think), ev.DrawAccepted(0.0, remote))
                else:
                    move = computer(board.copy(), rng)
                    answer = (key(), t + rng.uniform(*think), ev.OpponentMoved(0.0, move))
            elif referee.remote.hint_wanted:
                move = random_move(board, rng)
                answer = (key(), t + rng.uniform(0.3, 1.0), ev.HintGiven(0.0, move))
        if link_down_until is not None and t >= link_down_until:
            link_down_until = None
            feed(ev.Snapshot(round(t, 4), physical))  # the link is back: the board as it is
            continue
        if kill_at is not None and t >= kill_at:  # kill -9: what is on disk stays
            assert restarts is not None and session is not None
            back_at, kill_at = t + restarts[announced][1], None
            answer = None  # the computer's thinking dies with the service
            session.sensor_log.file.close()
            if session.journal is not None:
                session.journal.file.close()
            continue
        if back_at is not None and t >= back_at:  # board-ctl run again: resumed
            assert journal is not None
            back_at = None
            restarted += 1
            recovered = read_journal(journal / JOURNAL)
            session = GameSession(
                1, recovered.start, PROFILES[profile], _files(journal, restarted), t0=None,
                journal=JournalWriter.resume(journal / JOURNAL, recovered, recovered.last_t),
                recovered=recovered)
            referee = session.referee
            record = session.record
            shown = led_frame(referee.now, referee.led_view())  # the LEDs at start-up
            frames.append(shown)
            schedule(person.frame(shown, t))
            feed(ev.Snapshot(round(t, 4), physical))  # the scan at connection
            continue
        if restart_at is not None and t >= restart_at:
            restart_at = None
            assert fresh is not None
            referee = Referee(fen, PROFILES[profile], time_control=tc, remote=remote)
            for event in fed:  # the journal's events, replayed
                referee.feed(event)
            physical = referee.occupied  # where the pieces stood: the board kept them
            person = fresh(Remembered(chess.Board(fen).fen(), list(referee.board.move_stack),
                                      [sq for _, sq in referee.game.turn.touched]), physical)
            queue.clear()  # what the old emulator's person was about to do: gone with it
            answer = None  # the engine's search: gone with the service
            at = round(t, 4)
            shown = led_frame(at, referee.led_view())  # the game where it stands
            frames.append(shown)
            schedule(person.frame(shown, at))
            feed(ev.Snapshot(at, physical))  # the board's scan at connection
            continue
        due = [t + 0.1]
        if queue:
            due.append(queue[0][0])
        if answer is not None:
            due.append(answer[1])
        t = max(t, min(due))
        if queue and queue[0][0] <= t:
            feed(heapq.heappop(queue)[2])
        elif answer is not None and answer[1] <= t:
            position, _, event = answer
            answer = None
            if position == key():  # not taken back meanwhile
                feed(type(event)(t, *[getattr(event, f) for f in event.__dataclass_fields__
                                     if f != "t"]))
        else:
            if back_at is None:
                feed(ev.Tick(round(t, 4)))
            schedule(person.step(t))
        if answer is not None and answer[0] != key():
            answer = None  # a takeback, or the person moved on: not for this position
    record.extend(referee.finish(t) if session is None else session.finish())
    alerts = [e for e in record.report if e["kind"] == "alert"]
    return Played(start, fed, list(person.played), record, alerts,  # type: ignore[arg-type]
                  referee.result, person, frames)
