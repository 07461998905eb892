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
from typing import Any

import chess
import chess.pgn
import pytest

from board_ctl.archive import Archive
from board_ctl.core import events as ev
from board_ctl.core.effects import Colour
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import read_journal
from board_ctl.sensorlog import StartInfo, load_sensor_log
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
    missing, extra = START & ~ON_THE_BOARD, ON_THE_BOARD & ~START
    assert lights(board) == {**{sq: Colour.GREEN for sq in chess.scan_forward(missing)},
                             **{sq: Colour.RED for sq in chess.scan_forward(extra)}}
    feed(other, [ev.Snapshot(1.0, START), *events(FOOLS_MATE, t=2.0), ev.Tick(9.0)])
    assert other.session is not None and other.session.game_id != game_id
    assert pgn_moves(other.session.record.pgn_text()) == ["f3", "e5", "g4", "Qh4#"]
    other.close()
    assert Archive(tmp_path / "data").unfinished(DEMO) is None
    entry = Archive(tmp_path / "data").unfinished(HAND)
    assert entry is not None and entry.game_id == game_id

    again, _, view = service(tmp_path, HAND)
    assert said(view, f"game {game_id} was left unfinished on this board", "6 plies")
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


@pytest.mark.slow  # four board-ctl processes
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


# ---------------------------------------------------------------- against the computer


class ScriptedComputer:
    """The service's opponent, its engine replaced by a list of moves: asked when its turn
    comes (as board_ctl.opponent.Opponent is), it answers when the test hands the service
    an EngineReply. What the service does with the answer is the code under test."""

    label = "Scripted"
    failed: str | None = None  # an engine never given up on

    def __init__(self, side: chess.Color, moves: list[str]) -> None:
        from board_ctl.opponent.opponent import OpponentSettings

        self.settings = OpponentSettings(
            None, "black" if side == chess.BLACK else "white")  # type: ignore[arg-type]
        self.side = side
        self.moves = [chess.Move.from_uci(m) for m in moves]
        self.deliver: Any = None
        self.scale = 1.0
        self.asked: Any = None  # the position it was asked about, until it answers

    def start_info(self, start: StartInfo) -> StartInfo:
        import dataclasses

        return dataclasses.replace(start, remote=self.side)

    def update(self, referee: Any, game: int) -> None:
        remote = referee.remote
        if (referee.result is None and remote.execution is None
                and referee.board.turn == self.side):
            self.asked = referee.board.copy()
        else:
            self.asked = None

    def reply(self) -> Any:
        from board_ctl.opponent.messages import EngineReply, Think

        assert self.asked is not None, "not asked"
        move = self.moves.pop(0)
        return EngineReply(None, Think(None, self.asked, None), move)  # type: ignore[arg-type]

    def answer(self, reply: Any, referee: Any, game: int) -> tuple[Any, str | None]:
        self.asked = None
        return ev.OpponentMoved(0.0, reply.move), f"{self.label} plays {reply.move.uci()}"

    def close(self) -> None: ...


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_resumed_game_against_the_computer_keeps_the_boards_time(tmp_path: Path) -> None:
    """The service restarted while the computer's move was due, its start-up slow (4 s
    between its making and the board's first report, as under load). The computer's
    answer was stamped with the service's start-up time, ahead of the board's: every
    board event after it was pushed to that one instant, the hands' durations and order
    lost (a piece lifted and put down in no time), until the board's time caught up.
    The resumed game must take the board's events at the board's times."""
    clock = Clock()

    def start(computer: ScriptedComputer) -> tuple[Service, RecordingView]:
        view = RecordingView()
        svc = Service(FakeBoard(identity=HAND), profile=PROFILES["fide"], start=StartInfo(),
                      namer=OutputNamer(tmp_path / "out"), options=RunOptions(), view=view,
                      archive=Archive(tmp_path / "data"),
                      opponent=computer,  # type: ignore[arg-type]
                      clock=clock)
        return svc, view

    computer = ScriptedComputer(chess.BLACK, ["e7e5", "b8c6"])
    svc, _ = start(computer)
    svc.open()
    feed(svc, [ev.Snapshot(0.5, START), ev.Lifted(1.0, chess.E2), ev.Placed(1.4, chess.E4)])
    for k in range(1, 30):  # e4 released: complete after a second, the computer's turn
        clock.now += 0.1
        feed(svc, [ev.Tick(1.4 + 0.1 * k)])
    assert computer.asked is not None  # the computer thinks; the power goes
    session = svc.session
    assert session is not None and session.journal is not None
    svc._release()
    session.sensor_log.file.close()
    session.journal.file.close()

    computer = ScriptedComputer(chess.BLACK, ["e7e5", "b8c6"])
    svc, view = start(computer)
    made = clock.now
    clock.now += 4.0  # a slow start: the board answers 4 s after the service was made
    svc.open()
    base = clock.now - made  # the board's link time now (its clock starts with the link)
    if computer.asked is not None:  # asked before the board said anything (the old code)
        svc.submit(computer.reply())
        svc.step(timeout=0)
    after_e4 = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    feed(svc, [ev.Snapshot(0.05, after_e4.occupied)])
    if computer.asked is not None:  # asked once the board showed the game (the new code)
        svc.submit(computer.reply())
        svc.step(timeout=0)
    assert any("resuming game" in m for m in view.all_messages)
    # the person makes the computer's e5 (lift e7, put it on e5), as the board stamps it
    hands = [ev.Lifted(0.6, chess.E7), ev.Placed(1.1, chess.E5)]
    for k, event in enumerate(hands):
        clock.now = made + base + event.t
        feed(svc, [event])
    clock.now += 2.0
    feed(svc, [ev.Tick(3.1)])
    assert svc.session is not None
    taken = [e for e in load_sensor_log(svc.session.files.sensor).events
             if isinstance(e, (ev.Lifted, ev.Placed))][-2:]
    assert [type(e) for e in taken] == [ev.Lifted, ev.Placed]
    gap = taken[1].t - taken[0].t
    assert gap == pytest.approx(0.5, abs=0.01), (
        f"the lift and the placement of e5 taken {gap:.3f} s apart, not the board's 0.5 s")
    assert [m.san for m in svc.session.record.moves] == ["e4", "e5"]
    svc.close()
