from __future__ import annotations

import io

import chess
import pytest

from board_ctl.core import events as ev
from board_ctl.errors import BoardCtlError, SensorLogError
from board_ctl.sensorlog import (
    dumps,
    event_to_json,
    parse_line,
    read_sensor_log,
    start_to_json,
    StartInfo,
)

EVENTS = [
    ev.Lifted(1.25, chess.E2), ev.Placed(1.912, chess.E4), ev.ClockPressed(2.4, chess.WHITE),
    ev.PromotionChosen(3.0, chess.KNIGHT), ev.Resigned(4.0, chess.BLACK),
    ev.DrawOffered(5.0, chess.WHITE), ev.DrawAccepted(5.5, chess.BLACK),
    ev.DrawClaimed(6.0, chess.WHITE), ev.Snapshot(7.0, chess.BB_RANK_1 | chess.BB_RANK_8),
]


def test_every_event_round_trips() -> None:
    for number, event in enumerate(EVENTS, start=1):
        assert parse_line(dumps(event_to_json(event)), number) == event


def test_start_line_round_trips() -> None:
    start = StartInfo("8/5P1k/8/8/8/8/6KP/8 w - - 0 1", "5400+30", {"White": "A"})
    assert parse_line(dumps(start_to_json(start)), 1) == start


@pytest.mark.parametrize("text, words", [
    ("{", "not valid JSON"),
    ("[]", "not a JSON object"),
    ('{"ev": "lift", "sq": "e2"}', "'t' must be"),
    ('{"t": -1, "ev": "lift", "sq": "e2"}', "'t' must be"),
    ('{"t": true, "ev": "lift", "sq": "e2"}', "'t' must be"),
    ('{"t": 1, "ev": "lift", "sq": "i9"}', "square name"),
    ('{"t": 1, "ev": "clock", "side": "red"}', "'side'"),
    ('{"t": 1, "ev": "promote", "piece": "k"}', "'piece'"),
    ('{"t": 1, "ev": "jump"}', "unknown event"),
    ('{"t": 0, "ev": "start", "fen": "not a fen"}', "bad FEN"),
    ('{"t": 0, "ev": "start", "fen": "8/8/8/8/8/8/8/8 w - - 0 1"}', "not a legal position"),
])
def test_bad_lines(text: str, words: str) -> None:
    with pytest.raises(SensorLogError) as caught:
        parse_line(text, 7)
    assert words in str(caught.value) and str(caught.value).startswith("line 7: ")
    assert isinstance(caught.value, BoardCtlError) and isinstance(caught.value, ValueError)


def test_reading_goes_on_past_bad_lines() -> None:
    text = "\n".join([
        '{"t": 1.0, "ev": "lift", "sq": "e2"}',
        "garbage",
        '{"t": 0.5, "ev": "place", "sq": "e4"}',  # time going backwards
        '{"t": 0.0, "ev": "start"}',  # start not on the first line
        "",
        '{"t": 2.0, "ev": "place", "sq": "e4"}',
    ])
    log = read_sensor_log(io.StringIO(text))
    assert log.events == [ev.Lifted(1.0, chess.E2), ev.Placed(2.0, chess.E4)]
    assert [e.line for e in log.errors] == [2, 3, 4]


def test_bad_start_keys_are_reported_and_the_rest_kept() -> None:
    text = ('{"t": 0, "ev": "start", "fen": "8/5P1k/8/8/8/8/6KP/8 w - - 0 1", '
            '"time_control": "ten minutes", "tags": {"White Elo": "2000", "FEN": "x", '
            '"Black": "Anna \\"Q\\"", "Event": "Club night"}}\n'
            '{"t": 1.0, "ev": "lift", "sq": "f7"}\n')
    log = read_sensor_log(io.StringIO(text))
    assert log.start.fen == "8/5P1k/8/8/8/8/6KP/8 w - - 0 1"
    assert log.start.time_control is None and log.start.tags == {"Event": "Club night"}
    assert len(log.errors) == 4 and all(e.line == 1 for e in log.errors)
    assert len(log.events) == 1
