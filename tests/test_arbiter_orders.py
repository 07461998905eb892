"""The arbiter's orders as core events: a result given or corrected, both clocks set
(FIDE 6.10), the game's tags; their sensor-log lines; a replay of the log gives the game
the live referee made."""

from __future__ import annotations

import io
import json

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.effects import GameOver
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.errors import SensorLogError
from board_ctl.record import GameRecord
from board_ctl.replay import new_game, replay_events
from board_ctl.sensorlog import StartInfo, dumps, event_to_json, parse_line, read_sensor_log
from script import events

OPENING = "-e2 +e4 Cw -e7 +e5 Cb -g1 +f3 Cw"
FOOLS_MATE = "-f2 +f3 Cw -e7 +e5 Cb -g2 +g4 Cw -d8 +h4 Cb"


def feed(referee: Referee, record: GameRecord, items: list[ev.Event]) -> None:
    for item in items:
        record.extend(referee.feed(item))


def game(tc: str | None = None) -> tuple[Referee, GameRecord]:
    return new_game(StartInfo(time_control=tc), PROFILES["fide"])


def test_a_result_given_ends_the_game_as_an_adjudication() -> None:
    referee, record = game()
    played = events(OPENING)
    feed(referee, record, played)
    feed(referee, record, [ev.ArbiterResult(played[-1].t + 5, "0-1", "illegal move twice",
                                            by="arbiter Anna")])
    assert referee.result == GameOver(played[-1].t + 5, "0-1", "adjudication")
    pgn = record.pgn_text()
    assert '[Result "0-1"]' in pgn and '[Termination "adjudication"]' in pgn
    assert "result 0-1 given by the arbiter (arbiter Anna): illegal move twice" in pgn
    # nothing the board reports after the decision counts
    feed(referee, record, events("-b8 +c6 Cb", t=played[-1].t + 6))
    assert len(record.moves) == 3


def test_a_result_is_corrected_after_the_game_ended() -> None:
    referee, record = game()
    feed(referee, record, events(FOOLS_MATE))
    assert referee.result is not None and referee.result.result == "0-1"
    t = referee.now + 10
    feed(referee, record, [ev.ArbiterResult(t, "1/2-1/2", "scoresheet", by="chief")])
    assert record.result == GameOver(t, "1/2-1/2", "adjudication")
    assert [line["result"] for line in record.report if line["kind"] == "result"] == \
        ["0-1", "1/2-1/2"]
    assert "result corrected by the arbiter (chief) from 0-1 to 1/2-1/2: scoresheet" in \
        record.pgn_text()
    said = len(record.report)
    feed(referee, record, [ev.ArbiterResult(t + 1, "1/2-1/2", "scoresheet", by="chief")])
    assert len(record.report) == said  # the same decision again changes nothing


def test_clocks_set_by_the_arbiter_decide_the_flag() -> None:
    referee, record = game("300+0")
    played = events(OPENING)  # Black to move
    feed(referee, record, played)
    t = played[-1].t + 1
    feed(referee, record, [ev.ClocksSet(t, 250.0, 7.5, by="arbiter")])
    assert referee.clock.remaining(chess.BLACK, t) == pytest.approx(7.5)
    assert referee.clock.remaining(chess.WHITE, t) == pytest.approx(250.0)
    feed(referee, record, [ev.Tick(t + 7.4)])
    assert referee.result is None
    feed(referee, record, [ev.Tick(t + 7.6)])
    assert referee.result is not None and referee.result.termination == "time-forfeit"
    assert referee.result.t == pytest.approx(t + 7.5)
    assert "clocks set by the arbiter (arbiter): White 0:04:10, Black 0:00:07.5 (FIDE 6.10)" \
        in record.pgn_text()


def test_clocks_set_in_an_untimed_game_start_counting() -> None:
    referee, record = game()
    feed(referee, record, events(OPENING))
    t = referee.now + 1
    feed(referee, record, [ev.ClocksSet(t, 60.0, 30.0)])
    feed(referee, record, events("-b8 +c6 Cb", t=t))
    assert referee.clock.remaining(chess.WHITE, referee.now) == pytest.approx(60.0)
    assert record.moves[-1].clock is not None and record.moves[-1].clock < 30.0


def test_tags_set_and_removed() -> None:
    referee, record = game()
    feed(referee, record, [ev.TagsSet(0.5, (("White", "Anna Smith"), ("WhiteFideId", "1503014")),
                                      by="station")])
    feed(referee, record, events(OPENING))
    feed(referee, record, [ev.TagsSet(referee.now, (("WhiteFideId", ""), ("Round", "3")))])
    pgn = record.pgn_text()
    assert '[White "Anna Smith"]' in pgn and '[Round "3"]' in pgn
    assert "WhiteFideId" not in pgn


ORDERS = [
    ev.ArbiterResult(3.5, "1-0", "flag seen by the arbiter", "A. Arbiter", "c-17"),
    ev.ArbiterResult(4.0, "1/2-1/2"),
    ev.ClocksSet(5.25, 300.0, 287.5, "arbiter", "x"),
    ev.TagsSet(1.0, (("Black", "Ben Jones"), ("White", "Anna Smith")), "station", "p-1"),
]


@pytest.mark.parametrize("order", ORDERS)
def test_orders_round_trip_through_the_sensor_log(order: ev.Event) -> None:
    line = dumps(event_to_json(order))
    assert parse_line(line, 1) == order


@pytest.mark.parametrize("line, says", [
    ('{"t": 1, "ev": "arbiter-result", "result": "2-0"}', "'result' must be one of"),
    ('{"t": 1, "ev": "arbiter-result", "result": "1-0", "by": 7}', "'by' must be a string"),
    ('{"t": 1, "ev": "set-clocks", "white": -1, "black": 3}', "'white' must be the seconds"),
    ('{"t": 1, "ev": "set-clocks", "white": 10}', "'black' must be the seconds"),
    ('{"t": 1, "ev": "set-clocks", "white": 10, "black": 1e308}', "'black' must be the sec"),
    ('{"t": 1, "ev": "tags", "tags": {"Result": "1-0"}}', "set by the game record itself"),
    ('{"t": 1, "ev": "tags", "tags": {"White": "A\\rB"}}', "non-printing character"),
    ('{"t": 1, "ev": "tags", "tags": ["White"]}', "'tags' must be an object"),
])
def test_bad_order_lines_say_why(line: str, says: str) -> None:
    with pytest.raises(SensorLogError, match="line 3: .*" + says.replace("(", r"\(")):
        parse_line(line, 3)


def test_a_log_with_orders_replays_to_the_live_game() -> None:
    """What the live referee made of events and orders, the log of them replays exactly."""
    played = events(OPENING + " -b8 +c6 Cb")
    t = played[-1].t
    items: list[ev.Event] = [ev.TagsSet(0.2, (("White", "Anna"),), "station")]
    items += played[:6] + [ev.ClocksSet(played[5].t + 0.5, 100.0, 90.0, "arb")] + played[6:]
    items += [ev.ArbiterResult(t + 3, "1-0", "", "arb"), ev.ArbiterResult(t + 9, "0-1", "fix")]
    items.sort(key=lambda e: e.t)
    live_referee, live = game("300+2")
    feed(live_referee, live, items)
    live.extend(live_referee.finish(items[-1].t))
    text = dumps({"t": 0.0, "ev": "start", "fen": chess.STARTING_FEN, "time_control": "300+2"})
    text += "\n" + "\n".join(dumps(event_to_json(e)) for e in items) + "\n"
    log = read_sensor_log(io.StringIO(text))
    assert not log.errors
    replayed = replay_events(log.start, log.events, PROFILES["fide"])
    assert replayed.pgn_text() == live.pgn_text()
    assert replayed.report == live.report
    assert json.dumps(replayed.report).count('"kind": "result"') == 2


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["1-0", "0-1", "1/2-1/2"]), st.floats(0, 1e5), st.floats(0, 1e5),
       st.dictionaries(st.sampled_from(["White", "Black", "Event", "Round", "WhiteFideId"]),
                       # any tag board_ctl/pgntags.py accepts: printing characters, quotes
                       # and backslashes included (the record escapes them)
                       st.text(st.characters(codec="utf-8").filter(str.isprintable),
                               max_size=30), max_size=4))
def test_any_order_round_trips(result: str, white: float, black: float,
                               tags: dict[str, str]) -> None:
    for order in (ev.ArbiterResult(1.0, result, "why", "by"), ev.ClocksSet(2.0, white, black),
                  ev.TagsSet(3.0, tuple(sorted(tags.items())), "s", "r")):
        assert parse_line(dumps(event_to_json(order)), 1) == order


def test_the_start_line_keeps_its_tag_rules() -> None:
    log = read_sensor_log(io.StringIO(dumps(
        {"t": 0, "ev": "start", "tags": {"White": 'A "B"', "Result": "1-0", "Black": "x\ry"}})
        + "\n"))
    assert log.start.tags == {"White": 'A "B"'}  # a quote is written escaped
    assert len(log.errors) == 2 and all("left out" in str(e) for e in log.errors)
    assert StartInfo().tags == {}


def test_a_result_confirmed_keeps_how_the_game_ended() -> None:
    referee, record = game()
    feed(referee, record, events(FOOLS_MATE))
    said = len(record.report)
    feed(referee, record, [ev.ArbiterResult(referee.now + 5, "0-1", "confirmed", by="chief")])
    assert referee.result is not None and referee.result.termination == "checkmate"
    assert len(record.report) == said
