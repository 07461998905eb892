"""LiveChess clients that misbehave: text that is not Unicode (lone surrogates) in
request ids, feed ids and anywhere else; subscriptions by the ten thousand; connections
beyond count, opened and closed again and again. The endpoint runs on the real service
loop (livechesskit.Rig) over real sockets; the clients are `websockets` clients.

What must hold: every bad request gets an error response naming the problem, never an
ERROR traceback in the log, never a connection dropped without a close frame, and
nothing a client sent reaches another client's feed; subscriptions and connections are
capped (documented, [livechess] max_subscriptions and max_connections); a move is encoded
once for every feed; closed connections leave nothing behind that waits for a full
garbage collection, and no per-connection compression state is negotiated."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.exceptions import InvalidStatus

from board_ctl.config import parse_config
from board_ctl.core import events as ev
from board_ctl.errors import ConfigError
from board_ctl.livechess import protocol
from board_ctl.livechess.endpoint import COLLECT_AFTER, MAX_CONNECTIONS, MAX_SUBSCRIPTIONS
from board_ctl.livechess.protocol import RequestError, error_response, feed_response, parse_request
from livechesskit import SERIAL, START, Rig, open_ws
from servicekit import wait_until

# Lone surrogates as JSON spells them: high, low, reversed pair, at the start, in the
# middle, at the end, beside non-ASCII text.
LONE = ["\ud800", "\udfff", "\udc00\ud800", "a\udc00", "\ud83d", "x\udbffy", "é\ud800"]


def request(ws: Any, message: object, timeout: float = 5.0) -> dict[str, Any]:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=timeout))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    made = Rig(tmp_path)
    yield made
    made.close()


@pytest.fixture
def errors_logged(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """The ERROR records logged so far (websockets logs a failed handler's traceback
    so; asyncio a failed callback)."""
    caplog.set_level(logging.INFO)
    return lambda: [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


# ---------------------------------------------------------------- text that is not Unicode


def bad_requests(text: str) -> list[tuple[dict[str, Any], Any]]:
    """Requests carrying `text` in every place a client can put it, with the id the
    error must carry (None where the bad text is in the id itself)."""
    return [
        ({"id": text, "call": "eboards"}, None),
        ({"id": [1, {"k": text}], "call": "eboards"}, None),
        ({"id": 7, "call": text}, 7),
        ({"id": 8, "call": "subscribe", "param": {"feed": "eboardevent", "id": text}}, 8),
        ({"id": 9, "call": "subscribe", "param": {"feed": text, "id": 1}}, 9),
        ({"id": 10, "call": "subscribe", "param": {"feed": "eboardevent", "id": 1,
                                                   "param": {"serialnr": text}}}, 10),
        ({"id": 11, "call": "call", "param": {"id": 1, "method": "setup",
                                              "param": {"fen": text}}}, 11),
        ({"id": 12, "call": "eboards", text: 1}, 12),
        ({"id": 13, "call": "unsubscribe", "param": {"id": text}}, 13),
    ]


def test_text_that_is_not_unicode_is_a_bad_request_on_a_connection_that_stays(
        rig: Rig, errors_logged: Callable[[], list[str]]) -> None:
    rig.feed([ev.Snapshot(0.5, START)])
    with open_ws(rig.url, None) as ws:
        good = request(ws, {"id": 2, "call": "subscribe", "param": {
            "feed": "eboardevent", "id": "mine", "param": {"serialnr": SERIAL}}})
        assert good["response"] == "call"
        assert json.loads(ws.recv(timeout=5))["id"] == "mine"  # its first feed
        for text in LONE:
            for sent, error_id in bad_requests(text):
                reply = request(ws, sent)  # before the fix: the connection dropped here
                assert reply["response"] == "error" and reply["id"] == error_id, sent
                message = reply["param"]["message"]
                assert "not valid Unicode text (a lone surrogate" in message, message
                assert "\n" not in message
            assert request(ws, {"id": 1, "call": "eboards"})["response"] == "call"
        from script import events

        rig.feed(events("-e2 +e4 Cw", t=1.0))
        feed = json.loads(ws.recv(timeout=5))  # only its own feed: no bad id took
        assert feed["response"] == "feed" and feed["id"] == "mine"
        assert feed["param"]["san"] == ["e4"]
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.3)
    assert rig.service.queue.empty() and rig.service.start.fen.startswith("rnbqkbnr")
    assert errors_logged() == []


def test_a_bad_feed_id_never_reaches_the_other_clients(
        rig: Rig, errors_logged: Callable[[], list[str]]) -> None:
    """The one sending bad ids connected first: the feed loop meets its subscriptions
    before the others'."""
    from script import events

    rig.feed([ev.Snapshot(0.5, START)])
    with contextlib.ExitStack() as stack:
        clients = [stack.enter_context(open_ws(rig.url, None)) for _ in range(3)]
        for number, ws in enumerate(clients):
            assert request(ws, {"id": 1, "call": "subscribe", "param": {
                "feed": "eboardevent", "id": number}})["response"] == "call"
            ws.recv(timeout=5)
        for text in LONE:
            reply = request(clients[0], {"id": 2, "call": "subscribe", "param": {
                "feed": "eboardevent", "id": text}})
            assert reply["response"] == "error" and reply["id"] == 2
        rig.feed(events("-e2 +e4 Cw -e7 +e5 Cb", t=1.0))
        for number, ws in enumerate(clients):
            feeds = []
            while not feeds or feeds[-1]["param"]["san"] != ["e4", "e5"]:
                feeds.append(json.loads(ws.recv(timeout=5)))
            assert {f["id"] for f in feeds} == {number}
    assert errors_logged() == []


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                               max_size=3),
    max_leaves=8)


@st.composite
def with_bad_text(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """A request-shaped object with a lone surrogate put somewhere in it, and whether it
    went into the id."""
    data = draw(st.dictionaries(st.sampled_from(["id", "call", "param", "x"]), json_values,
                                min_size=1))
    bad = draw(st.sampled_from(LONE))
    paths: list[list[Any]] = []

    def walk(value: Any, path: list[Any]) -> None:
        paths.append(path)
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, [*path, key])
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, [*path, index])
    walk(data, [])
    path = draw(st.sampled_from(paths))
    as_key = draw(st.booleans())
    if not path:
        data[bad] = 1
        return data, False
    parent: Any = data
    for step in path[:-1]:
        parent = parent[step]
    if as_key and isinstance(parent, dict):
        parent[bad + "k"] = parent.pop(path[-1])
        return data, len(path) > 1 and path[0] == "id"
    parent[path[-1]] = bad
    return data, path[0] == "id"


@settings(max_examples=120, deadline=None)
@given(with_bad_text())
def test_a_lone_surrogate_anywhere_is_a_request_error_every_client_can_read(
        case: tuple[dict[str, Any], bool]) -> None:
    data, in_id = case
    with pytest.raises(RequestError) as raised:
        parse_request(json.dumps(data))  # (json.dumps spells it \udXXX, as a client would)
    assert (raised.value.id is None) if in_id else (raised.value.id == data.get("id"))
    error_response(raised.value.id, str(raised.value), 1).encode("utf-8")  # never raises


@given(st.one_of(st.none(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                 st.text(max_size=8)),
       st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.integers(0, 2**45))
def test_a_feed_encoded_once_is_byte_for_byte_the_message(
        feed_id: Any, param: dict[str, Any], time_ms: int) -> None:
    whole = json.dumps({"response": "feed", "id": feed_id, "param": param, "time": time_ms},
                       separators=(",", ":"), ensure_ascii=False)
    assert feed_response(feed_id, param, time_ms) == whole
    assert protocol.Feed(param, time_ms).to(protocol.encode_id(feed_id)) == whole


# ---------------------------------------------------------------- subscriptions


@pytest.mark.slow  # (30,000 requests answered one by one)
def test_subscriptions_on_one_connection_are_capped(
        rig: Rig, errors_logged: Callable[[], list[str]]) -> None:
    with open_ws(rig.url, None) as ws:
        asked = 30_000
        for n in range(asked):  # all at once, as a flood would
            ws.send(json.dumps({"id": n, "call": "subscribe", "param": {
                "feed": "eboardevent", "id": f"feed-{n}"}}))
        accepted, refused, firsts = [], [], 0
        while len(accepted) + len(refused) < asked or firsts < len(accepted):
            message = json.loads(ws.recv(timeout=30))
            if message["response"] == "call":
                accepted.append(message["id"])
            elif message["response"] == "error":
                refused.append(message)
            else:
                firsts += 1  # the first feed of each subscription
        assert accepted == list(range(MAX_SUBSCRIPTIONS))  # before the fix: all 30,000
        assert refused[0]["param"]["message"] == (
            f"subscribe: this connection has {MAX_SUBSCRIPTIONS} subscriptions, the most one "
            "may have: unsubscribe one first")
        # the same id again is no new subscription; one unsubscribed makes room
        assert request(ws, {"id": "again", "call": "subscribe", "param": {
            "feed": "eboardevent", "id": "feed-0"}})["response"] == "call"
        ws.recv(timeout=5)
        assert request(ws, {"id": "u", "call": "unsubscribe",
                            "param": {"id": "feed-3"}})["response"] == "call"
        assert request(ws, {"id": "new", "call": "subscribe", "param": {
            "feed": "eboardevent", "id": "late"}})["response"] == "call"
    assert errors_logged() == []


def test_a_move_is_encoded_once_for_every_feed(rig: Rig,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from script import events

    rig.feed([ev.Snapshot(0.5, START)])
    with contextlib.ExitStack() as stack:
        clients = [stack.enter_context(open_ws(rig.url, None)) for _ in range(3)]
        for ws in clients:
            for n in range(MAX_SUBSCRIPTIONS):
                request(ws, {"id": n, "call": "subscribe", "param": {
                    "feed": "eboardevent", "id": n}})
                ws.recv(timeout=5)
        encoded: list[object] = []
        dumps = json.dumps

        def counting(value: object, *args: Any, **kwargs: Any) -> str:
            param = value.get("param", value) if isinstance(value, dict) else None
            if isinstance(param, dict) and "san" in param and "serialnr" in param:
                encoded.append(param)  # a move's feed param, alone or in its message
            return dumps(value, *args, **kwargs)
        monkeypatch.setattr(json, "dumps", counting)
        rig.feed(events("-e2 +e4 Cw", t=1.0))
        for ws in clients:
            for _ in range(MAX_SUBSCRIPTIONS):
                assert json.loads(ws.recv(timeout=5))["param"]["san"] == ["e4"]
    assert len(encoded) == 1  # before the fix: once per feed, 3 x MAX_SUBSCRIPTIONS


# ---------------------------------------------------------------- connections


def test_connections_beyond_the_cap_are_refused_and_room_comes_back(tmp_path: Path) -> None:
    rig = Rig(tmp_path, max_connections=3)
    try:
        with contextlib.ExitStack() as stack:
            open_now = [stack.enter_context(open_ws(rig.url, None)) for _ in range(3)]
            with pytest.raises(InvalidStatus) as refused:
                open_ws(rig.url, None)
            response = refused.value.response
            assert response.status_code == 503
            assert response.body.decode() == (
                "too many LiveChess connections: 3 are open, the most this board serves "
                "([livechess] max_connections)\n")
            for ws in open_now:  # the ones served go on being served
                assert request(ws, {"id": 1, "call": "eboards"})["response"] == "call"
            open_now[0].close()

            def another() -> bool:
                try:
                    stack.enter_context(open_ws(rig.url, None))
                except InvalidStatus:
                    return False
                return True
            wait_until(another, what="room for another connection")
    finally:
        rig.close()


def test_the_caps_are_configured_in_livechess() -> None:
    config = parse_config("[livechess]\nmax_connections = 2\nmax_subscriptions = 1\n")
    assert (config.livechess.max_connections, config.livechess.max_subscriptions) == (2, 1)
    assert (parse_config("").livechess.max_connections, MAX_CONNECTIONS) == (16, 16)
    with pytest.raises(ConfigError, match="livechess.max_subscriptions must be at least 1"):
        parse_config("[livechess]\nmax_subscriptions = 0\n")


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_closed_connections_leave_nothing_for_a_later_collection(rig: Rig) -> None:
    """A closed connection's asyncio transport is in a reference cycle (its read
    callback); hundreds of them pin the allocator's memory until a full collection.
    The endpoint collects once the last of a batch of connections has closed: each of
    its connections' transports is freed without the test collecting anything."""
    transports: list[weakref.ref[object]] = []
    rounds = -(-COLLECT_AFTER // MAX_CONNECTIONS)
    for _ in range(rounds):
        with contextlib.ExitStack() as stack:
            for _ in range(MAX_CONNECTIONS):
                ws = stack.enter_context(open_ws(rig.url, None))
                assert request(ws, {"id": 1, "call": "eboards"})["response"] == "call"
            transports += [weakref.ref(c.transport) for c in list(rig.endpoint._clients)]
        wait_until(lambda: not rig.endpoint._clients, what="the connections closed")
    assert len(transports) == rounds * MAX_CONNECTIONS
    wait_until(lambda: all(ref() is None for ref in transports), timeout=10,
               what="the closed connections' transports freed")


def test_no_compression_is_negotiated(rig: Rig) -> None:
    """permessage-deflate keeps a zlib stream pair per connection (some 300 kB, malloc'd
    outside Python's heap, kept by the allocator after the connection closes) and
    compresses every feed: the board does neither."""
    from websockets.sync.client import connect

    with connect(rig.url, proxy=None, compression="deflate") as ws:  # the client offers it
        assert ws.response is not None
        assert "Sec-WebSocket-Extensions" not in ws.response.headers
        assert request(ws, {"id": 1, "call": "eboards"})["response"] == "call"


def test_a_flood_of_connections_leaves_the_board_playing(
        rig: Rig, errors_logged: Callable[[], list[str]]) -> None:
    """Connections over the cap are refused while the game goes on; the clients served
    get every move."""
    from script import events

    rig.feed([ev.Snapshot(0.5, START)])
    refused: list[int] = []
    flood_done = threading.Event()

    def flood() -> None:
        for _ in range(200):
            try:
                with open_ws(rig.url, None):
                    pass
            except InvalidStatus as exc:
                refused.append(exc.response.status_code)
        flood_done.set()
    with contextlib.ExitStack() as stack:
        served = [stack.enter_context(open_ws(rig.url, None)) for _ in range(MAX_CONNECTIONS)]
        for ws in served:
            request(ws, {"id": 1, "call": "subscribe", "param": {"feed": "eboardevent",
                                                                   "id": 1}})
            ws.recv(timeout=5)
        flooder = threading.Thread(target=flood)
        flooder.start()
        rig.feed(events("-e2 +e4 Cw -e7 +e5 Cb -g1 +f3 Cw", t=1.0))
        assert flood_done.wait(60)
        flooder.join()
        assert refused and set(refused) == {503}
        for ws in served:
            feeds = []
            while not feeds or feeds[-1]["param"]["san"] != ["e4", "e5", "Nf3"]:
                feeds.append(json.loads(ws.recv(timeout=5)))
    assert len(rig.service.session.record.moves) == 3  # type: ignore[union-attr]
    assert errors_logged() == []
