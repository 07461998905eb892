"""The live broadcast: a round's games in board order as one PGN (what lichess polls),
read back by python-chess and accepted by pgn-extract; and the push to a broadcast
round, against a local server that answers like lichess's push endpoint."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
import json
import os
import re
import shutil
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from collections.abc import Callable
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from board_ctl.station.broadcast import round_pgn
from board_ctl.station.model import Hall
from board_ctl.station.pairings import Pairing, PairingsError, parse_pairings
from board_ctl.station.push import Pusher
from conftest import missing_tool
from servicekit import excerpt, game_from
from stationkit import ContractBoard, Message

PGN_EXTRACT = shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")
NOW = 1_796_065_300_000

PAIRINGS = """round,board,white,black,white_fide_id,black_fide_id
3,1,Anna Smith,Ben Jones,1503014,
3,2,Carl Berg,Dora Lind,,4100018
3,3,Eve Stone,Finn Moss,,
3,4,Gus Hart,Ida Holm,,
"""


def feed(hall: Hall, messages: list[Message]) -> None:
    for message in messages:
        hall.apply(message.topic, message.payload, NOW)


def round_of_four(plies: list[int], timed: list[bool]) -> tuple[Hall, list[ContractBoard]]:
    """Boards 1-3 playing round 3 (board 4 not yet started), each a real game cut at
    `plies[board - 1]`; the boards announce their numbers out of order."""
    hall = Hall()
    boards = []
    for number in (3, 1, 2):
        cut, clock = plies[number - 1], timed[number - 1]
        game = game_from("stockfish-300.pgn", {1: 7, 2: 11, 3: 42}[number])
        board = ContractBoard(f"b{number:02d}", game, game=f"g{number}", board_no=number,
                              base_ms=300_000 if clock else None,
                              tags={"round": "3", "board_no": number})
        feed(hall, board.start())
        for _ in range(min(cut, len(board.moves))):
            feed(hall, board.play())
        boards.append(board)
    return hall, boards


def read_games(text: str) -> list[chess.pgn.Game]:
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    return games


def test_round_in_board_order_with_tags_clocks_and_results() -> None:
    hall, boards = round_of_four([20, 1000, 35], [True, True, False])
    pairings = parse_pairings(PAIRINGS)
    text = round_pgn(hall, "3", pairings, event="Club night", site="Hall")
    games = read_games(text)
    assert [g.headers["Round"] for g in games] == ["3.1", "3.2", "3.3", "3.4"]
    assert [g.headers["White"] for g in games] == ["Anna Smith", "Carl Berg", "Eve Stone", "Gus Hart"]
    assert games[0].headers["WhiteFideId"] == "1503014" and "BlackFideId" not in games[0].headers
    assert games[1].headers["BlackFideId"] == "4100018"
    for game in games:
        for tag in ("Event", "Site", "Date", "Round", "White", "Black", "Result"):
            assert tag in game.headers
        assert game.headers["Event"] == "Club night"
    by_no = {b.board_no: b for b in boards}
    for number, game in zip([1, 2, 3], games):
        board = by_no[number]
        moves = [m.uci() for m in game.mainline_moves()]
        assert moves == [m.uci() for m in board.moves[:board.ply]]
        assert game.headers["Result"] == board.result
    assert games[1].headers["Result"] != "*"   # board 2 played its game to the end
    assert games[0].headers["Result"] == "*"   # board 1 is live
    # [%clk h:mm:ss] after every move of a timed game, none in an untimed one
    clocks = re.findall(r"\{ \[%clk (\d+:\d\d:\d\d)\] \}", text.split("\n\n[Event")[0])
    assert len(clocks) == 20
    for node, board_clock in zip(games[0].mainline(), by_no[1].clock_of_move):
        assert board_clock is not None and node.clock() == board_clock // 1000
    assert all(node.clock() is None for node in games[2].mainline())
    assert list(games[3].mainline_moves()) == [] and games[3].headers["Result"] == "*"


def test_order_is_stable_while_the_round_goes_on() -> None:
    hall, boards = round_of_four([2, 2, 2], [True, True, True])
    pairings = parse_pairings(PAIRINGS)
    order = [g.headers["Round"] for g in read_games(round_pgn(hall, "3", pairings))]
    for _ in range(10):
        for board in boards:
            if not board.finished:
                feed(hall, board.play())
        now = [g.headers["Round"] for g in read_games(round_pgn(hall, "3", pairings))]
        assert now == order


@pytest.mark.parametrize("zone,start,date", [
    # a club night in California: 19:00 there is 03:00 UTC the next day
    ("America/Los_Angeles", "2026-11-30T19:00:00-08:00", "2026.11.30"),
    # one in London that runs past midnight
    ("Europe/London", "2026-11-30T22:30:00+00:00", "2026.11.30"),
    # a morning in Shanghai: 07:00 there is 23:00 UTC the evening before
    ("Asia/Shanghai", "2026-12-01T07:00:00+08:00", "2026.12.01"),
])
def test_the_date_is_the_day_the_game_began_where_it_is_played(zone: str, start: str,
                                                                date: str) -> None:
    """The Date tag is the day the game started (PGN 8.1.1.3), in the station's time
    zone, as the board's own PGN: not the day in UTC, and not a date that turns over at
    midnight while the game goes on."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        started = round(dt.datetime.fromisoformat(start).timestamp() * 1000)
        board = ContractBoard("b1", game_from("stockfish-300.pgn", 2), game="g1", board_no=1,
                              think_ms=15 * 60_000, start_time_ms=started,
                              tags={"round": "3", "board_no": 1})
        hall = Hall()
        feed(hall, board.start())
        dates = set()
        for _ in range(16):  # four hours: past midnight
            feed(hall, board.play())
            dates.add(read_games(round_pgn(hall, "3", []))[0].headers["Date"])
        assert dates == {date}
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


def test_pgn_extract_accepts_the_round(tmp_path: Path) -> None:
    if not PGN_EXTRACT:
        missing_tool("pgn-extract is not installed (Debian package pgn-extract)")
    hall, _ = round_of_four([0, 1000, 57], [True, True, True])
    # and a game from a set-up position (FEN and SetUp tags)
    board = ContractBoard("b09", excerpt(game_from("classics.pgn", 2), 10), game="g9",
                          board_no=9, tags={"round": "3", "board_no": 9})
    feed(hall, board.start() + board.play() + board.play())
    path = tmp_path / "games.pgn"
    path.write_text(round_pgn(hall, "3", parse_pairings(PAIRINGS)), encoding="utf-8")
    out = tmp_path / "out.pgn"
    done = subprocess.run([PGN_EXTRACT, "-s", "-o", str(out), str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "", done.stderr
    assert out.read_text(encoding="utf-8").count("[Event ") == 5


def pgn_extract_games(tmp_path: Path, text: str) -> list[chess.pgn.Game]:
    """The games pgn-extract finds in `text` (and it complains of nothing)."""
    if not PGN_EXTRACT:
        missing_tool("pgn-extract is not installed (Debian package pgn-extract)")
    path, out = tmp_path / "in.pgn", tmp_path / "out.pgn"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([PGN_EXTRACT, "-s", "--nosetuptags", "-o", str(out), str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
    return read_games(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name,written", [
    # kept, and written escaped as the PGN standard says (lichess's parser reads \" and \\;
    # python-chess hands the tag's text back as it is written)
    ('Anna "Ace" Smith', 'Anna \\"Ace\\" Smith'),
    ("Anna \\ Smith", "Anna \\\\ Smith"),
    # left out: the pairing's name (and the station's event and site) instead
    ('Anna"]\n[Result "1-0', None),
    ('Anna\n\n[Event "Forged"]\n[Result "0-1"]\n\n1. e4 0-1', None),
    ("Anna\tSmith", None),
    ("Anna\x00", None),
    ("A" * 256, None),
])
def test_tags_from_a_board_cannot_forge_the_broadcast(tmp_path: Path, name: str,
                                                      written: str | None) -> None:
    """A board's player names, FIDE ids, event and site are PGN tags: one that cannot be
    a tag is left out, quotes and backslashes are escaped; the round still reads as its
    games, each with its own tags, in python-chess and in pgn-extract."""
    hall = Hall()
    for number, white in ((1, name), (2, "Carl Berg")):
        board = ContractBoard(f"b{number}", game_from("stockfish-300.pgn", number),
                              game=f"g{number}", board_no=number, tags={
                                  "round": "3", "board_no": number, "event": name, "site": name,
                                  "white": {"name": white, "fide_id": f"1503014\n[{name}"},
                                  "black": {"name": "Ben Jones", "fide_id": 4100018}})
        feed(hall, board.start() + board.play() + board.play())
    pairings = parse_pairings(PAIRINGS)
    text = round_pgn(hall, "3", pairings, event="Club night", site="Hall")
    for games in (read_games(text), pgn_extract_games(tmp_path, text)):
        assert [g.headers["Round"] for g in games] == ["3.1", "3.2", "3.3", "3.4"]
        assert [g.headers["White"] for g in games] == [written or "Anna Smith", "Carl Berg",
                                                       "Eve Stone", "Gus Hart"]
        assert [g.headers["Result"] for g in games] == ["*"] * 4
        assert games[0].headers["Event"] == (written or "Club night")
        assert games[0].headers["Site"] == (written or "Hall")
        assert games[0].headers["WhiteFideId"] == "1503014"  # the pairing's: the board's is no id
        assert games[0].headers["BlackFideId"] == "4100018"
        assert [len(list(g.mainline_moves())) for g in games] == [2, 2, 0, 0]


def test_the_round_is_what_a_render_from_scratch_gives_at_every_step() -> None:
    """The station keeps each game's text between requests: whatever changes (moves, a
    result, names and tags, a new game on a board, pairings), the round is exactly what a
    station that heard the same messages renders the first time."""
    pairings = parse_pairings(PAIRINGS)
    boards = [ContractBoard(f"b{n}", game_from("stockfish-300.pgn", 20 + n), game=f"g{n}",
                            board_no=n, tags={"round": "3", "board_no": n}) for n in (1, 2, 3)]
    heard: list[Message] = []
    hall = Hall()

    def hear(messages: list[Message]) -> None:
        heard.extend(messages)
        feed(hall, messages)

    def check(pairings_now: list[Pairing]) -> None:
        fresh = Hall()
        feed(fresh, heard)
        assert round_pgn(hall, "3", pairings_now, "Club", "Hall") == \
            round_pgn(fresh, "3", pairings_now, "Club", "Hall")

    for board in boards:
        hear(board.start())
    changes: list[Callable[[], None]] = [lambda: None]
    for step in range(30):  # moves on one board at a time
        changes.append(lambda board=boards[step % 3]: hear([] if board.finished else board.play()))

    def rename() -> None:
        boards[0].tags["white"] = {"name": "Zoe Quinn", "fide_id": "1503015"}
        hear([boards[0].state()])

    def draw() -> None:
        boards[1].result = "1/2-1/2"
        hear([boards[1].state()])

    def retag() -> None:
        boards[0].tags["event"] = "Club night"
        hear([boards[0].state()])

    changes += [rename, draw, retag, lambda: hear(boards[2].new_game(
        game_from("stockfish-300.pgn", 40), "g3b")), lambda: hear(boards[2].play())]
    for number, change in enumerate(changes):
        change()
        check(pairings if number > len(changes) // 2 else [])
        check(pairings if number > len(changes) // 2 else [])  # the second time: from the cache


def test_a_poll_of_an_unchanged_round_renders_no_game_again() -> None:
    """Polls come every few seconds and each ran on the station's loop: a round whose games
    did not change costs a small part of its first rendering, and one move re-renders one
    game (CPU time, measured in the same run)."""
    hall = Hall()
    boards = []
    for n in range(1, 41):
        board = ContractBoard(f"b{n:02d}", game_from("stockfish-300.pgn", n), game=f"g{n}",
                              board_no=n, publish_pgn=False, tags={"round": "1", "board_no": n})
        messages = board.start()
        while not board.finished and board.ply < 40:
            messages += board.play()
        feed(hall, messages)
        boards.append(board)

    def cost() -> tuple[float, str]:
        start = time.process_time()
        text = round_pgn(hall, "1", [])
        return time.process_time() - start, text

    first, text = cost()
    again, same = cost()
    feed(hall, boards[0].play() if not boards[0].finished else boards[0].new_game(
        game_from("stockfish-300.pgn", 60), "g1b"))
    moved, changed = cost()
    assert same == text and changed != text
    assert again < first / 20, (first, again)
    assert moved < first / 5, (first, moved)


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ("round,board,white\n1,1,A\n", "no black column"),
    ("round,board,white,black,colour\n", "unknown column 'colour'"),
    ("round,board,white,black\n", "no pairing after the header"),
    ("round,board,white,black\n1,1,A,B\nx,2,C,D\n", "pairings:3: round 'x'"),
    ("round,board,white,black\n1,1,A,B\n1,0,C,D\n", "pairings:3: board '0'"),
    ("round,board,white,black\n1,1,A,B\n1,2,,D\n", "pairings:3: no white player"),
    ("round,board,white,black\n\n1,1,A,B\n1,1,C,D\n", "pairings:4: round 1 board 1 is already on line 3"),
    ("round,board,white,black,white_fide_id\n1,1,A,B,12ab\n", "pairings:2: white FIDE id '12ab'"),
    ("round,board,white,black,board_id\n1,1,A,B,b/1\n", "pairings:2: board_id 'b/1'"),
    ("round,board,white,black\n1,1,A,B,extra\n", "pairings:2: 5 fields"),
    ('round,board,white,black\n1,1,"A ""the"" B",C\n', "pairings:2: white player"),
    # what no PGN tag may hold (the project's tag rules): control characters, over 255
    ("round,board,white,black\n1,1,Anna\tSmith,B\n", "pairings:2: white player: tag White: the value 'Anna\\tSmith'"),
    ("round,board,white,black\n1,1,A,Ben\x0bJones\n", "pairings:2: black player"),
    ("round,board,white,black\n1,1,A,Ben\x00\n", "non-printing character '\\x00'"),
    ("round,board,white,black\n1,1,A,Ben\u2028Jones\n", "pairings:2: black player"),
    ("round,board,white,black\n1,1," + "A" * 256 + ",B\n",
     "pairings:2: white player: tag White: the value has 256 characters"),
])
def test_bad_pairings_name_the_line(text: str, message: str) -> None:
    with pytest.raises(PairingsError) as error:
        parse_pairings(text)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_pairings_columns_in_any_order_and_spelling() -> None:
    text = ("\ufeffBlack, White ,Board,Round,BlackFideId,White FIDE id,Board ID\r\n"
            "Ben,Anna,2,1,,1503014,hall-2\r\n\r\nDora,Carl,1,1,4100018,,\r\n")
    pairings = parse_pairings(text)
    assert [(p.board_no, p.white, p.black, p.white_fide_id, p.black_fide_id, p.board_id)
            for p in pairings] == [(1, "Carl", "Dora", None, "4100018", None),
                                   (2, "Anna", "Ben", "1503014", None, "hall-2")]


class FakeLichess(BaseHTTPRequestHandler):
    """Answers like POST /api/broadcast/round/{id}/push: {"games": [...]} per game."""
    received: list[tuple[str, dict[str, str], str]] = []
    token = "lip_secret"

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
        FakeLichess.received.append((self.path, dict(self.headers), body))
        if self.headers.get("Authorization") != f"Bearer {self.token}":
            self._answer(401, {"error": "No such token"})
            return
        if not self.headers.get("Content-Type", "").startswith("text/plain"):
            self._answer(400, {"error": "text/plain expected"})
            return
        games: list[dict[str, Any]] = []
        for game in read_games(body):
            tags = dict(game.headers)
            if tags.get("White") == "?":
                games.append({"tags": tags, "error": "no player"})
            else:
                games.append({"tags": tags, "moves": len(list(game.mainline_moves()))})
        self._answer(200, {"games": games})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_lichess():  # type: ignore[no-untyped-def]
    FakeLichess.received = []
    server = HTTPServer(("127.0.0.1", 0), FakeLichess)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_push_sends_the_whole_round_with_the_token(fake_lichess: str) -> None:
    hall, boards = round_of_four([4, 6, 8], [True, True, True])
    pairings = parse_pairings(PAIRINGS)
    url = f"{fake_lichess}/api/broadcast/round/AbCdEfGh/push"

    async def scenario() -> Pusher:
        pusher = Pusher(url, FakeLichess.token, "3", lambda: round_pgn(hall, "3", pairings),
                        interval_s=0.0)
        pusher.changed("3")
        await pusher.drain()
        pusher.changed("3")      # nothing changed: no second push of the same text
        await pusher.drain()
        pusher.changed("2")      # another round: not this pusher's
        await pusher.drain()
        feed(hall, boards[0].play())
        pusher.changed("3")
        await pusher.drain()
        return pusher

    pusher = asyncio.run(scenario())
    assert [path for path, _, _ in FakeLichess.received] == ["/api/broadcast/round/AbCdEfGh/push"] * 2
    _, headers, body = FakeLichess.received[-1]
    assert headers["Authorization"] == "Bearer lip_secret"
    assert headers["Content-Type"].startswith("text/plain")
    assert body == round_pgn(hall, "3", pairings)
    assert len(read_games(body)) == 4  # the whole round, also the boards that did not change
    assert pusher.status.pushes == 2 and pusher.status.failures == 0
    assert pusher.status.game_errors == []


def test_push_refused_is_reported_and_retried(fake_lichess: str) -> None:
    hall, _ = round_of_four([2, 2, 2], [True, True, True])
    url = f"{fake_lichess}/api/broadcast/round/x/push"

    async def scenario() -> Pusher:
        pusher = Pusher(url, "wrong", "3", lambda: round_pgn(hall, "3", []), interval_s=0.01)
        pusher.changed("3")
        while len(FakeLichess.received) < 2:  # retried after the interval
            await asyncio.sleep(0.01)
        pusher.token = FakeLichess.token
        while pusher.status.pushes == 0:
            await asyncio.sleep(0.01)
        await pusher.drain()
        return pusher

    pusher = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert pusher.status.failures >= 2
    assert pusher.status.pushes == 1 and pusher.status.last_ok
    assert "HTTP 401" not in (pusher.status.last_error or "")
