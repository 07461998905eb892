"""A game left unfinished resumes only on the board it was played on, and only when that
board shows its position: set up in the start position instead, the board abandons it
and plays a new game; anywhere else, the LEDs show the game's position to set up and the
console says both ways on. Another board (the demo's emulator after a hand board, or the
other way round) never resumes it, nor is merged into it. `board-ctl games --abandon`
ends one without the board."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.archive import Archive
from board_ctl.core import events as ev
from board_ctl.core.effects import Colour
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import read_journal
from board_ctl.sensorlog import StartInfo
from board_ctl.service.game import OutputNamer
from board_ctl.service.service import RunOptions, Service
from script import events
from servicekit import ROOT, FakeBoard, RecordingView, child_env, pgn_moves
from test_service_loop import FOOLS_MATE, START, feed

SCHOLARS = "-e2 +e4 Cw -e7 +e5 Cb -f1 +c4 Cw -b8 +c6 Cb -d1 +h5 Cw -g8 +f6 Cb"
SCHOLARS_SAN = ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6"]
ON_THE_BOARD = chess.Board(
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4").occupied
MATE = "-h5 -f7 +f7 Cw"  # Qxf7#
HAND, DEMO = "board emulator-1234", "board emulator (built in)"


def service(tmp_path: Path, identity: str) -> tuple[Service, FakeBoard, RecordingView]:
    board, view = FakeBoard(identity=identity), RecordingView()
    svc = Service(board, profile=PROFILES["fide"], start=StartInfo(),
                  namer=OutputNamer(tmp_path / "out"), options=RunOptions(),
                  view=view, archive=Archive(tmp_path / "data"))
    svc.open()
    return svc, board, view


def stopped_half_way(tmp_path: Path, identity: str = HAND) -> str:
    """Six moves of the Scholar's mate on a board, then the service stopped (Ctrl-C):
    the game stays unfinished. Its id."""
    svc, _, _ = service(tmp_path, identity)
    feed(svc, [ev.Snapshot(0.5, START), *events(SCHOLARS)])
    assert svc.session is not None
    game_id = svc.session.game_id
    svc.request_stop()
    svc.step(timeout=0)
    svc.close()
    assert not read_journal(journal(tmp_path, game_id)).finished
    return game_id


def journal(tmp_path: Path, game_id: str) -> Path:
    return tmp_path / "data" / "games" / game_id / "journal.jsonl"


def said(view: RecordingView, *words: str) -> list[str]:
    return [m for m in view.all_messages if all(w in m for w in words)]


def lights(board: FakeBoard) -> dict[int, Colour]:
    return {light.square: light.colour for light in board.frames[-1].squares}


def test_a_game_resumes_on_its_own_board_only(tmp_path: Path) -> None:
    """Stopped on one board, the game is not resumed on another, even one showing its
    position: that board plays its own game. Back on its board it goes on."""
    game_id = stopped_half_way(tmp_path, HAND)

    other, board, view = service(tmp_path, DEMO)
    assert not said(view, game_id)  # not even offered
    feed(other, [ev.Snapshot(0.5, ON_THE_BOARD)])
    assert other.session is None and not said(view, "resuming")
    assert lights(board) == {**{sq: Colour.GREEN for sq in chess.scan_forward(START & ~ON_THE_BOARD)},
                             **{sq: Colour.RED for sq in chess.scan_forward(ON_THE_BOARD & ~START)}}
    feed(other, [ev.Snapshot(1.0, START), *events(FOOLS_MATE, t=2.0), ev.Tick(9.0)])
    assert other.session is not None and other.session.game_id != game_id
    assert pgn_moves(other.session.record.pgn_text()) == ["f3", "e5", "g4", "Qh4#"]
    other.close()
    assert Archive(tmp_path / "data").unfinished(DEMO) is None
    entry = Archive(tmp_path / "data").unfinished(HAND)
    assert entry is not None and entry.game_id == game_id

    again, _, view = service(tmp_path, HAND)
    assert said(view, f"game {game_id} was left unfinished on this board", "6 moves")
    feed(again, [ev.Snapshot(0.0, ON_THE_BOARD), *events(MATE, t=0.0)])
    assert said(view, f"resuming game {game_id}", "shows its position")
    assert again.session is not None and again.session.game_id == game_id
    assert pgn_moves(again.session.record.pgn_text()) == SCHOLARS_SAN + ["Qxf7#"]
    again.close()


def test_the_start_position_set_up_abandons_it_and_starts_a_new_game(tmp_path: Path) -> None:
    """The player set the pieces up again: he wants a new game, not the old one. The old
    one is abandoned (its moves kept, never resumed again) and never merged into the
    new one."""
    game_id = stopped_half_way(tmp_path)
    svc, board, view = service(tmp_path, HAND)
    feed(svc, [ev.Snapshot(0.5, START)])
    assert said(view, f"game {game_id} abandoned", "start position",
                f"board-ctl export {game_id}")
    assert svc.session is not None and svc.session.game_id != game_id
    assert board.frames[-1].status.white_to_move and not board.frames[-1].squares
    feed(svc, [*events(FOOLS_MATE, t=1.0), ev.Tick(9.0)])
    assert pgn_moves(svc.session.record.pgn_text()) == ["f3", "e5", "g4", "Qh4#"]
    svc.close()
    recovered = read_journal(journal(tmp_path, game_id))
    assert recovered.abandoned and recovered.finished and recovered.resumes == 0
    archive = Archive(tmp_path / "data")
    assert archive.unfinished(HAND) is None and archive.unfinished() is None
    old = chess.pgn.read_game(io.StringIO(archive.find(game_id).pgn_text()))
    assert old is not None and old.headers["Result"] == "*"
    assert pgn_moves(archive.find(game_id).pgn_text()) == SCHOLARS_SAN


def test_a_board_far_from_the_position_waits_and_the_leds_show_it(tmp_path: Path) -> None:
    """The pieces were put away: the game waits, the LEDs show where each piece goes,
    and the console says both ways on. Set up square by square, the game resumes only
    when its whole position stands (a half-made setup is no move)."""
    game_id = stopped_half_way(tmp_path)
    svc, board, view = service(tmp_path, HAND)
    feed(svc, [ev.Snapshot(0.5, 0)])  # an empty board
    assert svc.session is None
    (text,) = said(view, f"game {game_id} waits for its position")
    assert "as the LEDs show" in text and "start position for a new game" in text
    assert f"board-ctl games --abandon {game_id}" in text
    assert lights(board) == {sq: Colour.GREEN for sq in chess.scan_forward(ON_THE_BOARD)}
    assert svc.state().waiting == game_id
    squares = list(chess.scan_forward(ON_THE_BOARD))
    for n, square in enumerate(squares):
        feed(svc, [ev.Placed(1.0 + n * 0.2, square)])
        if n < len(squares) - 1:
            assert svc.session is None, f"resumed after {n + 1} pieces"
            assert square not in lights(board)  # that piece is there now
    assert said(view, f"resuming game {game_id}")
    assert svc.session is not None and svc.session.game_id == game_id
    feed(svc, events(MATE, t=20.0))
    assert pgn_moves(svc.session.record.pgn_text()) == SCHOLARS_SAN + ["Qxf7#"]
    svc.close()


def test_waiting_then_the_start_position_set_up_starts_a_new_game(tmp_path: Path) -> None:
    game_id = stopped_half_way(tmp_path)
    svc, _, view = service(tmp_path, HAND)
    feed(svc, [ev.Snapshot(0.5, 0)])
    feed(svc, [ev.Placed(1.0 + n * 0.1, sq) for n, sq in enumerate(chess.scan_forward(START))])
    assert said(view, f"game {game_id} abandoned")
    assert svc.session is not None and svc.session.game_id != game_id
    svc.close()


def test_a_move_made_while_the_service_was_away_is_recognised(tmp_path: Path) -> None:
    """At the board's first report, a position a move away is still the game's: the move
    made meanwhile (Nf3, pressed once the service is back) completes it."""
    game_id = stopped_half_way(tmp_path)
    svc, _, view = service(tmp_path, HAND)
    after = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/5N2/PPPP1PPP/RNB1K2R b KQkq - 5 4")
    feed(svc, [ev.Snapshot(0.0, after.occupied), *events("Cw", t=0.0)])
    assert said(view, f"resuming game {game_id}", "but for a few squares")
    assert svc.session is not None
    assert pgn_moves(svc.session.record.pgn_text()) == SCHOLARS_SAN + ["Nf3"]
    svc.close()


# ---------------------------------------------------------------- board-ctl games


def board_ctl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "board_ctl.cli", *args], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


def test_board_ctl_games_abandons_a_game(tmp_path: Path) -> None:
    game_id = stopped_half_way(tmp_path)
    data = str(tmp_path / "data")
    listed = board_ctl("games", "--data-dir", data, cwd=tmp_path)
    assert listed.returncode == 0 and "* (in progress)" in listed.stdout
    assert "--abandon" in listed.stdout  # the way out is said where the game is listed
    done = board_ctl("games", "--data-dir", data, "--abandon", game_id[:8], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"game {game_id} abandoned: its 6 plies stay in the archive "
                           f"(`board-ctl export {game_id}`); no start resumes it\n")
    assert "* (abandoned)" in board_ctl("games", "--data-dir", data, cwd=tmp_path).stdout
    assert Archive(tmp_path / "data").unfinished(HAND) is None
    again = board_ctl("games", "--data-dir", data, "--abandon", game_id, cwd=tmp_path)
    assert (again.returncode, again.stderr) == (
        2, f"board-ctl games: game {game_id} is abandoned already: nothing to abandon\n")
    exported = board_ctl("export", game_id, "--data-dir", data, cwd=tmp_path)
    assert pgn_moves(exported.stdout) == SCHOLARS_SAN
    # and the next start on its board plays a new game at once
    svc, _, view = service(tmp_path, HAND)
    assert not said(view, game_id)
    svc.close()


def test_board_ctl_games_will_not_abandon_under_a_running_service(tmp_path: Path) -> None:
    game_id = stopped_half_way(tmp_path)
    svc, _, _ = service(tmp_path, HAND)  # holds the data directory, the game held
    try:
        done = board_ctl("games", "--data-dir", str(tmp_path / "data"), "--abandon",
                         game_id, cwd=tmp_path)
    finally:
        svc.close()
    assert done.returncode == 1
    assert done.stderr.startswith(f"board-ctl games: the data directory {tmp_path / 'data'} "
                                  f"is already in use by pid ")
    assert done.stderr.count("\n") == 1 and "start position" in done.stderr
    assert not read_journal(journal(tmp_path, game_id)).finished


@pytest.mark.parametrize("command", [["games"], ["games", "--abandon", "x"], ["export"]])
def test_a_data_dir_that_does_not_exist_is_said(tmp_path: Path, command: list[str]) -> None:
    done = board_ctl(*command, "--data-dir", str(tmp_path / "typo"), cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"board-ctl {command[0]}: --data-dir {tmp_path / 'typo'}: no such "
                           f"directory (the data directory `board-ctl run --data-dir` "
                           f"wrote to)\n")


def test_no_such_game_to_abandon(tmp_path: Path) -> None:
    stopped_half_way(tmp_path)
    done = board_ctl("games", "--data-dir", str(tmp_path / "data"), "--abandon", "1999",
                     cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("board-ctl games: no game '1999'")


def test_the_games_list_shows_the_event_export_writes(tmp_path: Path) -> None:
    stopped_half_way(tmp_path)
    data = str(tmp_path / "data")
    row = board_ctl("games", "--data-dir", data, cwd=tmp_path).stdout.splitlines()[1]
    exported = chess.pgn.read_game(io.StringIO(board_ctl("export", "--data-dir", data,
                                                         cwd=tmp_path).stdout))
    assert exported is not None
    assert row.split()[1] == exported.headers["Event"] == "?"


assert ROOT.is_dir()
