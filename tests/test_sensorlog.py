from __future__ import annotations

import io
import math

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
    # a quote is written escaped, as the PGN standard says: it is kept
    assert log.start.time_control is None
    assert log.start.tags == {"Event": "Club night", "Black": 'Anna "Q"'}
    assert len(log.errors) == 3 and all(e.line == 1 for e in log.errors)
    assert len(log.events) == 1


# ---------------------------------------------------------------- edges (issue 8 §1, §2)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from board_ctl.sensorlog import (  # noqa: E402
    MAX_LINE,
    MAX_T,
    BadStartError,
    SensorLogWarning,
    iter_sensor_log,
    load_sensor_log,
)

GOOD = '{"t": 2.0, "ev": "place", "sq": "e4"}'


@pytest.mark.parametrize("text, words", [
    ('{"t": 1' + "0" * 4000 + ', "ev": "lift", "sq": "e2"}', "a number of 4001 digits"),
    ('{"t": 1' + "0" * 5000 + ', "ev": "lift", "sq": "e2"}', "not valid JSON"),
    ('{"t": 1e16, "ev": "lift", "sq": "e2"}', "'t' must be the seconds since the game started"),
    (f'{{"t": {MAX_T * 2}, "ev": "lift", "sq": "e2"}}', "from 0 to 1e+12"),
    ('{"t": 1e400, "ev": "lift", "sq": "e2"}', "not inf"),
    ('{"t": NaN, "ev": "lift", "sq": "e2"}', "not nan"),
    ('{"t": -Infinity, "ev": "lift", "sq": "e2"}', "not -inf"),
    ("[" * 3000, "nested too deeply"),
    ('{"t": 1, "ev": "lift", "sq": ' + "[" * 3000 + "]" * 3000 + "}", "nested too deeply"),
    ('{"t": 1, "ev": "lift", "sq": "e2\\u001b[2J"}', "'e2\\x1b[2J'"),  # escaped
    ('{"t": 1, "ev": ["lift"]}', "unknown event ['lift']"),
    ('{"t": 1, "ev": "lift", "sq": "' + "x" * MAX_LINE + '"}', f"longer than {MAX_LINE}"),
])
def test_lines_no_number_or_parser_can_hold_are_one_line_errors(text: str, words: str) -> None:
    with pytest.raises(SensorLogError) as caught:
        parse_line(text, 3)
    message = str(caught.value)
    assert message.startswith("line 3: ") and words in message, message
    assert "\n" not in message and len(message) < 400


def test_a_bad_line_of_any_kind_loses_nothing_else() -> None:
    """Issue 8 §1-2: each of those lines costs only itself; the rest of the log is read."""
    bad = ['{"t": 1' + "0" * 4000 + ', "ev": "lift", "sq": "e2"}', "[" * 3000,
           '{"t": 1e16, "ev": "lift", "sq": "e2"}', "x" * (3 * MAX_LINE)]
    text = "\n".join(['{"t": 1.0, "ev": "lift", "sq": "e2"}', *bad, GOOD]) + "\n"
    log = read_sensor_log(io.StringIO(text))
    assert log.events == [ev.Lifted(1.0, chess.E2), ev.Placed(2.0, chess.E4)]
    assert [e.line for e in log.errors] == [2, 3, 4, 5]
    assert log.lines == [1, 6]


def test_clock_readings_are_numbers_of_seconds_and_absurd_ones_said() -> None:
    """Issue 8 §1: a reading that is no number of seconds is reported and the press kept
    without it; one no clock can show (1e308) is kept as read, with a warning naming the
    line, for the referee to refuse as a clock fault (as it would at the board)."""
    text = "".join(f'{{"t": {t}, "ev": "clock", "side": "white", "white": {w}, "black": 4}}\n'
                   for t, w in [(1, "1e308"), (2, "5"), (3, "-1"), (4, "1e400"), (5, "NaN"),
                                (6, '"five"'), (7, 3599999)])
    log = read_sensor_log(io.StringIO(text))
    assert log.events == [ev.ClockPressed(1.0, chess.WHITE, (1e308, 4.0)),
                          ev.ClockPressed(2.0, chess.WHITE, (5.0, 4.0)),
                          ev.ClockPressed(3.0, chess.WHITE), ev.ClockPressed(4.0, chess.WHITE),
                          ev.ClockPressed(5.0, chess.WHITE), ev.ClockPressed(6.0, chess.WHITE),
                          ev.ClockPressed(7.0, chess.WHITE, (3599999.0, 4.0))]
    assert [e.line for e in log.errors] == [3, 4, 5, 6]
    assert all("press is kept without the clock's times" in str(e) for e in log.errors)
    (warning,) = log.warnings
    assert isinstance(warning, SensorLogWarning) and warning.line == 1
    assert "more than a clock shows" in str(warning)


def test_unix_epoch_times_are_read() -> None:
    """Logs stamped with Unix-epoch seconds exist: they are inside the accepted range."""
    line = '{"t": 1764520000.25, "ev": "lift", "sq": "e2"}'
    assert parse_line(line, 1) == ev.Lifted(1764520000.25, chess.E2)


@pytest.mark.parametrize("first", [1e9, 1764520000.25, 4102444800.0])
def test_a_log_stamped_with_unix_time_is_read_with_one_warning(first: float) -> None:
    """Its moves read the same; the warning says why the first move's time is huge."""
    def log_from(base: float) -> str:
        return '{"ev": "start"}\n' + "".join(
            f'{{"t": {base + dt}, "ev": "{kind}", "sq": "{sq}"}}\n'
            for dt, kind, sq in [(0, "lift", "e2"), (0.5, "place", "e4"), (2, "lift", "e7"),
                                 (2.5, "place", "e5")])
    log = read_sensor_log(io.StringIO(log_from(first)))
    assert len(log.events) == 4 and log.errors == []
    (warning,) = log.warnings
    assert warning.line == 2 and "looks like Unix time" in str(warning)
    relative = read_sensor_log(io.StringIO(log_from(3.0)))
    assert relative.warnings == [] and len(relative.events) == 4  # (from 0: nothing said)


def test_a_time_control_of_400_nines_is_reported_and_the_game_replayed_untimed() -> None:
    text = ('{"t": 0, "ev": "start", "time_control": "' + "9" * 400 + '"}\n' + GOOD + "\n")
    log = read_sensor_log(io.StringIO(text))
    assert log.start.time_control is None and len(log.events) == 1
    (error,) = log.errors
    assert error.line == 1 and "is at most 3599999 s" in str(error)  # the core's bound
    assert "replayed without a clock" in str(error)


@pytest.mark.parametrize("start", [
    '{"t": 0, "ev": "start", "fen": "not a fen"}',
    '{"t": 0, "ev": "start", "fen": "8/8/8/8/8/8/8/8 w - - 0 1"}',
    '{"t": 0, "ev": "start", "fen": 42}',
])
def test_a_start_position_that_cannot_be_played_stops_the_reading(start: str) -> None:
    """Issue 8 §2: replaying the moves from the standard position instead would record a
    game nobody played."""
    with pytest.raises(BadStartError) as caught:
        read_sensor_log(io.StringIO(start + "\n" + GOOD + "\n"))
    assert caught.value.line == 1
    # the same line anywhere else is only a misplaced start line
    log = read_sensor_log(io.StringIO(GOOD + "\n" + start + "\n"))
    assert len(log.events) == 1 and "only allowed on the first line" in str(log.errors[0])


@pytest.mark.parametrize("tags, words", [
    ({"_x": "1"}, "'_x' is not a PGN tag name"),
    ({"Annotator": "a\rb"}, "non-printing character '\\r'"),
    ({"Variant": "foo"}, "'foo' is not standard chess"),
    ({"White": "Eve\r\n\r\n1. f3 e5 2. g4 Qh4# 0-1"}, "non-printing character"),
    ({"Date": "yesterday"}, "not a PGN date"),
    ({"White": 7}, "must be text"),
    ({"Result": "1-0"}, "set by the game record"),
])
def test_bad_start_tags_are_reported_and_left_out(tags: dict[str, object], words: str) -> None:
    import json

    start = json.dumps({"t": 0, "ev": "start", "tags": {**tags, "Event": "Club"}})
    log = read_sensor_log(io.StringIO(start + "\n" + GOOD + "\n"))
    assert log.start.tags == {"Event": "Club"}
    (error,) = log.errors
    assert error.line == 1 and words in str(error) and "left out" in str(error), str(error)
    assert str(error).isprintable()


def test_files_are_utf8_with_or_without_a_bom(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"t": 0, "ev": "start", "tags": {"White": "J\xc3\xb6rg"}}\n'
                     b'{"t": 1.0, "ev": "lift", "sq": "e2"}\n{"t": 1.5, "ev": "pl\xff"}\n')
    log = load_sensor_log(path)
    assert log.start.tags == {"White": "Jörg"} and log.events == [ev.Lifted(1.0, chess.E2)]
    assert [e.line for e in log.errors] == [3]  # a bad byte spoils only its own line


@pytest.mark.parametrize("path, words", [("/dev/zero", "not a regular file"),
                                         ("/nonexistent/x.jsonl", "No such file"),
                                         ("/", "Is a directory")])
def test_what_is_not_a_log_file_is_refused_at_once(path: str, words: str) -> None:
    with pytest.raises(SensorLogError, match=f"cannot read {path}: {words}"):
        load_sensor_log(path)


# hypothesis: any bytes, any JSON

FUZZ = settings(max_examples=300, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
INTERESTING = [None, True, False, [], {}, "", "e2", "E2", "i9", "white", "black", "red", "q",
               "k", "5400+30", "9" * 400, "?", "*0", -1, 0, 0.5, 2**32, 10**400, 1e308,
               ["e2", "e4"], ["z9"], [[]], {"White": "A"}, {"_x": "1"}, {"Annotator": "a\rb"},
               {"Variant": "foo"}, {"Date": "x"}, {"FEN": "x"}, {"White": 7},
               "8/8/8/8/8/8/8/8 w - - 0 1", "8/5P1k/8/8/8/8/6KP/8 w - - 0 1"]
values = st.sampled_from(INTERESTING) | st.integers() | st.floats() | st.text(max_size=8)
EVS = ["start", "lift", "place", "clock", "promote", "resign", "draw-offer", "draw-accept",
       "claim", "snapshot", "jump", 3]
KEYS = ["t", "sq", "side", "piece", "occupied", "white", "black", "fen", "tags",
        "time_control"]
objects = st.tuples(st.sampled_from(EVS), st.dictionaries(st.sampled_from(KEYS), values,
                                                          max_size=5)).map(
    lambda pair: {**pair[1], "ev": pair[0]})


def _check_reading(lines: list[str]) -> None:
    last = 0.0
    for number_, item in iter_sensor_log(lines):
        if isinstance(item, SensorLogError):
            assert item.line == number_ and str(item).startswith(f"line {number_}: ")
            assert str(item).isprintable()  # one line, no control character
        elif isinstance(item, StartInfo):
            assert number_ == 1 or all(not line.strip() for line in lines[:number_ - 1])
        else:
            assert 0 <= item.t <= MAX_T and item.t >= last
            last = item.t
            if isinstance(item, ev.ClockPressed) and item.times is not None:
                assert all(0 <= x < math.inf for x in item.times)


@FUZZ
@given(st.binary(max_size=600))
def test_any_bytes_read_as_events_or_line_errors(data: bytes) -> None:
    """Whatever a file holds, reading it ends in events and numbered line errors:
    never an exception (a start line that cannot be played is the one fatal error)."""
    try:
        log = read_sensor_log(io.StringIO(data.decode("utf-8-sig", errors="replace")))
    except BadStartError as exc:
        assert exc.line is not None
        return
    assert all(error.line is not None for error in log.errors)
    _check_reading(data.decode("utf-8-sig", errors="replace").splitlines(keepends=True))


@settings(FUZZ, max_examples=100)
@given(st.lists(objects, min_size=1, max_size=6))
def test_any_json_read_as_events_or_line_errors(objs: list[dict[str, object]]) -> None:
    import json

    lines = [json.dumps(obj) + "\n" for obj in objs]
    try:
        read_sensor_log(lines)
    except BadStartError as exc:
        assert exc.line == 1 and objs[0]["ev"] == "start"
        return
    _check_reading(lines)
