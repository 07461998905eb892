"""The tournament hall end to end, as an organiser sets it up: Mosquitto with the shipped
config (passwords, ACL, persistence) on a free port; three boards, each `board-emulator`
playing a real game on a pty and `board-ctl run --mqtt` (the real publisher) against it;
`board-ctl arbiter` logged in to the broker as the ACL's arbiter user; an arbiter in
Chromium (Playwright). The pairings imported from a CSV become the boards' PGN tags,
moves appear live on the grid, a real illegal move's alert is acknowledged and the
board's journal says by whom, a result entered (and confirmed) ends the board's game in
its PGN and archive, a clock correction reaches the board, and the round's broadcast has
the three games in board order with [%clk], accepted by pgn-extract."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from board_ctl.simulate import eligible_plies, render_game, render_violation
from board_ctl.station.views import move_label
from brokerkit import Broker
from browserkit import browser, keep_screenshot  # noqa: F401 (a fixture)
from conftest import missing_tool
from hallkit import (
    ARBITER,
    ARBITER_PASSWORD,
    BoardProcess,
    StationProcess,
    press_times,
    print_logs,
    shifted,
    wait_until,
)
from servicekit import FAST, child_env, game_from

PGN_EXTRACT = shutil.which("pgn-extract") or shutil.which("pgn-extract", path="/usr/games")
SPEED = 8.0  # the emulators play their logs at 8x
HOLD = 6.0 * SPEED  # log s the boards stand in the start position (6 s): the pairings come first
SITE = "Town hall"  # each board's own: the station (no --site) leaves it
TIME_CONTROL = "5400+30"  # (the held boards' clocks run at 8x while the test acts)
PAIRINGS = ("round,board,white,black,white_fide_id,black_fide_id\n"
            "1,1,\"Smith, Anna\",\"Jones, Ben\",1503014,\n"
            "1,2,Carl Berg,Dora Lind,,2016192\n"
            "1,3,Eve Stone,Finn Moss,,\n")
PLAYERS = {"b01": ("Smith, Anna", "Jones, Ben"), "b02": ("Carl Berg", "Dora Lind"),
           "b03": ("Eve Stone", "Finn Moss")}


def labels(game: chess.pgn.Game) -> list[str]:
    """What the grid shows as each ply's last move: `1. e4`, `1... e5`, ..."""
    board = game.board()
    out = []
    for ply, move in enumerate(game.mainline_moves(), start=1):
        out.append(move_label(ply, board.san(move)))
        board.push(move)
    return out


def illegal_move_game() -> tuple[Any, int]:
    """A Stockfish game rendered with one illegal move (a piece put where it cannot go,
    the clock pressed), between plies 8 and 16; the index of that ply."""
    for index in range(60, 120):
        game = game_from("stockfish-300.pgn", index)
        plies = [p for p in eligible_plies(game, "illegal-move", FAST) if 8 <= p <= 16]
        if plies:
            return render_violation(game, "illegal-move", seed=index, ply=plies[0],
                                    style=FAST), plies[0]
    raise AssertionError("no game to stage an illegal move in")


def export(board: BoardProcess, tmp: Path) -> chess.pgn.Game:
    """The board's game as `board-ctl export` rebuilds it from the archive's journal."""
    done = subprocess.run([sys.executable, "-m", "board_ctl.cli", "export", "--data-dir",
                           str(board.data)], capture_output=True, text=True, env=child_env(),
                          timeout=60, cwd=tmp)
    assert done.returncode == 0, done.stderr
    game = chess.pgn.read_game(io.StringIO(done.stdout))
    assert game is not None
    return game


@pytest.mark.slow
def test_the_hall_end_to_end(tmp_path: Path, browser: Any) -> None:
    from playwright.sync_api import expect

    users = {"arbiter": "arbiter-secret", "b01": "b01-secret", "b02": "b02-secret",
             "b03": "b03-secret"}
    broker = Broker(tmp_path / "broker", users).start()
    station: StationProcess | None = None
    boards: dict[str, BoardProcess] = {}
    try:
        station = StationProcess(broker, tmp_path / "station", "--event", "Club night")

        # The arbiter signs in and imports the round's pairings before the boards start.
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{station.url}/arbiter")
        expect(page).to_have_url(re.compile(r"/login"))
        page.fill("input[name=user]", ARBITER)
        page.fill("input[name=password]", ARBITER_PASSWORD)
        page.click("button[type=submit]")
        expect(page).to_have_url(re.compile(r"/arbiter$"))
        csv = tmp_path / "round-1.csv"
        csv.write_text(PAIRINGS, encoding="utf-8")
        page.goto(f"{station.url}/arbiter/pairings")
        page.set_input_files("input[name=file]", str(csv))
        page.click("form.import button[type=submit]")
        expect(page.locator(".ok")).to_have_text("3 pairings imported.")

        # Board 1 plays the Opera game to its mate; board 2 stops to think at ply 20 (its
        # clocks to be corrected); board 3 makes an illegal move and holds it there.
        opera = game_from("classics.pgn", 0)
        clean = render_game(opera, seed=1, style=FAST)
        middle = game_from("stockfish-300.pgn", 50)
        paused = render_game(middle, seed=2, style=FAST)
        pause_at = press_times(paused, 19)[-1] + 0.5
        illegal, illegal_ply = illegal_move_game()
        illegal_at = press_times(illegal, illegal_ply)[0] + 0.5
        plan = {"b01": (clean, None), "b02": (paused, pause_at), "b03": (illegal, illegal_at)}
        page.goto(f"{station.url}/arbiter")
        for number, (board_id, (game, until)) in enumerate(plan.items(), start=1):
            hold_until = (until if until is not None else game.lines[-1]["t"]) + HOLD
            boards[board_id] = BoardProcess(
                broker, tmp_path / board_id, board_id, number, shifted(game, HOLD, until),
                speed=SPEED, until=hold_until + 100_000, time_control=TIME_CONTROL,
                site=SITE)

        def all_alive() -> None:
            for board in boards.values():
                board.alive()
            station.alive()  # type: ignore[union-attr]

        # The pairings reach every board before its first move: names on the grid.
        for board_id, (white, black) in PLAYERS.items():
            card = page.locator(f"#card-{board_id}")
            expect(card.locator(".side.white .name")).to_have_text(white, timeout=20_000)
            expect(card.locator(".side.black .name")).to_have_text(black)

        # Moves appear live on board 1's card, in the game's order.
        truth = labels(opera)
        seen: list[str] = []
        last = page.locator("#card-b01 .last")
        deadline = time.monotonic() + 90
        while truth[-1] not in seen:
            text = last.inner_text()
            if text in truth and (not seen or seen[-1] != text):
                seen.append(text)
            assert time.monotonic() < deadline, f"the grid showed only {seen}"
            all_alive()
            time.sleep(0.05)
        assert [truth.index(t) for t in seen] == sorted(truth.index(t) for t in seen)
        assert len(seen) >= 5, seen  # seen move by move, not only the end
        expect(page.locator("#card-b01 .result")).to_have_text(re.compile("1-0"))

        # Board 3's illegal move: the card alerts; the arbiter acknowledges it.
        card3 = page.locator("#card-b03")
        expect(card3).to_have_class(re.compile(r"\balerting\b"), timeout=30_000)
        expect(card3.locator(".alertbar strong")).to_have_text("Illegal move")
        keep_screenshot(page, tmp_path / "hall-alert.png")
        card3.locator("button[data-act=ack]").click()
        expect(card3.locator(".ackby")).to_have_text(f"seen by {ARBITER}")
        acks = wait_until(lambda: [line for line in boards["b03"].journal()
                                   if line.get("kind") == "ack"], 15, "the ack in the journal")
        assert [(a["code"], a["by"]) for a in acks] == [("illegal-move", ARBITER)]
        # the station's journal: who sent it, for which game, and the board's answer
        game3 = boards["b03"].game_ids()[-1]
        sent = [e for e in station.actions() if e["kind"] == "command" and e["command"] == "ack"]
        assert [(e["user"], e["board"], e["game"]) for e in sent] == [(ARBITER, "b03", game3)]
        replies = wait_until(lambda: [e for e in station.actions() if e["kind"] == "reply"
                                      and e["id"] == sent[0]["id"]], 15, "the board's reply")
        assert [(e["ok"], e["game"]) for e in replies] == [(True, game3)]

        # ... and gives the game to Black, with the confirmation.
        card3.locator("button[data-act=result]").click()
        dialog = page.locator("#result-dialog")
        dialog.locator("input[value='0-1']").check()
        dialog.locator("input[name=reason]").fill("second illegal move")
        dialog.locator("button[data-act=next]").click()
        expect(dialog.locator("[data-field=confirm]")).to_contain_text("to 0-1?")
        assert station.boards()["b03"]["result"] == "*"  # nothing sent before it is confirmed
        dialog.locator("button[data-act=confirm]").click()
        expect(card3.locator(".result")).to_have_text(re.compile("0-1"), timeout=15_000)
        pgn3 = wait_until(boards["b03"].pgn_files, 15, "board 3's PGN", all_alive)
        written = chess.pgn.read_game(io.StringIO(pgn3[0].read_text(encoding="utf-8")))
        assert written is not None
        assert written.headers["Result"] == "0-1"
        assert written.headers["Termination"] == "adjudication"
        archived = export(boards["b03"], tmp_path)
        assert archived.headers["Result"] == "0-1"
        assert archived.headers["Termination"] == "adjudication"

        # Board 2's clocks corrected from its page.
        page.goto(f"{station.url}/arbiter/board/b02")
        expect(page.locator("#moves")).to_contain_text(labels(middle)[19].split(" ")[-1])
        form = page.locator("#clock-form")
        form.locator("input[name=white]").fill("1:10:00")
        form.locator("input[name=black]").fill("1:05:30")
        form.locator("button[type=submit]").click()
        set_clocks = wait_until(lambda: [line for line in boards["b02"].journal()
                                         if line.get("ev") == "set-clocks"], 15,
                                "the correction in board 2's journal", all_alive)
        assert [(c["white"], c["black"], c["by"]) for c in set_clocks] == \
            [(4200.0, 3930.0, ARBITER)]
        expect(page.locator("#clock-history")).to_contain_text("1:05:30")

        def corrected() -> bool:
            clock = station.boards()["b02"]["clock"]  # type: ignore[union-attr]
            return clock is not None and clock["white_ms"] <= 4_200_000 and \
                clock["black_ms"] <= 3_930_000 and clock["white_ms"] > 4_100_000
        wait_until(corrected, 15, "the board's state with the new clocks")
        keep_screenshot(page, tmp_path / "hall-board.png")

        # The pairings are the boards' PGN tags.
        for number, board_id in enumerate(PLAYERS, start=1):
            tags = export(boards[board_id], tmp_path).headers
            assert (tags["White"], tags["Black"]) == PLAYERS[board_id]
            assert (tags["Round"], tags["Board"], tags["Event"], tags["Site"]) == (
                "1", str(number), "Club night", SITE)
        assert export(boards["b01"], tmp_path).headers.get("WhiteFideId") == "1503014"
        assert export(boards["b02"], tmp_path).headers.get("BlackFideId") == "2016192"
        written1 = chess.pgn.read_game(io.StringIO(
            wait_until(boards["b01"].pgn_files, 15, "board 1's PGN")[0].read_text()))
        assert written1 is not None and written1.headers["White"] == "Smith, Anna"
        assert written1.headers["Result"] == "1-0"
        assert [m.uci() for m in written1.mainline_moves()] == \
            [m.uci() for m in opera.mainline_moves()]

        # The round's broadcast: the three games in board order, every move with [%clk].
        import httpx2 as httpx
        text = httpx.get(f"{station.url}/broadcast/round-1/games.pgn", timeout=10).text
        games = []
        stream = io.StringIO(text)
        while (game := chess.pgn.read_game(stream)) is not None:
            games.append(game)
        assert [g.headers["Round"] for g in games] == ["1.1", "1.2", "1.3"]
        assert [(g.headers["White"], g.headers["Black"]) for g in games] == list(PLAYERS.values())
        assert [g.headers["Result"] for g in games] == ["1-0", "*", "0-1"]
        assert [m.uci() for m in games[0].mainline_moves()] == \
            [m.uci() for m in opera.mainline_moves()]
        assert len(list(games[1].mainline_moves())) >= 20
        for game in games:
            nodes = list(game.mainline())
            assert nodes and all(node.clock() is not None for node in nodes)
        if not PGN_EXTRACT:
            missing_tool("pgn-extract is not installed (Debian package pgn-extract)")
        assert PGN_EXTRACT is not None
        broadcast = tmp_path / "round-1.pgn"
        broadcast.write_text(text, encoding="utf-8")
        checked = subprocess.run([PGN_EXTRACT, "-s", "-o", str(tmp_path / "checked.pgn"),
                                  str(broadcast)], capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0 and checked.stderr.strip() == "", checked.stderr
        assert (tmp_path / "checked.pgn").read_text().count("[Event ") == 3

        page.goto(f"{station.url}/arbiter")
        expect(page.locator("#card-b03 .result")).to_have_text(re.compile("0-1"))
        keep_screenshot(page, tmp_path / "hall-grid.png")
        page.close()
    except BaseException:
        print_logs(*([station.log_path] if station is not None else []),
                   *(b.log_path for b in boards.values()),
                   *(b.emulator.stderr_path for b in boards.values()))
        raise
    finally:
        if station is not None:
            station.stop()
        for board in boards.values():
            board.stop()
        broker.stop()
