"""Games the station does not have whole: moves that never came (a broker killed before it
passed on what it had acknowledged, a station whose queue overflowed while it was away),
a game its board left without the station seeing it end. Such a game is *catching up*:
the pages and the broadcast never show it complete; it is filled from the board's
retained PGN (parsed once, and at most once a second a board, whatever a board sends),
or the board is asked for it again (`cmd/resend`, sent by the station only), less and
less often."""

from __future__ import annotations

import io
import json
from pathlib import Path

import chess
import chess.pgn
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.station import model as station_model
from board_ctl.station.broadcast import round_pgn
from board_ctl.station.model import (
    PGN_PARSE_EVERY_MS,
    RESEND_AFTER_MS,
    RESEND_AT_ONCE,
    Hall,
)
from board_ctl.station.station import Station
from board_ctl.station.views import card, detail
from servicekit import GAMES
from stationkit import ContractBoard, Message

NOW = 1_796_065_300_000
_GAMES: list[chess.pgn.Game] = []


def corpus_game(index: int) -> chess.pgn.Game:
    """One of the corpus's first 40 games (stockfish-300.pgn, read once)."""
    if not _GAMES:
        with open(GAMES / "stockfish-300.pgn", encoding="utf-8") as stream:
            while len(_GAMES) < 40 and (game := chess.pgn.read_game(stream)) is not None:
                _GAMES.append(game)
    return _GAMES[index]


def board_of(index: int, board: str = "b01", **kw: object) -> ContractBoard:
    return ContractBoard(board, corpus_game(index), tags={"round": "1", "board_no": 1},
                         **kw)  # type: ignore[arg-type]


def feed(hall: Hall, messages: list[Message], now: int = NOW) -> None:
    for m in messages:
        hall.apply(m.topic, m.payload, now)


def kind(message: Message) -> str:
    return message.topic.rsplit("/", 1)[1]


def broadcast_game(hall: Hall) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(round_pgn(hall, "1", [])))
    assert game is not None
    return game


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, 39), data=st.data())
def test_a_game_missing_moves_is_catching_up_and_never_shown_complete(
        index: int, data: st.DataObject) -> None:
    """Any moves of a real game lost on the way (its PGN too, so nothing fills them): the
    game is catching up, its page says how many moves are to come, the broadcast gives
    the moves up to the first gap and no result; the moves sent again make it whole."""
    board = board_of(index, publish_pgn=False)
    played = board.start()
    while not board.finished:
        played += board.play()
    moves = [m for m in played if kind(m) == "move"]
    lost = data.draw(st.sets(st.integers(0, len(moves) - 1), min_size=1, max_size=len(moves)))
    hall = Hall()
    feed(hall, [m for m in played if m not in [moves[i] for i in lost]])
    game = hall.boards["b01"].game
    assert game is not None
    first_gap = min(lost)
    assert game.catching_up and game.missing == len(moves) - first_gap
    view = detail(hall.boards["b01"], arbiter=True)
    assert view["catching_up"] and view["missing_moves"] == len(moves) - first_gap
    assert card(hall.boards["b01"], arbiter=False)["catching_up"]
    shown = broadcast_game(hall)
    assert shown.headers["Result"] == "*" != board.result
    assert len(list(shown.mainline_moves())) == first_gap
    feed(hall, [moves[i] for i in sorted(lost)], NOW + 5_000)  # sent again
    assert not game.catching_up and game.missing == 0
    shown = broadcast_game(hall)
    assert shown.headers["Result"] == board.result
    assert [m.uci() for m in shown.mainline_moves()] == [m.uci() for m in board.moves]


def test_a_gap_in_the_current_game_is_filled_from_the_retained_pgn() -> None:
    board = board_of(3)
    played = board.start()
    for _ in range(30):
        played += board.play()
    hall = Hall()
    keep = [m for m in played if kind(m) != "pgn" and not (
        kind(m) == "move" and 5 <= json.loads(m.payload)["ply"] <= 12)]
    feed(hall, keep)
    game = hall.boards["b01"].game
    assert game is not None and game.catching_up and game.missing == 26
    feed(hall, [board.pgn()], NOW + 1)
    assert not game.catching_up
    assert [m.san for m in game.known_moves()] == board.sans


def test_a_game_its_board_left_without_its_end_is_catching_up_until_its_end_comes() -> None:
    board = board_of(4)
    played = board.start()
    for _ in range(10):
        played += board.play()
    first = board.game
    hall = Hall()
    feed(hall, played)
    board.t_ms += 60_000
    feed(hall, board.new_game(corpus_game(5), "20261130-200000-1"), NOW + 60_000)
    left = hall.boards["b01"].games[first]
    assert left.left and left.missing == 0 and left.catching_up  # its end never came
    assert hall.heal(NOW + 60_000).resend == []  # (the board may still send it)
    healing = hall.heal(NOW + 60_000 + RESEND_AFTER_MS)
    assert healing.resend == [("b01", first)]
    # the board publishes it again, ending with the state it left it in
    final = json.loads(played[-2].payload) if kind(played[-2]) == "state" else None
    assert final is not None
    final.update(phase="over", time=board.now_ms())
    feed(hall, [Message(board.topic("state"), json.dumps(final).encode(), False)],
         NOW + 70_000)
    assert not left.catching_up
    assert hall.boards["b01"].current == "20261130-200000-1"  # the grid stays on the new one


def test_heal_asks_first_after_a_while_then_less_and_less_often_and_only_online() -> None:
    boards = [board_of(i, f"b{i:02d}", publish_pgn=False) for i in range(RESEND_AT_ONCE + 4)]
    hall = Hall()
    for board in boards:
        played = board.start()
        for _ in range(6):
            played += board.play()
        feed(hall, [m for m in played if not (kind(m) == "move" and
                                              json.loads(m.payload)["ply"] == 2)])
    feed(hall, [boards[0].status(False)])
    assert hall.heal(NOW).resend == []  # (seen now: the boards' own publishing may fill it)
    asked = hall.heal(NOW + RESEND_AFTER_MS).resend
    assert len(asked) == RESEND_AT_ONCE and ("b00", boards[0].game) not in asked
    rest = hall.heal(NOW + RESEND_AFTER_MS + 1).resend
    assert len(rest) == len(boards) - 1 - RESEND_AT_ONCE
    # each game again after twice the wait, then four times...
    assert hall.heal(NOW + 2 * RESEND_AFTER_MS).resend == []
    assert len(hall.heal(NOW + 3 * RESEND_AFTER_MS + 1).resend) == RESEND_AT_ONCE
    feed(hall, [boards[0].status(True)])
    assert ("b00", boards[0].game) in hall.heal(NOW + 3 * RESEND_AFTER_MS + 2).resend


def test_a_board_cannot_make_the_station_parse_pgns_again_and_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A board whose state claims moves it never sends, and which sends a large PGN with
    every message: the station parses a PGN at most once a second for it."""
    parses = []
    read_game = chess.pgn.read_game

    def counted(stream: io.TextIOBase, **kw: object) -> chess.pgn.Game | None:
        parses.append(1)
        return read_game(stream, **kw)  # type: ignore[arg-type]

    board = board_of(6, publish_pgn=False)  # (reads the corpus: before the count starts)
    played = board.start()
    for _ in range(40):
        played += board.play()
    monkeypatch.setattr(station_model.chess.pgn, "read_game", counted)
    hall = Hall()
    feed(hall, [m for m in played if kind(m) != "move"])  # every state, no move
    game = hall.boards["b01"].game
    assert game is not None and game.missing == 40
    padding = "{" + "x" * 100_000 + "}"
    for n in range(200):
        junk = f'[Event "{n}"]\n\n1. e4 {padding} e5 *\n'.encode()
        hall.apply(board.topic("pgn"), junk, NOW + n)  # 200 PGNs within 0.2 s
        hall.apply(board.topic("state"), board.state().payload, NOW + n)
        hall.heal(NOW + n)
    assert len(parses) == 1
    hall.heal(NOW + PGN_PARSE_EVERY_MS + 200)
    assert len(parses) == 2
    assert game.catching_up


def test_the_station_asks_the_board_for_a_game_as_its_own_user(tmp_path: Path) -> None:
    """The station's heal sends `cmd/resend` for the game (journaled as the station's),
    and the page shows the game catching up until the moves come."""
    sent: list[tuple[str, str]] = []
    now = [NOW]
    station = Station(tmp_path, lambda topic, payload: sent.append((topic, payload)),
                      clock_ms=lambda: now[0])
    board = board_of(7, publish_pgn=False)
    played = board.start()
    for _ in range(8):
        played += board.play()
    dropped = [m for m in played if kind(m) == "move" and json.loads(m.payload)["ply"] == 3]
    for m in played:
        if m not in dropped:
            station.receive(m.topic, m.payload)
    station.heal()
    assert sent == []
    now[0] += RESEND_AFTER_MS
    station.heal()
    assert [topic for topic, _ in sent] == ["board-ctl/b01/cmd/resend"]
    payload = json.loads(sent[0][1])
    assert payload["game"] == board.game and payload["by"] == "station"
    assert station.journal("b01")[-1]["command"] == "resend"
    assert station.board_detail("b01", arbiter=False)["catching_up"]  # type: ignore[index]
    for m in played:  # the board publishes the game again
        station.receive(m.topic, m.payload)
    assert not station.board_detail("b01", arbiter=False)["catching_up"]  # type: ignore[index]
    station.close()


@pytest.mark.parametrize("board_sends_it_again", [False, True])
def test_a_game_filled_from_the_pgn_is_asked_for_again_for_the_alerts_lost_with_its_moves(
        board_sends_it_again: bool) -> None:
    """A stretch of a game lost on the way (a broker killed before it passed it on): two
    moves, and an alert raised and cleared between them. The PGN fills the moves, not the
    alert: the station asks the board for the game once, and then has its alert history
    whole. A board that publishes those moves again itself (it reconnected) is not asked."""
    board = board_of(8)
    played = board.start()
    for _ in range(10):
        played += board.play()
    lost = board.raise_alert("illegal-move", "white", ["e4"], "put the piece back")
    lost += board.clear_alert("illegal-move")
    lost += board.play() + board.play()
    came = board.play()
    hall = Hall()
    feed(hall, played)
    feed(hall, came, NOW + 500)
    now = NOW + 500 + PGN_PARSE_EVERY_MS
    healing = hall.heal(now)  # (the PGN read at most once a second)
    assert healing.filled == ["b01"] and healing.resend == []
    game = hall.boards["b01"].game
    assert game is not None and not game.catching_up  # the moves, from the PGN
    assert [m.san for m in game.known_moves()] == board.sans and game.alerts == []
    again = played + lost + came  # the game published again, by the board or when asked
    if board_sends_it_again:
        feed(hall, again, now + 1_000)
        assert hall.heal(now + RESEND_AFTER_MS).resend == []
    else:
        assert hall.heal(now + RESEND_AFTER_MS).resend == [("b01", board.game)]
        feed(hall, again, now + RESEND_AFTER_MS + 1_000)
    assert [(a.code, a.open) for a in game.alerts] == [("illegal-move", False)]
    assert hall.heal(now + 100 * RESEND_AFTER_MS).resend == []  # asked once
