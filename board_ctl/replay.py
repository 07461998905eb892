"""Replaying a sensor log through the referee: what `board-ctl replay` does."""

from __future__ import annotations

from collections.abc import Iterable

from board_ctl.core.events import Event
from board_ctl.core.profiles import Profile
from board_ctl.core.referee import Referee
from board_ctl.record import GameRecord
from board_ctl.sensorlog import SensorLog, StartInfo


def replay_events(start: StartInfo, events: Iterable[Event], profile: Profile) -> GameRecord:
    referee = Referee(start.fen, profile)
    record = GameRecord(start.fen, dict(start.tags))
    last_t = 0.0
    for event in events:
        record.extend(referee.feed(event))
        last_t = event.t
    record.extend(referee.finish(last_t))
    return record


def replay_log(log: SensorLog, profile: Profile) -> GameRecord:
    return replay_events(log.start, log.events, profile)
