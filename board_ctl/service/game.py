"""One game at the board: its referee, its record, its sensor log, its crash-safe journal
and its output files.

Times: the board's events carry link seconds; a game starts at link time `t0` and its
referee and sensor log see ``t - t0`` (rounded to the microsecond, as the log stores it,
so replaying the log feeds the referee exactly what the service fed it).

A game resumed from its journal (after a crash or a power cut) has its referee rebuilt
from the journal's events; its timeline goes on from the journal's last time: `t0` is
set by the first item the new session sees, so that item comes just after it and the
time the service was away is charged to nobody.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from dataclasses import dataclass
from pathlib import Path

from board_ctl.core import events as ev
from board_ctl.core.effects import Effect, GameOver, LedFrame
from board_ctl.core.profiles import Profile
from board_ctl.core.referee import CLOCK_GRACE, Referee
from board_ctl.errors import BoardCtlError
from board_ctl.journal import JournalError, JournalWriter, Recovered
from board_ctl.record import GameRecord
from board_ctl.replay import feed_all, new_game
from board_ctl.sensorlog import StartInfo
from board_ctl.service.sensorwriter import SensorLogWriter
from board_ctl.storage import write_atomic

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameFiles:
    sensor: Path  # the raw events (JSON Lines), written as they arrive
    pgn: Path
    report: Path  # the game report (JSON Lines)

    def as_record(self) -> dict[str, str]:
        """For the journal: a resumed game goes on writing the same files."""
        return {"pgn": str(self.pgn.absolute()), "report": str(self.report.absolute()),
                "sensor": str(self.sensor.absolute())}

    @classmethod
    def from_record(cls, record: dict[str, str]) -> GameFiles | None:
        if not all(isinstance(record.get(k), str) for k in ("pgn", "report", "sensor")):
            return None
        return cls(sensor=Path(record["sensor"]), pgn=Path(record["pgn"]),
                   report=Path(record["report"]))

    def paths(self) -> tuple[Path, ...]:
        return (self.pgn, self.report, self.sensor)


class OutputNamer:
    """Where game n goes: --pgn/--report if given (game 2 on gets -2, -3 ...), else a
    dated name in the output directory. The sensor log always sits beside the PGN."""

    def __init__(self, directory: Path, pgn: Path | None = None,
                 report: Path | None = None) -> None:
        self.directory = directory
        self.pgn = pgn
        self.report = report

    def directories(self) -> list[Path]:
        """Where the files go (checked at start-up: they must be writable)."""
        if self.pgn is None:
            return [self.directory]
        dirs = [self.pgn.parent] + ([self.report.parent] if self.report is not None else [])
        return list(dict.fromkeys(d if str(d) else Path(".") for d in dirs))

    def files(self, number: int, when: dt.datetime) -> GameFiles:
        if self.pgn is not None:
            suffix = "" if number == 1 else f"-{number}"
            pgn = self.pgn.with_name(f"{self.pgn.stem}{suffix}{self.pgn.suffix or '.pgn'}")
            report = self.report
            if report is not None and number > 1:
                report = report.with_name(f"{report.stem}{suffix}{report.suffix}")
        else:
            stem = f"game-{when:%Y%m%d-%H%M%S}"
            pgn = self.directory / f"{stem}.pgn"
            n = 1
            while any(p.exists() for p in (pgn, _beside(pgn, ".sensor.jsonl"))):
                n += 1
                pgn = self.directory / f"{stem}-{n}.pgn"
            report = None
        return GameFiles(sensor=_beside(pgn, ".sensor.jsonl"), pgn=pgn,
                         report=report if report is not None else _beside(pgn, ".report.jsonl"))


def _beside(pgn: Path, suffix: str) -> Path:
    return pgn.with_name(pgn.stem + suffix)


RESUME_GAP = 0.001  # s of game time between a resumed journal's last time and the next item
TIME_MARK_EVERY = 1.0  # s: while a clock runs, the journal notes the time this often


def resume_time(recovered: Recovered, now: float) -> float:
    """Where a resumed game's timeline goes on: just after the journal's last time, but
    not inside the grace after a clock press (CLOCK_GRACE, 0.3 s): the power was off far
    longer than that, so what the board shows at connection is not part of the pressed
    move. Only a cut within 0.3 s of a press charges those few tenths (to the side whose
    clock the press started); any other cut charges nobody."""
    at = max(recovered.last_t, now)
    presses = [e.t for e in recovered.events if isinstance(e, ev.ClockPressed)]
    if presses and at - presses[-1] < CLOCK_GRACE:
        at = presses[-1] + CLOCK_GRACE
    return at + RESUME_GAP


def rebuilt(recovered: Recovered, profile: Profile) -> tuple[Referee, GameRecord]:
    """A journal's game exactly as it was played: its referee fed the journal's events,
    and the timers fired up to the journal's last time (its marks are where a timer
    changed the game: what they did is in the journal already)."""
    referee, record = new_game(recovered.start, profile)
    feed_all(referee, record, recovered.events)
    record.extend(referee.feed(ev.Tick(recovered.last_t)))
    return referee, record


class GameSession:
    def __init__(self, number: int, start: StartInfo, profile: Profile, files: GameFiles,
                 t0: float | None, journal: JournalWriter | None = None,
                 recovered: Recovered | None = None, game_id: str = "") -> None:
        self.number = number
        start = dataclasses.replace(start, profile=profile.name)  # (its sensor log says it)
        self.start = start
        self.files = files
        self.t0 = t0  # None (resumed): set by the first item seen
        self.game_id = game_id  # the game's folder in the archive ("" without one)
        self.journal = journal  # the crash-safe journal (None: no archive)
        self.ended = False  # the journal's end record is written
        # as `board-ctl replay` starts a game (a start line's time control included)
        self.referee, self.record = (new_game(start, profile) if recovered is None
                                     else rebuilt(recovered, profile))
        self.sensor_log = SensorLogWriter(files.sensor, start)
        self.last_t = 0.0  # game time of the last board event (what replay finishes at)
        self.marked_t = 0.0  # the latest time the journal holds
        self.resume_at = 0.0
        if recovered is not None:  # the game so far, exactly as it was played
            for event in recovered.events:
                self.sensor_log.write(event)
            self.last_t = max((e.t for e in recovered.events), default=0.0)
            self.resume_at = round(resume_time(recovered, self.referee.now), 6)
            self.marked_t = self.resume_at
        self.finished = False
        self.written = False
        self.pgn_written = False  # the PGN is on disk (a full disk may have refused it)

    @property
    def over(self) -> bool:
        return self.referee.result is not None

    @property
    def result(self) -> GameOver | None:
        return self.referee.result

    def local(self, t: float) -> float:
        if self.t0 is None:  # resumed: the first item comes just after the journal's end
            self.t0 = t - self.resume_at
        return round(max(t - self.t0, 0.0), 6)

    def begin(self) -> list[Effect]:
        """The opening LED frame (white to move)."""
        return self._feed(ev.Tick(0.0))

    def feed(self, event: ev.Event) -> list[Effect]:
        event = dataclasses.replace(event, t=max(self.local(event.t), self.referee.now))
        if not isinstance(event, ev.Tick):
            self.sensor_log.write(event)  # first: a crash in the referee still leaves it
            self.last_t = event.t
        return self._feed(event)

    def _feed(self, event: ev.Event) -> list[Effect]:
        effects = self.referee.feed(event)
        self.record.extend(effects)
        self._journal(None if isinstance(event, ev.Tick) else event, effects)
        return effects

    def _journal(self, event: ev.Event | None, effects: list[Effect]) -> None:
        """Stage the event and its effects for the journal; `commit` makes them durable,
        before anything shows the effects.

        A tick is journaled as the time it marks when a timer it fired changed what the
        LEDs show (the computer's move seen made, a move completed by release): a resumed
        game reaches that time, hence that state, before it reads the board again. A quiet
        tick is marked at most once a TIME_MARK_EVERY, while a clock runs: a player
        thinking when the power goes is charged his time."""
        if self.journal is None:
            return
        now = self.referee.now
        recorded = event is not None or any(not isinstance(e, LedFrame) for e in effects)
        if recorded:
            self.journal.record(event, effects)
        if event is None and effects and now > self.marked_t:
            self.journal.mark_time(now)  # (a move's own time may be earlier than this)
            self.marked_t = now
        elif recorded:
            self.marked_t = max(self.marked_t, now)
        elif (now - self.marked_t >= TIME_MARK_EVERY and self.referee.clock.running
              and self.referee.clock.timed and self.referee.result is None):
            self.journal.mark_time(now)
            self.marked_t = now

    def commit(self) -> None:
        """Everything staged durably on disk (one fsync); a disk that refuses keeps it
        waiting, and `storage_errors` says so."""
        self.sensor_log.file.flush()
        if self.journal is not None:
            try:
                self.journal.commit()
            except JournalError:
                pass  # kept in journal.file.error; retried at the next commit

    @property
    def waiting(self) -> bool:
        """Records the disk has not taken yet."""
        return bool(self.sensor_log.file.waiting
                    or (self.journal is not None and self.journal.waiting))

    def storage_errors(self) -> dict[Path, str]:
        """The game's files that cannot be written now, with why."""
        files = [self.sensor_log.file] + ([self.journal.file] if self.journal else [])
        return {f.path: f.error for f in files if f.error is not None}

    def end_journal(self) -> str | None:
        """The game is over (or the board's log ended): it will not be resumed. The
        error, if the journal cannot be written."""
        if self.journal is not None and not self.ended:
            try:
                self.journal.end(max(self.last_t, self.referee.now))
            except JournalError as exc:
                return str(exc)
            self.ended = True
        return None

    def finish(self) -> list[Effect]:
        """The board's log ends here (or the service stops): settle what is pending."""
        if self.finished:
            return []
        self.finished = True
        effects = self.referee.finish(self.last_t)
        self.record.extend(effects)
        self._journal(None, effects)
        return effects

    def write_outputs(self) -> list[str]:
        """The PGN and the report, each whole or not at all; what could not be written."""
        errors = []
        outputs = [(self.files.pgn, "PGN", self.record.pgn_text),
                   (self.files.report, "game report",
                    lambda: "\n".join(self.record.report_lines()) + "\n")]
        for path, what, text in outputs:
            try:
                write_atomic(path, text(), what)
                self.pgn_written = self.pgn_written or path == self.files.pgn
            except BoardCtlError as exc:
                errors.append(str(exc))
            except ValueError as exc:  # a record the writer refuses: the journal has it
                errors.append(f"cannot write {what} {path}: {exc}")
        self.written = True
        log.info("game %d: PGN %s, report %s, sensor log %s", self.number, self.files.pgn,
                 self.files.report, self.files.sensor)
        return errors

    def close(self) -> None:
        self.sensor_log.close()
        if self.journal is not None:
            self.journal.close()
