"""Replaying a sensor log through the referee: what `board-ctl replay` does, and how a
restarted service gets its game back from the journal."""

from __future__ import annotations

from collections.abc import Iterable

from board_ctl.core.events import Event
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.referee import Referee
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import BoardCtlError, SensorLogError
from board_ctl.record import GameRecord
from board_ctl.sensorlog import SensorLog, StartInfo


def new_game(
    start: StartInfo, profile: Profile, time_control: TimeControl | None = None
) -> tuple[Referee, GameRecord]:
    """A referee and an empty record for a game; `time_control` overrides the start's.
    (`profile` is the caller's: a start line's own `profile` is what `start_profile`
    reads.)"""
    if time_control is None and start.time_control:
        time_control = TimeControl.parse(start.time_control)
    referee = Referee(start.fen, profile, time_control=time_control, remote=start.remote,
                      release_completes=start.release_completes,
                      default_time=start.default_time)
    record = GameRecord(start.fen, dict(start.tags),
                        str(time_control) if time_control is not None else None,
                        rules=profile.rules_tag)
    return referee, record


def start_profile(start: StartInfo, chosen: str | None = None) -> Profile:
    """The profile a game is replayed under: the one `chosen` (a command-line option),
    else the one its start line names, else fide."""
    return PROFILES[chosen or start.profile or "fide"]


def feed_all(referee: Referee, record: GameRecord, events: Iterable[Event]) -> float:
    """Feed events in order; the time of the last one (0.0 for none)."""
    last_t = 0.0
    for event in events:
        record.extend(referee.feed(event))
        last_t = event.t
    return last_t


def replay_events(
    start: StartInfo,
    events: Iterable[Event],
    profile: Profile,
    time_control: TimeControl | None = None,
) -> GameRecord:
    """The whole game of a log: its events, then the end of the log."""
    referee, record = new_game(start, profile, time_control)
    last_t = feed_all(referee, record, events)
    record.extend(referee.finish(last_t))
    return record


def replay_log(
    log: SensorLog, profile: Profile, time_control: TimeControl | None = None
) -> GameRecord:
    """The game of a read log. An event the referee refuses (a time it cannot keep) is
    added to the log's errors with its line and skipped: the rest still replays."""
    referee, record = new_game(log.start, profile, time_control)
    lines = log.lines if len(log.lines) == len(log.events) else [None] * len(log.events)
    last_t = 0.0
    for line, event in zip(lines, log.events):
        try:
            effects = referee.feed(event)
        except BoardCtlError as exc:
            log.errors.append(SensorLogError(f"the referee refused this event: {exc}; "
                                             "skipped", line))
            continue
        record.extend(effects)
        last_t = event.t
    record.extend(referee.finish(last_t))
    return record
