"""The station's pages over HTTP (Starlette's test client, the app's own loop): who may
do what, CSRF, the two-step result, every command journaled with its board's reply,
pairings imported and sent, the feed, users and their hashed passwords, the CLI."""

from __future__ import annotations

import gc
import io
import json
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from board_ctl.cli import main
from board_ctl.station.push import Pusher
from board_ctl.station.station import Station
from board_ctl.station.users import User, UsersError, load_users, make_user, parse_users, save_user
from board_ctl.station.web import LOCK_S, Sessions, build_app, parse_clock
from servicekit import game_from
from stationkit import ContractBoard, Message, contract_board, wait_for

PASSWORD = "correct horse battery"


class Hallway:
    """Two boards answering the station's commands as the contract says, in-process:
    what the station publishes reaches the board, what the board answers comes back
    through the station's thread-safe entry, as from paho's thread."""

    def __init__(self, station: Station) -> None:
        self.station = station
        self.boards = {b.board: b for b in (
            contract_board("b01", "classics.pgn", 0, board_no=1),
            contract_board("b02", "classics.pgn", 1, board_no=2))}
        self.sent: list[tuple[str, dict[str, object]]] = []

    def publish(self, topic: str, payload: str) -> None:
        self.sent.append((topic, json.loads(payload)))
        board = self.boards[topic.split("/")[1]]
        self.deliver(board.command(topic, payload.encode()))

    def deliver(self, messages: list[Message]) -> None:
        for message in messages:
            self.station.deliver(message.topic, message.payload)


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[TestClient, Station, Hallway]]:
    hallway: Hallway | None = None

    def publish(topic: str, payload: str) -> None:
        assert hallway is not None
        hallway.publish(topic, payload)

    station = Station(tmp_path / "station", publish, event="Club night")
    hallway = Hallway(station)
    users = {"anna": make_user("anna", PASSWORD)}
    app = build_app(station, users, "test-secret")
    with TestClient(app, base_url="http://station.test") as client:
        for board in hallway.boards.values():
            hallway.deliver(board.start() + board.play() + board.play())
        wait_for(lambda: all(b.game and b.game.ply == 2 for b in station.hall.boards.values())
                 and len(station.hall.boards) == 2, what="both boards")
        yield client, station, hallway
    station.close()


def login(client: TestClient, user: str = "anna", password: str = PASSWORD) -> str:
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form)
    assert token is not None
    response = client.post("/login", data={"user": user, "password": password,
                                           "csrf": token.group(1), "next": "/arbiter"},
                           follow_redirects=False)
    assert response.status_code == 303, response.text
    page = client.get("/arbiter").text
    csrf = re.search(r'<meta name="csrf" content="([^"]+)">', page)
    assert csrf is not None and csrf.group(1)
    return csrf.group(1)


def test_spectators_see_the_hall_without_actions_or_journal(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, _ = setup
    page = client.get("/")
    assert page.status_code == 200 and 'data-feed="/events"' in page.text
    assert 'data-arbiter="0"' in page.text and "result-dialog" not in page.text
    board = client.get("/board/b01").text
    assert "clock-form" not in board and 'id="journal"' not in board
    snapshot = client.get("/api/boards").json()
    assert [b["id"] for b in snapshot["boards"]] == ["b01", "b02"]
    assert all("alerts" not in b for b in snapshot["boards"])
    detail = client.get("/api/board/b01").json()
    assert "journal" not in detail and "alert_history" not in detail
    assert [m["san"] for m in detail["moves"]] == ["e4", "e5"]


@pytest.mark.parametrize("path", ["/arbiter", "/arbiter/board/b01", "/arbiter/pairings",
                                  "/arbiter/journal", "/arbiter/api/board/b01"])
def test_arbiter_pages_need_a_login(setup, path: str) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = setup
    response = client.get(path, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].startswith("/login")


@pytest.mark.parametrize("path,data", [
    ("/arbiter/board/b01/result", {"result": "1-0"}),
    ("/arbiter/board/b01/ack", {"code": "flag"}),
    ("/arbiter/board/b01/clock", {"white": "5:00", "black": "5:00"}),
    ("/arbiter/pairings", {"text": "round,board,white,black\n1,1,A,B\n"}),
])
def test_writes_need_a_login_and_the_csrf_token(setup, path: str, data: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    assert client.post(path, data=data).status_code == 401
    token = login(client)
    assert client.post(path, data=data).status_code == 403                     # no token
    assert client.post(path, data={**data, "csrf": token[:-2] + "xx"}).status_code == 403
    assert hallway.sent == [] and station.journal() == []
    ok = client.post(path, data={**data, "csrf": token})
    assert ok.status_code in (200, 400)  # accepted (an unknown alert is a 400 of its own)


def test_no_response_may_be_framed_and_each_carries_the_policy(setup) -> None:  # type: ignore[no-untyped-def]
    """Issue 17 §1.8 (the browser's side: test_station_guard): every answer, pages,
    redirects, errors, feeds, files, forbids framing and carries the CSP."""
    client, _, _ = setup
    token = login(client)
    answers = [client.get(path, follow_redirects=False) for path in (
        "/", "/board/b01", "/board/nope", "/ladder", "/login", "/broadcast/",
        "/broadcast/round-1/games.pgn", "/api/boards", "/api/board/b01", "/static/station.js",
        "/arbiter", "/arbiter/board/b01", "/arbiter/journal", "/arbiter/pairings")]
    answers.append(client.post("/arbiter/board/b01/clock", data={"white": "x", "csrf": token}))
    answers.append(client.post("/logout", data={"csrf": token}, follow_redirects=False))
    answers.append(client.get("/arbiter", follow_redirects=False))  # (signed out: a redirect)
    for answer in answers:
        assert answer.headers["x-frame-options"] == "DENY", answer.url
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_the_diagrams_of_real_games_need_no_style_beyond_the_policy() -> None:
    """The CSP allows the diagram's style attributes by their hashes: every diagram a
    real game gives (each position, last move, check, alert squares) uses only those."""
    from board_ctl.station.policy import diagram_styles
    from board_ctl.station.views import diagram

    allowed = set(diagram_styles())
    for index in range(0, 17, 4):  # (every fourth game gives every style all 17 give)
        game = game_from("classics.pgn", index)
        position = game.board()
        for move in game.mainline_moves():
            position.push(move)
            for size in (200, 400):
                svg = diagram(position.fen(), move.uci(), ("e4", "d5"), size)
                assert set(re.findall(r'style="([^"]*)"', svg)) <= allowed


def test_wrong_passwords_and_locking(setup) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = setup
    for _ in range(5):
        form = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
        response = client.post("/login", data={"user": "anna", "password": "wrong password",
                                               "csrf": token})
        assert response.status_code == 401 and "wrong password" in response.text
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    locked = client.post("/login", data={"user": "anna", "password": PASSWORD, "csrf": token})
    assert locked.status_code == 401 and "Too many" in locked.text
    assert client.get("/arbiter", follow_redirects=False).status_code == 303


def attempt_login(client: TestClient, user: str, password: str) -> Any:
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    return client.post("/login", data={"user": user, "password": password, "csrf": token},
                       follow_redirects=False)


def test_a_spectator_cannot_lock_the_arbiter_out(setup) -> None:  # type: ignore[no-untyped-def]
    """The spectators' page is public, so anyone in the hall reaches the sign-in form:
    five wrong passwords from his address lock that address out, not the arbiter."""
    client, _, _ = setup
    stranger = TestClient(client.app, base_url="http://station.test", client=("10.0.0.66", 40000))
    for _ in range(5):
        assert attempt_login(stranger, "anna", "guess guess").status_code == 401
    assert "Too many" in attempt_login(stranger, "anna", PASSWORD).text  # he is locked
    assert attempt_login(client, "anna", PASSWORD).status_code == 303   # she is not


def test_failed_sign_ins_are_forgotten_after_the_lock() -> None:
    now = [0.0]
    sessions = Sessions(clock=lambda: now[0])
    for n in range(5000):  # names sprayed from one address
        sessions.failed(f"name{n}", "10.0.0.66")
    for _ in range(5):
        sessions.failed("anna", "10.0.0.66")
    assert sessions.locked("anna", "10.0.0.66") and not sessions.locked("anna", "10.0.0.7")
    now[0] = LOCK_S + 1
    assert not sessions.locked("anna", "10.0.0.66")
    for minute in (1, 2, 3):  # the spray goes on, a minute at a time
        now[0] = minute * (LOCK_S + 1)
        for n in range(5000):
            sessions.failed(f"name{minute}-{n}", "10.0.0.66")
    # what went stale is forgotten: memory holds about the last minute, not every name
    assert ("name0", "10.0.0.66") not in sessions._failures
    assert len(sessions._failures) <= 2 * 5000 + 1


def test_the_answer_to_a_sign_in_does_not_tell_which_names_exist(setup) -> None:  # type: ignore[no-untyped-def]
    """A wrong password for an arbiter's name and any password for a name nobody has get
    the same answer, at the same cost (CPU time of the whole station, measured in the same
    run): otherwise the time of the answer lists the arbiters' names."""
    client, _, _ = setup

    def attempt(user: str) -> tuple[float, int, str]:
        form = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
        start = time.process_time()
        response = client.post("/login", data={"user": user, "password": "wrong password",
                                               "csrf": token})
        return time.process_time() - start, response.status_code, response.text

    known = [attempt("anna") for _ in range(3)]
    unknown = [attempt(f"nobody{n}") for n in range(3)]
    assert {(status, "Unknown user or wrong password." in text) for _, status, text in known + unknown} \
        == {(401, True)}
    assert min(t for t, _, _ in unknown) > min(t for t, _, _ in known) / 3, (known, unknown)


def test_login_refuses_a_forged_form_and_an_outside_next(setup) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = setup
    assert client.post("/login", data={"user": "anna", "password": PASSWORD,
                                       "csrf": "forged"}).status_code == 401
    form = client.get("/login").text
    token = re.search(r'name="csrf" value="([^"]+)"', form).group(1)  # type: ignore[union-attr]
    response = client.post("/login", data={"user": "anna", "password": PASSWORD, "csrf": token,
                                           "next": "//evil.example/"}, follow_redirects=False)
    assert response.headers["location"] == "/arbiter"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


def test_logout_ends_the_session_for_good(setup) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = setup
    token = login(client)
    stolen = dict(client.cookies)
    assert client.post("/logout", data={"csrf": token}, follow_redirects=False).status_code == 303
    client.cookies.clear()
    client.cookies.update(stolen)  # the old cookie, replayed
    assert client.get("/arbiter", follow_redirects=False).status_code == 303


def test_acknowledge_an_alert_journaled_with_the_reply(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    hallway.deliver(hallway.boards["b01"].raise_alert("illegal-move", "white", ["e4"], "reinstated"))
    wait_for(lambda: station.hall.boards["b01"].game.open_alerts(), what="the alert")  # type: ignore[union-attr]
    token = login(client)
    arbiter_view = client.get("/arbiter/api/board/b01").json()
    assert arbiter_view["alerts"][0]["code"] == "illegal-move"
    response = client.post("/arbiter/board/b01/ack", data={"code": "illegal-move", "csrf": token})
    assert response.status_code == 200, response.text
    command_id = response.json()["id"]
    topic, payload = hallway.sent[-1]
    assert topic == "board-ctl/b01/cmd/ack"
    assert payload == {"v": 1, "id": command_id, "by": "anna", "code": "illegal-move",
                       "game": station.hall.boards["b01"].current}
    wait_for(lambda: any(e["kind"] == "reply" for e in station.journal()), what="the reply")
    command, reply = station.journal()
    assert (command["kind"], command["user"], command["board"], command["command"]) == \
        ("command", "anna", "b01", "ack")
    assert (reply["kind"], reply["id"], reply["ok"]) == ("reply", command_id, True)
    wait_for(lambda: station.hall.boards["b01"].game.open_alerts()[0].acknowledged_by == "anna",  # type: ignore[union-attr]
             what="the board's state to say who acknowledged")
    assert client.get("/arbiter/api/board/b01").json()["journal"][-1]["id"] == command_id
    # an alert that is not open cannot be acknowledged
    assert client.post("/arbiter/board/b01/ack", data={"code": "flag", "csrf": token}).status_code == 400


def test_a_result_needs_its_confirmation(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    token = login(client)
    ask = client.post("/arbiter/board/b02/result",
                      data={"result": "0-1", "reason": "illegal move", "csrf": token})
    assert ask.status_code == 200
    assert "0-1" in ask.json()["confirm"] and hallway.sent == []
    # a confirmation of another result, or a made-up token, does nothing
    assert client.post("/arbiter/board/b02/result", data={
        "result": "1-0", "confirm": ask.json()["token"], "csrf": token}).status_code == 409
    assert client.post("/arbiter/board/b02/result", data={
        "result": "0-1", "confirm": "made-up", "csrf": token}).status_code == 409
    assert hallway.sent == []
    ask = client.post("/arbiter/board/b02/result",
                      data={"result": "0-1", "reason": "illegal move", "csrf": token})
    done = client.post("/arbiter/board/b02/result", data={
        "result": "0-1", "reason": "illegal move", "confirm": ask.json()["token"], "csrf": token})
    assert done.status_code == 200
    assert hallway.sent[-1][1]["result"] == "0-1" and hallway.sent[-1][1]["by"] == "anna"
    wait_for(lambda: station.hall.boards["b02"].game.result == "0-1", what="the result")  # type: ignore[union-attr]
    # the token is spent
    again = client.post("/arbiter/board/b02/result", data={
        "result": "0-1", "confirm": ask.json()["token"], "csrf": token})
    assert again.status_code == 409
    # an override names what the board has
    ask = client.post("/arbiter/board/b02/result", data={"result": "1/2-1/2", "csrf": token})
    assert "Override" in ask.json()["confirm"] and "The board has 0-1" in ask.json()["confirm"]


def test_clock_correction(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    token = login(client)
    response = client.post("/arbiter/board/b01/clock",
                           data={"white": "4:30", "black": "1:02:03.5", "csrf": token})
    assert response.status_code == 200, response.text
    assert hallway.sent[-1][1]["white"] == 270.0 and hallway.sent[-1][1]["black"] == 3723.5
    wait_for(lambda: station.hall.boards["b01"].game.clock.black_ms == 3_723_500,  # type: ignore[union-attr]
             what="the board's new clocks")
    history = client.get("/arbiter/api/board/b01").json()["clock_history"]
    assert history[-1]["source"] == "arbiter" and history[-1]["black_ms"] == 3_723_500
    bad = client.post("/arbiter/board/b01/clock", data={"white": "soon", "black": "1:00", "csrf": token})
    assert bad.status_code == 400 and "not a time" in bad.json()["error"]


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_pairings_imported_sent_to_boards_between_games(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    token = login(client)
    bad = client.post("/arbiter/pairings", data={
        "csrf": token, "text": "round,board,white,black\n4,1,A,B\n4,x,C,D\n"})
    assert bad.status_code == 400 and "pairings:3: board &#39;x&#39;" in bad.text
    assert station.pairings == []
    csv = ("round,board,white,black,white_fide_id,black_fide_id\n"
           "4,1,Anna Smith,Ben Jones,1503014,\n4,2,Carl Berg,Dora Lind,,\n")
    ok = client.post("/arbiter/pairings", data={"csrf": token},
                     files={"file": ("round4.csv", csv.encode(), "text/csv")})
    assert ok.status_code == 200 and "2 pairings imported" in ok.text
    # both boards are mid-game: nothing is sent yet
    assert not [t for t, _ in hallway.sent if t.endswith("/players")]
    assert "waiting for the board" in client.get("/arbiter/pairings").text
    # board 1's next game begins (ply 0): its pairing goes out and is acknowledged
    b01 = hallway.boards["b01"]
    hallway.deliver(b01.new_game(b01.game_pgn, "next-game"))
    wait_for(lambda: station.delivered.get(("4", 1)) == "b01", what="the pairing delivered")
    topic, body = [s for s in hallway.sent if s[0].endswith("/players")][0]
    assert topic == "board-ctl/b01/cmd/players"
    assert body["white"] == {"name": "Anna Smith", "fide_id": "1503014"}
    assert (body["round"], body["board_no"], body["event"]) == ("4", 1, "Club night")
    wait_for(lambda: station.hall.boards["b01"].game.white.name == "Anna Smith",  # type: ignore[union-attr]
             what="the board's game tagged")
    # the arbiter can send board 2's now
    client.post("/arbiter/pairings/send", data={"csrf": token, "round": "4", "board_no": "2"})
    wait_for(lambda: station.delivered.get(("4", 2)) == "b02", what="board 2's pairing")
    kinds = [e["kind"] for e in station.journal()]
    assert kinds[0] == "pairings" and kinds.count("command") == 2 and kinds.count("reply") == 2
    # the round's broadcast has the names and the ids
    pgn = client.get("/broadcast/round-4/games.pgn")
    assert pgn.status_code == 200 and pgn.headers["content-type"].startswith("application/x-chess-pgn")
    assert '[Round "4.1"]' in pgn.text and '[WhiteFideId "1503014"]' in pgn.text
    assert client.get("/broadcast/round-9/games.pgn").status_code == 404


def test_the_journal_survives_a_restart_and_pending_commands_wait(tmp_path: Path) -> None:
    sent: list[str] = []
    station = Station(tmp_path, lambda topic, payload: sent.append(payload))
    board = contract_board("b05")
    for message in board.start():
        station.receive(message.topic, message.payload)
    first = station.set_result("anna", "b05", "1-0", "")
    station.close()
    again = Station(tmp_path, lambda topic, payload: None)
    assert list(again.pending) == [first]
    reply = board.command("board-ctl/b05/cmd/result", sent[0].encode())[0]
    again.receive(reply.topic, reply.payload)
    assert again.pending == {}
    assert [e["kind"] for e in again.journal()] == ["command", "reply"]
    again.close()


def test_the_feed_starts_with_a_snapshot_and_follows_moves(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    with client.stream("GET", "/events") as stream:
        lines = stream.iter_lines()
        first = next(line for line in lines if line.startswith("data: "))
        snapshot = json.loads(first[6:])
        assert snapshot["type"] == "snapshot" and len(snapshot["boards"]) == 2
        hallway.deliver(hallway.boards["b02"].play())
        update = json.loads(next(line for line in lines if line.startswith("data: "))[6:])
        assert update["type"] == "board" and update["board"]["id"] == "b02"  # only the news
        assert update["board"]["ply"] == 3 and update["board"]["last_move"]["label"] == \
            f"2. {hallway.boards['b02'].sans[2]}"


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
def test_a_feed_ends_after_its_lifetime_and_gives_its_place_back(tmp_path: Path) -> None:
    """Issue 17 §1.6: a feed is not held for ever. It ends after its lifetime (the
    browser reconnects, from a fresh snapshot), and its place is free again: with one
    place per address, a second feed is told to come back later until the first ended."""
    from board_ctl.station.feeds import FeedLimits

    station = Station(tmp_path / "station", lambda topic, payload: None)
    app = build_app(station, {}, "test-secret",
                    feed_limits=FeedLimits(per_client=1, lifetime_s=1.0))
    try:
        with TestClient(app, base_url="http://station.test") as client:
            started = time.monotonic()
            with client.stream("GET", "/events") as first:
                lines = first.iter_lines()
                assert next(lines) == "retry: 2000"
                busy = client.get("/events")  # (the same address: no place left)
                assert busy.text.startswith("retry: 30000\n: busy: 1 live pages open")
                assert busy.headers["connection"] == "close"
                rest = list(lines)  # ends by itself
            assert 0.9 < time.monotonic() - started < 10
            assert any(line.startswith("data: ") for line in rest)  # (its snapshot)
            with client.stream("GET", "/events") as again:
                assert next(again.iter_lines()) == "retry: 2000"
    finally:
        station.close()


def test_a_feed_whose_client_reads_nothing_ends() -> None:
    """A send that does not complete within the feed's send timeout (a client that
    stopped reading, its buffers full) ends the feed, and its place is given back."""
    import asyncio

    from board_ctl.station.feeds import FeedResponse

    closed: list[bool] = []
    sent: list[dict[str, object]] = []

    async def body() -> Any:
        while True:
            yield "data: x\n\n"

    async def stuck_send(message: dict[str, object]) -> None:
        sent.append(message)
        if len(sent) > 2:
            await asyncio.Event().wait()  # the client's window is shut

    async def receive() -> dict[str, object]:
        await asyncio.Event().wait()
        return {}

    response = FeedResponse(body(), media_type="text/event-stream", send_timeout_s=0.2,
                            on_close=lambda: closed.append(True))
    scope = {"type": "http", "asgi": {"spec_version": "2.4"}, "method": "GET"}
    asyncio.run(asyncio.wait_for(response(scope, receive, stuck_send), 5))  # type: ignore[arg-type]
    assert closed == [True] and len(sent) == 3


@pytest.mark.parametrize("text,ms", [("5:00", 300_000), ("1:30:00", 5_400_000), ("0:07.25", 7_250),
                                     ("90", 90_000), ("12.5", 12_500), (" 2:05 ", 125_000)])
def test_clock_text(text: str, ms: int) -> None:
    assert parse_clock(text) == ms


@pytest.mark.parametrize("text", ["", "5:0", "1:60", "a:00", "-5", "1:2:3:4", "9" * 400,
                                  "9" * 400 + ".5", "9" * 5000 + ":00:00", "360001",
                                  "100:00:01", "1e309", "inf", "nan", "\u0663:00"],
                         ids=lambda text: text if len(text) < 12 else f"{text[:6]}...{len(text)}")
def test_bad_clock_text(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_clock(text)
    assert len(str(info.value)) < 100


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789:.9 ", max_size=30) | st.text(max_size=30)
       | st.tuples(st.sampled_from(["", "1:", "1:00:"]),  # (long numbers: 309 digits is inf)
                   st.integers(1, 600).flatmap(lambda n: st.text("0123456789", min_size=n,
                                                                   max_size=n)),
                   st.sampled_from(["", ".5", ":00", ":00.5"])).map("".join))
def test_any_clock_text_is_a_time_or_a_value_error(text: str) -> None:
    """Issue 17 §1.9: 400 nines made a float of inf and round() an OverflowError: a 500.
    Any text is a time of at most 100 h, or a ValueError."""
    try:
        ms = parse_clock(text)
    except ValueError:
        return
    assert isinstance(ms, int) and 0 <= ms <= 100 * 3600 * 1000


def test_a_clock_correction_of_400_nines_is_a_400_naming_the_field(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    token = login(client)
    sent = len(hallway.sent)
    for white, black, field in (("9" * 400, "1:00", "white"), ("1:00", "9" * 400, "black")):
        response = client.post("/arbiter/board/b01/clock",
                               data={"white": white, "black": black, "csrf": token})
        assert response.status_code == 400, response.text
        assert response.json()["error"].startswith(f"{field}: ")
    assert len(hallway.sent) == sent  # nothing went to the board


def test_users_are_stored_hashed(tmp_path: Path) -> None:
    path = tmp_path / "users"
    assert save_user(path, make_user("anna", PASSWORD))
    assert not save_user(path, make_user("anna", "another password"))  # replaced
    text = path.read_text()
    assert "password" not in text and PASSWORD not in text
    assert path.stat().st_mode & 0o077 == 0
    users = load_users(path)
    assert users["anna"].check("another password") and not users["anna"].check(PASSWORD)
    with pytest.raises(UsersError, match="shorter than 8"):
        make_user("bob", "short")
    with pytest.raises(UsersError, match="users:2: not NAME:scrypt"):
        parse_users("# arbiters\nbob:plain:secret\n")
    with pytest.raises(UsersError, match="already on an earlier line"):
        parse_users(f"{users['anna'].line()}\n{users['anna'].line()}\n")
    assert isinstance(users["anna"], User)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o620, 0o606, 0o666])
def test_a_users_file_others_may_read_or_write_is_refused(tmp_path: Path, mode: int,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "users"
    save_user(path, make_user("anna", PASSWORD))
    path.chmod(mode)
    with pytest.raises(UsersError, match=f"mode {mode:04o}.*chmod 600 {path}"):
        load_users(path)
    assert main(["arbiter", "--users", str(path), "--broker", "mqtt://localhost",
                 "--listen", "127.0.0.1:1", "--data-dir", str(tmp_path / "d")]) == 2
    assert f"chmod 600 {path}" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("another password\n"))
    assert main(["arbiter", "--users", str(path), "--add-user", "bob"]) == 2  # nor added to
    assert "chmod 600" in capsys.readouterr().err
    path.chmod(0o600)
    assert load_users(path)["anna"].check(PASSWORD)


def test_cli_add_user_and_bad_arguments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    users = tmp_path / "users"
    run = ["arbiter", "--users", str(users)]
    monkeypatch.setattr(sys, "stdin", io.StringIO(PASSWORD + "\n"))  # not a terminal
    assert main(run + ["--add-user", "anna"]) == 0
    assert load_users(users)["anna"].check(PASSWORD)
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    assert main(run + ["--add-user", "bob"]) == 2
    assert "shorter than 8" in capsys.readouterr().err
    for extra, message in [([], "--broker URL is required"),
                           (["--broker", "http://x"], "mqtt://HOST"),
                           (["--broker", "mqtt://localhost", "--listen", "nowhere"], "HOST:PORT"),
                           (["--broker", "mqtt://localhost", "--pairings", str(tmp_path / "none.csv")],
                            "--pairings"),
                           # checked first (a listen address that cannot be: nothing starts)
                           (["--broker", "mqtt://localhost", "--event", "Club\n[Result \"1-0\"]",
                             "--listen", "nowhere"], "--event: tag Event: the value 'Club\\n[Result"),
                           (["--broker", "mqtt://localhost", "--site", "S" * 256, "--listen", "nowhere"],
                            "--site: tag Site: the value has 256 characters")]:
        assert main(run + ["--data-dir", str(tmp_path / "d")] + extra) == 2
        err = capsys.readouterr().err
        assert message in err and err.strip().count("\n") == 0, (extra, err)


def test_the_other_pages(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    b02 = hallway.boards["b02"]
    b02.tags.update(round="5", board_no=2)
    while not b02.finished:
        hallway.deliver(b02.play())
    wait_for(lambda: station.hall.boards["b02"].game.result != "*", what="the game's end")  # type: ignore[union-attr]
    ladder = client.get("/ladder")
    assert ladder.status_code == 200 and b02.result in ladder.text
    broadcast = client.get("/broadcast/")
    assert "/broadcast/round-5/games.pgn" in broadcast.text
    assert client.get("/broadcast/round-5/games.pgn").text.count("[Event ") == 1
    assert client.get("/board/nope").status_code == 404
    token = login(client)
    client.post("/arbiter/board/b01/clock", data={"white": "4:00", "black": "4:00", "csrf": token})
    journal = client.get("/arbiter/journal")
    assert journal.status_code == 200 and "clock" in journal.text and "anna" in journal.text


def test_the_ladder_is_made_of_confirmed_results_and_survives_a_restart(setup, tmp_path) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    b02 = hallway.boards["b02"]
    b02.tags.update(white={"name": "Ann Lee", "fide_id": None},
                    black={"name": "Bo Chen", "fide_id": None})
    while not b02.finished:
        hallway.deliver(b02.play())
    wait_for(lambda: station.unconfirmed(), what="the game's end")
    assert station.results.standings() == [] and "Waiting for an arbiter" in client.get("/ladder").text
    token = login(client)
    game = station.hall.boards["b02"].game
    assert game is not None
    page = client.get("/ladder").text
    assert f'value="{game.game}"' in page and f"Confirm {b02.result}" in page
    confirmed = client.post("/arbiter/ladder/confirm", follow_redirects=False, data={
        "csrf": token, "board": "b02", "game": game.game, "result": b02.result})
    assert confirmed.status_code == 303, confirmed.text
    # 0 v 0: "相差10分以内" — the winner gains 10, the loser loses 10; a draw moves nothing
    expected = {"1-0": {"Ann Lee": 10.0, "Bo Chen": -10.0},
                "0-1": {"Ann Lee": -10.0, "Bo Chen": 10.0},
                "1/2-1/2": {"Ann Lee": 0.0, "Bo Chen": 0.0}}[b02.result]
    assert {row["player"]: row["points"] for row in station.results.standings()} == expected
    page = client.get("/ladder").text
    assert "Ann Lee" in page and f"{expected['Ann Lee']:.2f}" in page
    assert "Waiting for an arbiter" not in page and station.unconfirmed() == []
    assert [e["kind"] for e in station.journal("b02")][-1] == "confirm-result"
    restarted = Station(tmp_path / "station", lambda topic, payload: None)
    try:
        assert restarted.results.standings() == station.results.standings()
    finally:
        restarted.close()


def test_a_board_cannot_rate_invented_players(setup) -> None:  # type: ignore[no-untyped-def]
    """Issue 17 §1.5: ten finished states from one board, each a new game won by an
    invented player, put him at the top of /ladder and into results.jsonl. What a board
    says of its own games rates nobody until an arbiter confirms it."""
    client, station, hallway = setup
    b01 = hallway.boards["b01"]
    state = json.loads(b01.state().payload)
    for n in range(10):
        fake = {**state, "game": f"fake-{n}", "time": state["time"] + n, "result": "1-0",
                "phase": "over", "termination": "checkmate",
                "white": {"name": "Mallory", "fide_id": None},
                "black": {"name": f"Victim {n}", "fide_id": None}}
        hallway.deliver([Message("board-ctl/b01/state", json.dumps(fake).encode())])
    wait_for(lambda: station.hall.boards["b01"].game.game == "fake-9",  # type: ignore[union-attr]
             what="the fake games")
    page = client.get("/ladder").text
    assert station.results.standings() == [] and "No rated game yet" in page
    assert not (station.data_dir / "results.jsonl").exists()


def test_only_an_arbiter_confirms_and_only_what_the_board_shows(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    b02 = hallway.boards["b02"]
    while not b02.finished:
        hallway.deliver(b02.play())
    wait_for(lambda: station.unconfirmed(), what="the game's end")
    game = station.hall.boards["b02"].game
    assert game is not None
    form = {"board": "b02", "game": game.game, "result": b02.result}
    assert client.post("/arbiter/ladder/confirm", data=form).status_code == 401
    token = login(client)
    other = "1-0" if b02.result != "1-0" else "0-1"
    refused = client.post("/arbiter/ladder/confirm", data={**form, "result": other, "csrf": token})
    assert refused.status_code == 400 and f"now shows {b02.result}" in refused.json()["error"]
    refused = client.post("/arbiter/ladder/confirm", data={**form, "game": "nope", "csrf": token})
    assert refused.status_code == 400 and "no game" in refused.json()["error"]
    assert station.results.rows == {}


def test_the_arbiters_own_result_is_rated(setup) -> None:  # type: ignore[no-untyped-def]
    """A result the arbiter gave (cmd/result, acknowledged by the board) needs no second
    confirmation."""
    client, station, hallway = setup
    b01 = hallway.boards["b01"]
    b01.tags.update(white={"name": "Ann Lee", "fide_id": None},
                    black={"name": "Bo Chen", "fide_id": None})
    hallway.deliver([b01.state()])
    wait_for(lambda: station.hall.boards["b01"].game.white.name == "Ann Lee",  # type: ignore[union-attr]
             what="the names")
    token = login(client)
    step = client.post("/arbiter/board/b01/result", data={"result": "0-1", "csrf": token}).json()
    done = client.post("/arbiter/board/b01/result",
                       data={"result": "0-1", "csrf": token, "confirm": step["token"]})
    assert done.status_code == 200, done.text
    wait_for(lambda: station.results.rows, what="the result rated")
    [row] = station.results.rows.values()
    assert (row["result"], row["confirmed_by"], row["how"]) == ("0-1", "anna", "command")
    assert {r["player"]: r["points"] for r in station.results.standings()} == \
        {"Ann Lee": -10.0, "Bo Chen": 10.0}


@pytest.mark.parametrize("path", ["/broadcast/round-%C2%B2/games.pgn",     # "²": a digit to isdigit()
                                  "/broadcast/round-%D9%A3/games.pgn",     # Arabic-Indic three
                                  "/broadcast/round-" + "9" * 5000 + "/games.pgn",
                                  "/broadcast/round-x/games.pgn"],
                         ids=["superscript-two", "arabic-indic-three", "5000-digits", "letter"])
def test_a_round_in_the_broadcast_url_is_ascii_digits(setup, path: str) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = setup
    response = client.get(path)
    assert response.status_code == 404 and "a round number" in response.text


def test_a_boards_round_that_is_no_number_breaks_no_page(setup) -> None:  # type: ignore[no-untyped-def]
    """Every page lists the rounds: a board naming its round "²" (a digit to str.isdigit(),
    not to int()) must not take them down, the sign-in page least of all."""
    client, station, hallway = setup
    b02 = hallway.boards["b02"]
    b02.tags.update(round="\u00b2", board_no=2)
    hallway.deliver(b02.play())
    wait_for(lambda: station.hall.boards["b02"].game.round == "\u00b2", what="the round")  # type: ignore[union-attr]
    for path in ("/", "/login", "/ladder", "/broadcast/", "/board/b02"):
        assert client.get(path).status_code == 200, path
    assert station.rounds() == ["\u00b2"]


def test_the_arbiter_sees_how_the_push_goes_and_spectators_do_not(tmp_path: Path) -> None:
    """The push's state (pushes, failures, the last error: an expired token, lichess
    down) is for the arbiter who runs the broadcast, on the broadcast page once signed in."""
    station = Station(tmp_path / "station", lambda topic, payload: None)
    pusher = Pusher("http://127.0.0.1:9/api/broadcast/round/AbCd/push", "lip_token", "3",
                    lambda: "")
    pusher.status.failures, pusher.status.last_error = 2, "HTTP 401: No such token"
    app = build_app(station, {"anna": make_user("anna", PASSWORD)}, "test-secret", pusher=pusher)
    try:
        with TestClient(app, base_url="http://station.test") as client:
            public = client.get("/broadcast/").text
            assert "Pushing round 3" not in public and "No such token" not in public
            login(client)
            page = client.get("/broadcast/").text
            assert "Pushing round 3 to http://127.0.0.1:9/api/broadcast/round/AbCd/push" in page
            assert "2 failures" in page and "HTTP 401: No such token" in page
            assert "lip_token" not in page
    finally:
        station.close()


def resource_warnings(action: Callable[[], object]) -> list[str]:
    """The ResourceWarnings (files never closed) while `action` runs and after it is done.

    Garbage left by earlier tests in this worker (a child's pipe in a reference cycle) is
    collected first: a collection inside the window would charge its warning to `action`."""
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
        gc.collect()
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]


def test_an_uploaded_pairings_file_is_closed(setup) -> None:  # type: ignore[no-untyped-def]
    client, station, _ = setup
    token = login(client)
    csv = "round,board,white,black\n4,1,Anna Smith,Ben Jones\n"

    def upload() -> None:
        response = client.post("/arbiter/pairings", data={"csrf": token},
                               files={"file": ("round4.csv", csv.encode(), "text/csv")})
        assert response.status_code == 200 and "1 pairings imported" in response.text
    assert resource_warnings(upload) == []


def test_a_station_that_cannot_start_closes_its_journal(tmp_path: Path) -> None:
    run = ["arbiter", "--broker", "mqtt://localhost", "--data-dir", str(tmp_path / "d"),
           "--pairings", str(tmp_path / "none.csv")]
    assert resource_warnings(lambda: main(run)) == []
    assert (tmp_path / "d" / "actions.jsonl").exists()


@pytest.mark.parametrize("board_no", ["x", "", "1.5", "9" * 5000])
def test_sending_a_pairing_with_no_board_number_is_a_clear_refusal(setup, board_no: str) -> None:  # type: ignore[no-untyped-def]
    client, station, hallway = setup
    token = login(client)
    response = client.post("/arbiter/pairings/send",
                           data={"csrf": token, "round": "4", "board_no": board_no})
    assert response.status_code == 400 and "board" in response.json()["error"]
    assert hallway.sent == []
