"""The station heals a game it lost part of, end to end: a real board (`board-emulator` on
a pty, `board-ctl run --mqtt`), a real Mosquitto that drops what the station's queue
cannot hold while the station is away (`max_queued_messages`, 10 here, 100000 as
shipped: a long outage in a big hall), and the real `board-ctl arbiter`. The board plays
a game to mate and begins the next while the station is down; back, the station has the
first moves of the first game, nothing of its end, and the second game from the retained
messages. It shows the first game catching up, asks the board for it (`cmd/resend`,
journaled as the station's), and the board's journal makes it whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from board_ctl.simulate import render_game
from brokerkit import Broker
from hallkit import BoardProcess, StationProcess, wait_until
from servicekit import FAST, game_from
from test_hall_integration import log_text, set_up_again

USERS = {"arbiter": "arbiter-secret", "b1": "b1-secret"}


@pytest.mark.slow
def test_the_station_heals_a_game_its_broker_could_not_keep_for_it(tmp_path: Path) -> None:
    broker = Broker(tmp_path / "broker", USERS, extra="max_queued_messages 10\n").start()
    mate = render_game(game_from("classics.pgn", 7), seed=3, style=FAST)  # 21 plies, 1-0
    setup, t = set_up_again(mate.final_board(), mate.lines[-1]["t"] + 2.0)
    second = render_game(game_from("stockfish-300.pgn", 9), seed=4, style=FAST)
    shift = t + 3.0
    lines = mate.lines + setup + [{**line, "t": round(line["t"] + shift, 3)}
                                  for line in second.lines[:60]]
    station = StationProcess(broker, tmp_path / "station")
    station.stop()  # away: the broker queues for its session, up to 10 messages
    board = BoardProcess(broker, tmp_path / "b1", "b1", 1, log_text(lines), speed=8,
                         until=lines[-1]["t"] + 100_000, time_control="600+5")
    try:
        games = wait_until(lambda: len(board.game_ids()) == 2 and board.game_ids(), 90,
                           "the second game", board.alive)
        first, current = games
        journal = board.data / "games" / current / "journal.jsonl"
        wait_until(lambda: journal.read_text(encoding="utf-8").count('"kind":"move"') >= 4,
                   60, "moves of the second game", board.alive)
        station = StationProcess(broker, tmp_path / "station")

        def game_of(view: dict[str, Any], game: str) -> dict[str, Any] | None:
            return next((g for g in view.get("games", []) if g["game"] == game), None)

        seen = wait_until(lambda: (g := game_of(station.board("b1"), first)) and g, 30,
                          "the first game at the station", station.alive)
        # the broker dropped most of it: not shown complete until it is
        assert seen.get("catching_up") and seen["result"] == "*", seen
        healed = wait_until(lambda: (g := game_of(station.board("b1"), first)) and
                            g.get("catching_up") is False and g, 60, "the first game healed",
                            station.alive)
        assert (healed["result"], healed["plies"]) == ("1-0", len(mate.moves))
        view = station.board("b1")
        assert view["game"] == current  # the grid stays on the game being played
        asked = [a for a in station.actions() if a.get("command") == "resend"]
        assert asked and asked[0]["user"] == "station" and asked[0]["game"] == first
        replies = {a["id"]: a for a in station.actions() if a.get("kind") == "reply"}
        assert replies[asked[0]["id"]]["ok"] is True
    finally:
        station.stop()
        board.stop()
        broker.stop()
