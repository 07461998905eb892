"""The hall's board side, piece by piece: settings, commands checked, the journal read
as it grows, what the broker acknowledged, the payloads of docs/mqtt.md."""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core.effects import (
    Alert,
    AlertCleared,
    GameOver,
    MoveMade,
    Note,
    Penalty,
    TagsChanged,
)
from board_ctl.errors import ConfigError
from board_ctl.hall.commands import CommandError, parse
from board_ctl.hall.gamefeed import GameModel, JournalTail, effect_of
from board_ctl.hall.payloads import Live, move_payload, state_payload
from board_ctl.hall.progress import AckWindow, Place, ProgressFile
from board_ctl.hall.settings import resolve
from board_ctl.journal import JournalWriter, encode_record
from board_ctl.record import report_object
from board_ctl.replay import replay_log
from board_ctl.core.profiles import PROFILES
from board_ctl.sensorlog import StartInfo, read_sensor_log
from servicekit import render


# ---------------------------------------------------------------- settings


def test_settings_from_a_url(tmp_path: Path) -> None:
    s = resolve("mqtt://hall.local", "b07")
    assert (s.host, s.port, s.username, s.password, s.tls) == ("hall.local", 1883, "b07", None,
                                                               False)
    assert s.topic("move") == "board-ctl/b07/move" and s.client_id == "b07"  # its user
    secret = tmp_path / "pw"
    secret.write_text("s3cret\nignored\n")
    s = resolve("mqtts://hall:8884", "b07", username="board7", password_file=str(secret),
                topic_prefix="club/boards")
    assert (s.port, s.username, s.password, s.tls) == (8884, "board7", "s3cret", True)
    assert s.client_id == "board7"  # (what use_username_as_clientid makes it anyway)
    assert s.topic("cmd/#") == "club/boards/b07/cmd/#" and "s3cret" not in repr(s)
    s = resolve("mqtt://u%40x:p%3Aw@10.0.0.1:1999", "b1")
    assert (s.username, s.password, s.port) == ("u@x", "p:w", 1999)


@pytest.mark.parametrize("url, board, extra, says", [
    ("tcp://hall", "b1", {}, "mqtt.url must be"),
    ("mqtt://", "b1", {}, "mqtt.url must be"),
    ("mqtt://hall/x", "b1", {}, "no path"),
    ("mqtt://hall:99999", "b1", {}, "bad port"),
    ("mqtt://hall", "", {}, "mqtt.board_id"),
    ("mqtt://hall", "b 1", {}, "mqtt.board_id"),
    ("mqtt://hall", "b1", {"topic_prefix": "a/#"}, "mqtt.topic_prefix"),
    ("mqtt://hall", "b1", {"topic_prefix": "/a"}, "mqtt.topic_prefix"),
    ("mqtt://hall", "b1", {"password_file": "/nonexistent/pw"}, "mqtt.password_file"),
    ("mqtt://u:p@hall", "b1", {"password_file": "/etc/hostname"}, "given twice"),
    ("mqtt://hall", "b1", {"ca_file": "/etc/hostname"}, "mqtts://"),
])
def test_bad_settings_name_the_key(url: str, board: str, extra: dict[str, str],
                                   says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("/", ".")):
        resolve(url, board, **extra)


# ---------------------------------------------------------------- commands


def test_commands_are_checked() -> None:
    order = parse("players", json.dumps({
        "id": 5, "by": "Anna", "white": {"name": "A B", "fide_id": 1503014},
        "black": {"name": "C", "fide_id": None}, "round": "3", "board_no": 7}).encode())
    assert order.key == "5" and order.by == "Anna"
    assert order.fields["tags"] == {"White": "A B", "WhiteFideId": "1503014", "Black": "C",
                                    "BlackFideId": "", "Round": "3", "Board": "7"}
    assert parse("new-game", b'{"id": "n", "by": "x", "fen": null}').fields == {"fen": None}
    assert parse("clock", b'{"id": "c", "by": "x", "white": 60, "black": 0.5}').fields == \
        {"white": 60.0, "black": 0.5}


@pytest.mark.parametrize("verb, payload, says", [
    ("result", b"\xff", "not JSON"),
    ("result", b"[1]", "a JSON object"),
    ("result", b'{"by": "x", "result": "1-0"}', "'id' must be"),
    ("result", b'{"id": true, "by": "x"}', "'id' must be"),
    ("result", b'{"id": 1, "result": "1-0"}', "'by' must be"),
    ("result", b'{"id": 1, "by": "x", "result": "2-0"}', "'result' must be one of"),
    ("result", b'{"id": 1, "by": "x", "result": "1-0", "reason": "a}"}', "without quotes"),
    ("clock", b'{"id": 1, "by": "x", "white": -1, "black": 2}', "'white' must be"),
    ("clock", b'{"id": 1, "by": "x", "white": 1, "black": "2"}', "'black' must be"),
    ("players", b'{"id": 1, "by": "x"}', "nothing to set"),
    ("players", b'{"id": 1, "by": "x", "white": "Anna"}', "'white' must be an object"),
    ("players", b'{"id": 1, "by": "x", "white": {"fide_id": "12a"}}', "digits or null"),
    ("players", b'{"id": 1, "by": "x", "board_no": 0}', "positive integer"),
    ("new-game", b'{"id": 1, "by": "x", "fen": "8/8/8/8/8/8/8/8 w - - 0 1"}', "legal"),
    ("new-game", b'{"id": 1, "by": "x", "fen": "no"}', "not a FEN"),
    ("resign", b'{"id": 1, "by": "x"}', "unknown command"),
    ("ack", b'{"id": 1, "by": "x", "game": 3, "code": "flag"}', "'game' must be"),
])
def test_bad_commands_say_why(verb: str, payload: bytes, says: str) -> None:
    with pytest.raises(CommandError, match=says):
        parse(verb, payload)


def test_a_bad_command_keeps_its_id_for_the_reply() -> None:
    with pytest.raises(CommandError) as info:
        parse("result", b'{"id": "r9", "by": "x", "result": "3-0"}')
    assert info.value.command_id == "r9" and str(info.value).startswith("'result' must")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) |
    st.text(max_size=30) | st.sampled_from([10 ** 4000, -(10 ** 400), "1-0", "arbiter"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3), max_leaves=10)
FIELDS = ["id", "by", "game", "result", "reason", "code", "white", "black", "fen", "event",
          "site", "round", "board_no"]


def _dumps(data: object) -> bytes:
    try:
        return json.dumps(data).encode()
    except ValueError:  # (json will not write an integer of 4,000 digits; a board may get one)
        return b'{"id": 1, "by": "x", "game": ' + b"9" * 4000 + b"}"


@settings(max_examples=150, deadline=None)
@given(verb=st.sampled_from(["ack", "result", "players", "new-game", "clock", "x"]),
       payload=st.one_of(
           st.binary(max_size=100),
           st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=6).map(_dumps),
           st.integers(1, 300_000).map(lambda depth: b"[" * depth + b"]" * depth),
           st.integers(1, 30_000).map(lambda n: b'{"id": 1, "by": "' + b"a" * n + b'"}')))
def test_any_payload_is_an_order_or_a_command_error(verb: str, payload: bytes) -> None:
    """Issue 17 §1.1: `parse` caught decode errors only; a 5,000-digit integer (ValueError)
    or nesting 200,000 deep (RecursionError) went up through paho and killed the board's
    link. Whatever the payload: an Order, or a CommandError with a short reason."""
    try:
        order = parse(verb, payload)
    except CommandError as exc:
        assert 0 < len(str(exc)) < 400
        assert exc.command_id is None or isinstance(exc.command_id, (str, int))
    else:
        assert order.verb == verb and len(order.key) <= 64


@pytest.mark.parametrize("payload", [
    b'{"id": 1, "by": "x", "result": "1-0", "game": ' + b"9" * 5000 + b"}",
    b"[" * 200_000 + b"]" * 200_000,
    b'{"id": 1, "by": "x", "white": 1' + b"0" * 400 + b', "black": 1}',
    b'{"id": 1, "by": "x", "white": {"fide_id": 1' + b"0" * 400 + b"}}",
    b'{"id": ' + b"7" * 70 + b', "by": "x"}',
    b"\xff\xfe",
])
def test_the_commands_that_killed_the_link(payload: bytes) -> None:
    for verb in ("result", "clock", "players"):
        with pytest.raises(CommandError):
            parse(verb, payload)


# ---------------------------------------------------------------- the journal, read as it grows


def test_a_journal_is_read_as_it_grows_whole_lines_only(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    JournalWriter.create(path, StartInfo()).close()
    tail = JournalTail(path)
    assert [n for n, _ in tail.read()] == [1]
    line = encode_record({"t": 1.0, "kind": "note", "text": "x"})
    with path.open("a") as stream:
        stream.write(line[:10])  # a line being written
        stream.flush()
        assert tail.read() == []
        stream.write(line[10:] + encode_record({"t": 2.0, "kind": "end"}))
    assert [(n, r["kind"]) for n, r in tail.read()] == [(2, "note"), (3, "end")]
    assert tail.read() == []
    tail.close()


def test_a_game_model_from_its_journal_is_the_board_record() -> None:
    """The PGN the publisher builds from the journal's report lines is the service's."""
    game = render("classics.pgn", 2, seed=4)
    record = replay_log(read_sensor_log(io.StringIO(game.jsonl())), PROFILES["fide"])
    model = GameModel("20261130-191502")
    model.take({"ev": "start", "fen": chess.STARTING_FEN})
    for line in record.report:
        if line["kind"] != "leds":
            model.take(json.loads(json.dumps(line)))
    assert model.pgn() == record.pgn_text(model.started())
    assert model.board.move_stack == [m.move for m in record.moves] and record.moves


EFFECTS = [
    MoveMade(1.25, 3, chess.Move.from_uci("e7e8n"), "e8=N+", 287.5, 3.0),
    MoveMade(2.0, 4, chess.Move.from_uci("e2e4"), "e4"),
    Alert(3.0, "touch-move", chess.WHITE, (chess.G1, chess.E2), "touched"),
    Alert(3.5, "clock-fault", None, (), "times"),
    AlertCleared(4.0, "touch-move"),
    GameOver(5.0, "1/2-1/2", "adjudication"),
    Penalty(6.0, chess.BLACK, 120, "illegal move by white"),
    Note(7.0, "clocks set"),
    TagsChanged(8.0, (("Black", "B"), ("White", "A"))),
]


@pytest.mark.parametrize("effect", EFFECTS)
def test_every_report_line_gives_its_effect_back(effect: object) -> None:
    line = report_object(effect)  # type: ignore[arg-type]
    assert line is not None
    assert effect_of(json.loads(json.dumps(line))) == effect


# ---------------------------------------------------------------- what the broker acknowledged


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_the_done_place_is_where_every_line_before_is_acknowledged(
        carries: list[bool], rng: object) -> None:
    window = AckWindow(None)
    mids = {}
    for line, carries_message in enumerate(carries, start=1):
        mid = 100 + line if carries_message else None
        window.add(Place("g", line), mid)
        if mid is not None:
            mids[line] = mid
    order = list(mids.items())
    rng.shuffle(order)  # type: ignore[attr-defined]
    acked: set[int] = set()
    for line, mid in order:
        window.ack(mid)
        acked.add(line)
        expected = 0
        while expected < len(carries) and (expected + 1 not in mids or expected + 1 in acked):
            expected += 1
        assert (window.done.line if window.done else 0) == expected
    assert window.waiting == 0
    assert window.ack(99999) is False  # not a journal line's message


def test_progress_survives_and_a_broken_file_means_from_the_start(tmp_path: Path) -> None:
    progress = ProgressFile(tmp_path / "hall" / "progress.json")
    assert progress.load() is None
    progress.save(Place("20261130-191502", 42))
    assert ProgressFile(progress.path).load() == Place("20261130-191502", 42)
    progress.path.write_text("{torn")
    assert progress.load() is None


# ---------------------------------------------------------------- payloads


def test_the_state_follows_the_contract() -> None:
    model = GameModel("20261130-191502")
    model.take({"ev": "start", "fen": chess.STARTING_FEN,
                "tags": {"White": "Anna", "WhiteFideId": "1503014", "Board": "7"}})
    move = MoveMade(2.4, 1, chess.Move.from_uci("e2e4"), "e4", 5398.0, 2.4)
    model.take(report_object(move))  # type: ignore[arg-type]
    model.take(report_object(Alert(3.0, "touch-move", chess.BLACK, (chess.G8,), "g8")))  # type: ignore[arg-type]
    model.take({"t": 3.5, "kind": "ack", "code": "touch-move", "by": "arb"})
    live = Live(model.game_id, "playing", "lost, reconnecting", 14.6, (5398.0, 5391.5),
                model.board.fen())
    state = state_payload("b07", model, live, 1796065200123)
    assert state["white"] == {"name": "Anna", "fide_id": "1503014"}
    assert state["black"] == {"name": None, "fide_id": None} and state["board_no"] == 7
    assert state["clock"] == {"white": 5398.0, "black": 5391.5, "running": "black", "t": 14.6}
    assert state["last_move"] == {"ply": 1, "san": "e4", "uci": "e2e4"}
    assert state["alerts"][0]["acknowledged_by"] == "arb" and state["link"] == "lost"
    assert (state["turn"], state["ply"], state["phase"], state["result"]) == \
        ("black", 1, "playing", "*")
    setup = state_payload("b07", None, Live(None, "setup", "connected", 0.0, (None, None),
                                            chess.STARTING_FEN, (("Round", "2"),)), 1)
    assert (setup["game"], setup["phase"], setup["round"], setup["clock"]) == \
        (None, "setup", "2", None)
    payload = move_payload("b07", model, 5, move, 17)
    assert set(payload) == {"v", "board", "game", "time", "seq", "ply", "san", "uci", "fen",
                            "clock", "elapsed", "t"}
