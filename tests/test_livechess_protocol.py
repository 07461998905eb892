"""The LiveChess messages and addresses, pure: requests in, responses and errors out."""

from __future__ import annotations

import json

import chess
import pytest
from hypothesis import given
from hypothesis import strategies as st

from board_ctl.errors import ConfigError
from board_ctl.livechess.address import Listen, parse_listen
from board_ctl.livechess.eboard import default_serialnr, eboard_json, feed_json, report_from
from board_ctl.livechess.protocol import (
    RequestError,
    call_response,
    error_response,
    feed_response,
    parse_request,
)
from board_ctl.service.view import ViewState

json_ids = st.one_of(st.none(), st.integers(-2**53, 2**53), st.text(max_size=10),
                     st.floats(allow_nan=False, allow_infinity=False))


@given(json_ids, st.sampled_from(["eboards", "subscribe", "call", "x"]),
       st.one_of(st.none(), st.dictionaries(st.text(max_size=5), st.integers())))
def test_a_request_keeps_its_id_exactly(request_id: object, call: str, param: object) -> None:
    text = json.dumps({"id": request_id, "call": call, "param": param})
    request = parse_request(text)
    assert (request.id, request.call, request.param) == (request_id, call, param)
    for reply in (call_response(request.id, None, 5), error_response(request.id, "no", 5),
                  feed_response(request.id, {}, 5)):
        echoed = json.loads(reply)["id"]
        assert echoed == request_id and type(echoed) is type(request_id)


@given(st.text(max_size=40) | st.binary(max_size=20))
def test_any_garbage_is_a_one_line_request_error_or_a_request(text: str | bytes) -> None:
    try:
        parse_request(text)
    except RequestError as exc:
        assert str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize("text,message", [
    ("{", "not valid JSON"),
    ('"eboards"', "must be a JSON object"),
    ('{"id": 3}', 'needs a "call"'),
    ('{"id": 3, "call": ""}', 'needs a "call"'),
    ('{"id": 3, "call": 4}', 'needs a "call"'),
    pytest.param("[" * 100_000, "nested too deep", id="nested-100000-deep"),
])
def test_bad_requests_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(RequestError) as raised:
        parse_request(text)
    assert message in str(raised.value)


def test_responses_have_the_livechess_shape() -> None:
    assert json.loads(call_response(1, None, 1503849460753)) == {
        "response": "call", "id": 1, "param": None, "time": 1503849460753}
    assert json.loads(error_response("a", "bad", 7)) == {
        "response": "error", "id": "a", "param": {"message": "bad"}, "time": 7}


@pytest.mark.parametrize("text,expected", [
    ("127.0.0.1:1982", Listen("127.0.0.1", 1982)),
    ("1982", Listen("127.0.0.1", 1982)),
    (":2000", Listen("127.0.0.1", 2000)),
    ("0.0.0.0", Listen("0.0.0.0", 1982)),
    ("localhost:0", Listen("localhost", 0)),
    ("[::1]:1983", Listen("::1", 1983)),
    ("[::1]", Listen("::1", 1982)),
])
def test_listen_addresses(text: str, expected: Listen) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["host:port", "1.2.3.4:70000", "::1:1982", "[::1]x",
                                  "[::1", "a b:1"])
def test_bad_listen_addresses_name_the_key(text: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_listen(text)
    assert str(raised.value).startswith("livechess.listen") and "\n" not in str(raised.value)


def test_the_url_brackets_ipv6() -> None:
    assert Listen("::1", 1982).url() == "ws://[::1]:1982/api/v1.0"
    assert Listen("127.0.0.1", 0).url(4321) == "ws://127.0.0.1:4321/api/v1.0"


def test_serial_numbers_are_stable_ten_digits_and_never_zero() -> None:
    numbers = {default_serialnr(f"pi-{i}:/dev/chessboard") for i in range(200)}
    assert len(numbers) == 200
    assert all(len(n) == 10 and n.isdigit() and n != "0" for n in numbers)
    assert default_serialnr("x") == default_serialnr("x")


def test_a_report_is_the_games_position_never_the_sensors() -> None:
    board = chess.Board()
    board.push_san("e4")
    lifted = board.occupied & ~chess.BB_G8  # Black's knight in the air
    state = ViewState("playing", 1, board.fen(), chess.STARTING_FEN, lifted, None,
                      moves=("e4",), board="/dev/chessboard", clocks=(290.4, 300.0),
                      running=chess.BLACK)
    report = report_from(state, 1234)
    eboard = eboard_json(report, "42", False)
    assert eboard["board"] == board.board_fen() and eboard["state"] == "ACTIVE"
    assert eboard["clock"] == {"white": 290, "black": 300, "run": False, "time": 1234}
    feed = feed_json(report, "42", True)
    assert feed["san"] == ["e4"] and feed["match"] is False and feed["flipped"] is True
    lost = report_from(ViewState("setup", 0, chess.STARTING_FEN, chess.STARTING_FEN, 0, None,
                                 link="lost, reconnecting"), 0)
    assert eboard_json(lost, "42", False)["state"] == "NOTRESPONDING"
