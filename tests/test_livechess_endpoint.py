"""The LiveChess endpoint on the real service loop, over real sockets.

The service runs on a fake board stepped by the test (the test thread is its loop
thread, as in test_service_loop); the endpoint serves from its own thread on a free
port; clients are `websockets` clients. Games are real games rendered by the simulator.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest
from websockets.exceptions import InvalidStatus

from board_ctl.core import events as ev
from board_ctl.core.effects import Colour
from board_ctl.errors import HardwareError
from board_ctl.livechess.address import Listen
from board_ctl.livechess.endpoint import LiveChessEndpoint
from board_ctl.sensorlog import StartInfo
from board_ctl.service.messages import LinkDown, LinkUp
from board_ctl.simulate import RenderStyle, render_game
from livechesskit import (
    QUICK,
    SERIAL,
    START,
    LichessDgtClient,
    Rig,
    check_feeds,
    game_windows,
    log_events,
    open_ws,
    rearrange,
)
from servicekit import excerpt, wait_until

@pytest.fixture
def rig(tmp_path: Path) -> Iterable[Rig]:
    made = Rig(tmp_path)
    yield made
    made.close()


def request(ws: Any, message: object, timeout: float = 5.0) -> dict[str, Any]:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=timeout))


def pgn_sans(path: Path) -> tuple[str, list[str]]:
    game = chess.pgn.read_game(io.StringIO(path.read_text(encoding="utf-8")))
    assert game is not None
    board = game.board()
    sans = []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    return game.headers.get("FEN", chess.STARTING_FEN), sans


# ---------------------------------------------------------------- what lichess.org/dgt does


@pytest.mark.parametrize("which,seed", [(0, 1), (0, 2), (1, 3), (2, 4)])
def test_lichess_reloaded_mid_game_gets_every_move_after_its_setup(
        tmp_path: Path, which: int, seed: int) -> None:
    """The page (re)connects while a game is on the board: eboards (id 1), subscribe
    (id 2), the board matches its game, setup with the mid-game FEN (id 3); then both
    sides' moves (castling, en passant, promotion, a quick capture and recapture) arrive
    as one cumulative san, each parsed by the page's own logic."""
    window = game_windows()[which]
    # two plies more than the window: what the window's last moves need to be settled
    # (an ambiguous capture waits for the reply) is on the board, as in a real game
    rendered = render_game(excerpt(window.game, 0, window.end + 2), seed=seed, style=QUICK)
    hold = rendered.plies[window.start].first_line  # the mid-game position stands here
    before, after = rendered.lines[hold - 1]["t"], rendered.lines[hold]["t"]
    events = log_events(rendered.jsonl(), shift=1.0)
    cut = (before + after) / 2 + 1.0
    rig = Rig(tmp_path)
    stack = contextlib.ExitStack()
    try:
        rig.feed([ev.Snapshot(0.5, START)] + [e for e in events if e.t <= cut])
        ws = stack.enter_context(open_ws(rig.url))
        client = LichessDgtClient(ws)
        client.pump(lambda: client.last_board is not None, what="the board's first feed")
        assert client.problems == [] and client.boards is not None
        assert client.boards[0]["serialnr"] == SERIAL and client.boards[0]["state"] == "ACTIVE"
        # the page attaches a game only when the board shows its position
        assert client.last_board == window.board_at(window.start).board_fen()
        client.setup(window.fen)
        rig.take_command()
        client.pump(lambda: any(f["start"] == window.fen for f in client.feeds),
                    what="the feed of the new start")
        assert client.feeds[-1]["san"] == [] and client.feeds[-1]["match"] is True
        rig.feed(e for e in events if e.t > cut)
        expected = window.sans()
        client.pump(lambda: client.applied[:len(expected)] == expected, what="every move")
        assert client.problems == []
        check_feeds(client.feeds)
    finally:
        rig.close()
        stack.close()
    fen, sans = pgn_sans(rig.service.games[-1].pgn)
    assert (fen, sans[:len(expected)]) == (window.fen, expected)


@pytest.mark.parametrize("seed", [5, 6])
def test_setup_guides_the_pieces_then_the_game_plays_from_the_fen(tmp_path: Path,
                                                                  seed: int) -> None:
    """A setup on a board in the starting position: the LEDs ask for the new position,
    the pieces are put there, and the game (here without a clock: a move is complete
    when the reply begins) arrives move by move from the FEN."""
    window = game_windows()[0]
    style = RenderStyle(**{**QUICK.__dict__, "use_clock": False})
    rendered = render_game(excerpt(window.game, window.start, window.end), seed=seed,
                           style=style)
    target = chess.Board(window.fen).occupied
    rig = Rig(tmp_path)
    stack = contextlib.ExitStack()
    try:
        rig.feed([ev.Snapshot(0.5, START)] + [ev.Placed(1.0, chess.E2)])  # a stray event
        client = LichessDgtClient(stack.enter_context(open_ws(rig.url)))
        client.pump(lambda: client.last_board is not None)
        client.setup(window.fen)
        rig.take_command()
        lights = {s.square: s.colour for s in rig.board.frames[-1].squares}
        assert {sq for sq, c in lights.items() if c == Colour.GREEN} == set(
            chess.scan_forward(target & ~START))
        assert {sq for sq, c in lights.items() if c == Colour.RED} == set(
            chess.scan_forward(START & ~target))
        client.pump(lambda: bool(client.feeds) and client.feeds[-1]["start"] == window.fen)
        assert client.feeds[-1]["match"] is False  # the pieces are not there yet
        moves = rearrange(START, target, 2.0)
        rig.feed(moves)
        client.pump(lambda: client.feeds[-1]["match"] is True, what="the game's start")
        rig.feed(log_events(rendered.jsonl(), shift=moves[-1].t + 1.0))
        rig.service.close()  # the log ends: the last move, unanswered, is complete
        client.pump(lambda: client.applied == window.sans(), what="every move")
        assert client.problems == []
        check_feeds(client.feeds)
    finally:
        rig.close()
        stack.close()


# ---------------------------------------------------------------- the protocol's edges


def test_ids_come_back_with_their_json_type(rig: Rig) -> None:
    with open_ws(rig.url, None) as ws:
        for sent in (1, 7, "1", "abc", 2.5, None):
            reply = request(ws, {"id": sent, "call": "eboards"})
            assert reply["id"] == sent and type(reply["id"]) is type(sent)
            assert reply["response"] == "call" and isinstance(reply["time"], int)
        reply = request(ws, {"call": "eboards"})
        assert reply["id"] is None and reply["param"][0]["serialnr"] == SERIAL


def not_json(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON: a browser's JSON.parse throws on it")


def test_bad_requests_get_an_error_and_the_connection_stays_usable(rig: Rig) -> None:
    cases: list[tuple[str, Any]] = [
        ("not json at all", None),
        ('{"id": 4, "call": "eboards"', None),  # cut short
        ("[1, 2, 3]", None),
        ('{"id": 5}', 5),
        ('{"id": 6, "call": "frobnicate"}', 6),
        ('{"id": 7, "call": "subscribe", "param": {"feed": "clocks", "id": 1}}', 7),
        ('{"id": 8, "call": "subscribe", "param": {"feed": "eboardevent", "id": 1, '
         '"param": {"serialnr": "999"}}}', 8),
        ('{"id": 14, "call": "subscribe", "param": {"feed": "eboardevent", "param": 5}}', 14),
        ('{"id": 9, "call": "call", "param": {"id": 1, "method": "explode"}}', 9),
        ('{"id": 10, "call": "call", "param": {"id": 1, "method": "setup", '
         '"param": {"fen": "not a fen"}}}', 10),
        ('{"id": 11, "call": "call", "param": {"id": 1, "method": "setup", '
         '"param": {"fen": "8/8/8/8/8/8/8/8 w - - 0 1"}}}', 11),  # no kings
        ('{"id": 12, "call": "call", "param": {"id": 1, "method": "setup"}}', 12),
        ('{"id": 13, "call": "unsubscribe", "param": {"id": 99}}', 13),
        ('{"id": NaN, "call": "eboards"}', None),  # not JSON: echoed, it made the answer none
        ('{"id": 1e999, "call": "eboards"}', None),  # Infinity, likewise
        ('{"id": 16, "call": "subscribe", "param": {"feed": "eboardevent", "id": -Infinity}}', None),
        ("[" * 100_000, None),  # nested deeper than the JSON parser recurses
        ('{"id": 15, "call": "eboards", "param": ' + "[" * 100_000 + "]" * 100_000 + "}", None),
    ]
    with open_ws(rig.url, None) as ws:
        for text, request_id in cases:
            ws.send(text)
            reply = json.loads(ws.recv(timeout=5), parse_constant=not_json)  # strict JSON
            assert reply["response"] == "error", text
            assert reply["id"] == request_id, text
            message = reply["param"]["message"]
            assert isinstance(message, str) and "\n" not in message and message, text
            ws.send(b"\x00binary")
            assert json.loads(ws.recv(timeout=5))["response"] == "error"
            assert request(ws, '{"id":1,"call":"eboards"}')["response"] == "call"
    assert rig.service.queue.empty()  # no bad setup reached the service
    assert rig.service.start.fen == chess.STARTING_FEN


def test_several_clients_each_get_their_feeds_and_one_leaving_disturbs_nobody(
        rig: Rig) -> None:
    window = game_windows()[0]
    rendered = render_game(excerpt(window.game, 0, 12), seed=11, style=QUICK)
    events = log_events(rendered.jsonl(), shift=1.0)
    rig.feed([ev.Snapshot(0.5, START)])
    stack = contextlib.ExitStack()
    clients = [stack.enter_context(open_ws(rig.url, None)) for _ in range(3)]
    for number, ws in enumerate(clients):
        feed_id = 10 + number
        reply = request(ws, {"id": 2, "call": "subscribe", "param": {
            "feed": "eboardevent", "id": feed_id, "param": {"serialnr": SERIAL}}})
        assert reply == {**reply, "response": "call", "id": 2, "param": None}
        first = json.loads(ws.recv(timeout=5))
        assert first["response"] == "feed" and first["id"] == feed_id
        assert "san" not in first["param"]  # no moves before a client's own setup
    dropped = socket.create_connection(("127.0.0.1", rig.endpoint.port))  # a raw client
    dropped.sendall(b"GET /api/v1.0 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    b"Sec-WebSocket-Version: 13\r\n\r\n")
    assert dropped.recv(4096).startswith(b"HTTP/1.1 101")
    dropped.sendall(b"\x81\x80\x00\x00\x00\x00")  # an empty (masked) text frame...
    half = len(events) // 2
    rig.feed(events[:half])
    json.loads(clients[1].recv(timeout=5))  # client 1 has had a feed of the moves...
    clients[1].close()  # ...and leaves in the middle of the game
    dropped.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    dropped.close()  # ...and the raw one is cut off (a TCP reset)
    rig.feed(events[half:])
    rig.service.close()
    board = window.game.board()
    expected = []
    for move in list(window.game.mainline_moves())[:12]:
        expected.append(board.san(move))
        board.push(move)
    for number in (0, 2):
        feeds = []
        ws = clients[number]
        while not feeds or feeds[-1]["san"] != expected:
            message = json.loads(ws.recv(timeout=5))
            assert message["id"] == 10 + number
            feeds.append(message["param"])
        check_feeds(feeds)
    stack.close()


def test_a_stalled_client_never_blocks_the_service(rig: Rig) -> None:
    """show() only hands the state over: with the endpoint's own thread stuck and a
    client that reads nothing, the loop goes on at once."""
    stalled = socket.create_connection(("127.0.0.1", rig.endpoint.port))
    stalled.sendall(b"GET /api/v1.0 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    b"Sec-WebSocket-Version: 13\r\n\r\n")
    stuck = threading.Event()
    loop = rig.endpoint._loop
    assert loop is not None
    loop.call_soon_threadsafe(stuck.wait, 30)  # the endpoint's thread is busy
    window = game_windows()[0]
    rendered = render_game(excerpt(window.game, 0, 20), seed=12, style=QUICK)
    done = threading.Event()

    def play() -> None:
        rig.feed([ev.Snapshot(0.5, START)] + log_events(rendered.jsonl(), shift=1.0))
        done.set()

    player = threading.Thread(target=play)
    player.start()
    assert done.wait(20), "the service loop waited on the endpoint"
    assert len(rig.service.session.record.moves) >= 19  # type: ignore[union-attr]
    stuck.set()
    player.join()
    stalled.close()


def test_http_eboards_is_the_calls_list_and_other_paths_are_not_found(rig: Rig) -> None:
    rig.feed([ev.Snapshot(0.5, START)])
    base = f"http://127.0.0.1:{rig.endpoint.port}"
    with urllib.request.urlopen(f"{base}/api/v1.0/eboards", timeout=5) as response:
        assert response.headers["Content-Type"] == "application/json"
        listed = json.loads(response.read())
    with open_ws(rig.url, None) as ws:
        assert request(ws, '{"id":1,"call":"eboards"}')["param"] == listed
    assert listed[0] == {"serialnr": SERIAL, "source": "fake board", "state": "ACTIVE",
                         "battery": None, "comment": None,
                         "board": chess.Board().board_fen(), "flipped": False,
                         "clock": None}
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(f"{base}/api/v2/whatever", timeout=5)
    assert raised.value.code == 404
    raised.value.close()


def test_link_down_is_notresponding_and_flip_is_reported(rig: Rig) -> None:
    rig.feed([ev.Snapshot(0.5, START)])
    with open_ws(rig.url, None) as ws:
        request(ws, {"id": 2, "call": "subscribe", "param": {
            "feed": "eboardevent", "id": 1, "param": {"serialnr": SERIAL}}})
        ws.recv(timeout=5)
        rig.feed([LinkDown(1.0, "cable")])
        wait_until(lambda: request(ws, {"id": 1, "call": "eboards"})["param"][0]["state"]
                   == "NOTRESPONDING", what="NOTRESPONDING")
        rig.feed([LinkUp(2.0, "back"), ev.Snapshot(2.0, START)])
        wait_until(lambda: request(ws, {"id": 1, "call": "eboards"})["param"][0]["state"]
                   == "ACTIVE", what="ACTIVE")
        reply = request(ws, {"id": 4, "call": "call", "param": {
            "id": 1, "method": "flip", "param": {"flip": True}}})
        assert reply["response"] == "call" and reply["param"] is None
        feed = json.loads(ws.recv(timeout=5))
        assert feed["response"] == "feed" and feed["param"]["flipped"] is True
        assert feed["param"]["board"] == chess.Board().board_fen()  # White's side always
        assert request(ws, {"id": 5, "call": "eboards"})["param"][0]["flipped"] is True
        request(ws, {"id": 6, "call": "call", "param": {"id": 1, "method": "flip"}})
        assert json.loads(ws.recv(timeout=5))["param"]["flipped"] is False


def test_the_clock_says_whose_time_runs(tmp_path: Path) -> None:
    rig = Rig(tmp_path, start=StartInfo(time_control="300+2"))
    try:
        rig.feed([ev.Snapshot(0.5, START)])
        from script import events

        rig.feed(events("-e2 +e4 Cw", t=1.0))
        with open_ws(rig.url, None) as ws:
            clock = request(ws, {"id": 1, "call": "eboards"})["param"][0]["clock"]
            assert clock["run"] is False  # Black to move
            assert clock["black"] == 300 and 300 <= clock["white"] <= 302
            assert isinstance(clock["time"], int)
            rig.feed(events("-e7 +e5 Cb", t=3.0))
            wait_until(lambda: request(ws, {"id": 1, "call": "eboards"})
                       ["param"][0]["clock"]["run"] is True, what="White's clock")
    finally:
        rig.close()


def test_pages_from_other_sites_are_refused(rig: Rig) -> None:
    with pytest.raises(InvalidStatus) as refused:
        open_ws(rig.url, "https://evil.example")
    assert refused.value.response.status_code == 403
    with open_ws(rig.url) as ws:
        assert request(ws, '{"id":1,"call":"eboards"}')["response"] == "call"


def test_an_address_in_use_is_a_one_line_error(rig: Rig, tmp_path: Path) -> None:
    other = LiveChessEndpoint(Listen("127.0.0.1", rig.endpoint.port), serialnr="1",
                              start=StartInfo())
    with pytest.raises(HardwareError) as raised:
        other.start(lambda item: None)
    assert f"127.0.0.1:{rig.endpoint.port}" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_no_feed_of_the_old_game_reaches_a_client_after_its_setup(rig: Rig) -> None:
    """Moves the board completes between a setup and the service taking it are the old
    game's: the page that asked for the setup counts moves from its FEN, and must not get
    them."""
    from script import events

    rig.feed([ev.Snapshot(0.5, START)] + events("-e2 +e4 Cw", t=1.0))
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    with open_ws(rig.url, None) as ws:
        client = LichessDgtClient(ws)
        client.pump(lambda: client.last_board is not None)
        client.setup(fen)
        client.pump(lambda: any(m["id"] == 3 for m in client.messages), what="its reply")
        wait_until(lambda: not rig.service.queue.empty(), what="the setup")
        for event in events("-e7 +e5 Cb -g1 +f3 Cw", t=3.0):  # before the setup is taken
            rig.service.handle(event)
        assert len(rig.service.session.record.moves) == 3  # type: ignore[union-attr]
        reply = request(ws, {"id": 9, "call": "eboards"})  # a message: feeds may follow
        assert reply["response"] == "call" and reply["id"] == 9
        rig.take_command()
        client.pump(lambda: bool(client.feeds) and client.feeds[-1]["start"] == fen)
        assert [f["san"] for f in client.feeds] == [[]] and client.problems == []


def test_a_subscribe_without_serial_number_or_feed_id_gets_the_boards_feeds(rig: Rig) -> None:
    """Some clients subscribe with only {"feed": "eboardevent"}: this is the only board,
    and their feeds carry the request's own id."""
    from script import events

    rig.feed([ev.Snapshot(0.5, START)])
    with open_ws(rig.url, None) as ws:
        reply = request(ws, {"id": 1, "call": "subscribe", "param": {"feed": "eboardevent"}})
        assert reply["response"] == "call" and reply["param"] is None
        first = json.loads(ws.recv(timeout=5))
        assert first["id"] == 1 and first["param"]["board"] == chess.Board().board_fen()
        rig.feed(events("-e2 +e4 Cw", t=1.0))
        feed = json.loads(ws.recv(timeout=5))
        assert feed["id"] == 1 and feed["param"]["san"] == ["e4"]
