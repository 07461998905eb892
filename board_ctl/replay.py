"""Replaying a sensor log through the referee: what `board-ctl replay` does."""

from __future__ import annotations

from collections.abc import Iterable

from board_ctl.core.events import Event
from board_ctl.core.profiles import Profile
from board_ctl.core.referee import Referee
from board_ctl.core.timecontrol import TimeControl
from board_ctl.record import GameRecord
from board_ctl.sensorlog import SensorLog, StartInfo


def replay_events(
    start: StartInfo,
    events: Iterable[Event],
    profile: Profile,
    time_control: TimeControl | None = None,
) -> GameRecord:
    """Feed the events to a referee; `time_control` overrides the log's own."""
    if time_control is None and start.time_control:
        time_control = TimeControl.parse(start.time_control)
    referee = Referee(start.fen, profile, time_control=time_control)
    record = GameRecord(start.fen, dict(start.tags),
                        str(time_control) if time_control is not None else None)
    last_t = 0.0
    for event in events:
        record.extend(referee.feed(event))
        last_t = event.t
    record.extend(referee.finish(last_t))
    return record


def replay_log(
    log: SensorLog, profile: Profile, time_control: TimeControl | None = None
) -> GameRecord:
    return replay_events(log.start, log.events, profile, time_control)
