"""What the LEDs wait for on the disk: one fdatasync of the journal per batch, a game's
first frame included. The next game's folder and journal are made ahead (and synced)
while nothing waits; a finished game's files are synced and closed, and a new folder's
name synced, once the board has been still for a moment. A power cut in between loses
nothing: the journal's records are on disk before they are shown, and a folder whose new
name did not reach the disk is found again under it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import chess
import pytest

from board_ctl import storage
from board_ctl.archive import JOURNAL, PREPARED, Archive
from board_ctl.core import events as ev
from board_ctl.core.effects import LedFrame
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import read_journal
from board_ctl.sensorlog import StartInfo, load_sensor_log
from board_ctl.service.game import OutputNamer
from board_ctl.service.service import DISK_IDLE, RunOptions, Service
from script import events
from servicekit import FakeBoard, RecordingView, pgn_moves
from test_service_loop import FOOLS_MATE, START, Clock, feed

SCHOLARS = "-e2 +e4 Cw -e7 +e5 Cb -f1 +c4 Cw -b8 +c6 Cb -d1 +h5 Cw -g8 +f6 Cb"
AFTER_NF6 = chess.Board(
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4").occupied
BOARD = "the board"


class DiskCalls:
    """Every sync and every file or folder made, in order, by this process (os's calls
    observed and passed through: the disk does the real work)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for name in ("fsync", "fdatasync", "rename", "replace"):
            monkeypatch.setattr(os, name, self._spy(name, getattr(os, name)))
        real_open, real_mkdir = os.open, os.mkdir

        def spied_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            if flags & os.O_CREAT and not os.path.exists(path):
                self.calls.append(f"create {os.path.basename(path)}")
            return real_open(path, flags, *args, **kwargs)

        def spied_mkdir(path: Any, *args: Any, **kwargs: Any) -> None:
            if not os.path.exists(path):
                self.calls.append(f"mkdir {os.path.basename(path)}")
            real_mkdir(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", spied_open)
        monkeypatch.setattr(os, "mkdir", spied_mkdir)

    def _spy(self, name: str, call: Any) -> Any:
        def spied(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return call(*args, **kwargs)
        return spied


class WatchingBoard(FakeBoard):
    """At every LED frame: the disk calls made since the last frame, and whether the
    journal of the game on show is on disk, under its own name."""

    def __init__(self, disk: DiskCalls, data: Path) -> None:
        super().__init__(identity=BOARD)
        self.disk, self.data = disk, data
        self.before: list[list[str]] = []  # each frame's calls since the previous one
        self.journals: list[Path | None] = []  # the newest game's journal at each frame

    def send_leds(self, frame: LedFrame) -> None:
        super().send_leds(frame)
        self.before.append(list(self.disk.calls))
        self.disk.calls.clear()
        found = sorted((self.data / "games").glob("*/" + JOURNAL))
        self.journals.append(found[-1] if found else None)


def service(tmp_path: Path, board: FakeBoard, clock: Clock) -> Service:
    svc = Service(board, profile=PROFILES["fide"], start=StartInfo(),
                  namer=OutputNamer(tmp_path / "out"), options=RunOptions(),
                  view=RecordingView(), archive=Archive(tmp_path / "data"), clock=clock)
    svc.open()
    return svc


def test_a_games_first_frame_waits_for_one_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Game 2 starts as soon as the pieces stand: its first frame waits for the one
    fdatasync of its journal (which carries its folder's new name and its sensor log's,
    made without a sync), not for a new folder, its directories' syncs, or the syncs of
    game 1's files (they wait until the board is still)."""
    disk = DiskCalls(monkeypatch)
    clock = Clock()
    board = WatchingBoard(disk, tmp_path / "data")
    svc = service(tmp_path, board, clock)
    feed(svc, [ev.Snapshot(0.5, START), *events(FOOLS_MATE, t=1.0), ev.Tick(9.0)])
    assert svc.session is not None and svc.session.over
    first_game = svc.session
    clock.now += 5.0  # the players look at the result, then set the pieces up again
    feed(svc, [ev.Lifted(12.0, chess.H4), ev.Placed(12.4, chess.D8)])
    for event in events("-g4 +g2 -e5 +e7 -f3", t=13.0):  # one by one, as they come
        feed(svc, [event])
    disk.calls.clear()
    feed(svc, [ev.Placed(16.0, chess.F2)])  # the last piece: game 2 starts
    assert svc.session is not None and svc.session is not first_game
    assert board.frames[-1].status.white_to_move  # game 2's first frame
    syncs = [c for c in board.before[-1] if c in ("fsync", "fdatasync") or
             c.startswith("mkdir")]
    assert syncs == ["fdatasync"], board.before[-1]
    assert board.journals[-1] is not None
    assert board.journals[-1].parent.name == svc.session.game_id  # on disk, its own name
    assert read_journal(board.journals[-1]).start.fen == chess.STARTING_FEN
    # the board still: the put-off syncs are done (game 1's sensor log, game 2's name)
    clock.now += DISK_IDLE + 0.01
    svc.step(timeout=0)
    assert "fsync" in disk.calls
    assert not open_files(first_game.files.sensor)
    svc.close()


def open_files(path: Path) -> list[str]:
    """This process's descriptors open on `path`."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path.resolve()):
                found.append(fd)
        except OSError:
            continue
    return found


class JournalCheckingBoard(FakeBoard):
    """At every LED frame, the journal on disk of the game on show must hold every event
    of it the service has taken (its sensor log has each as it arrives)."""

    def __init__(self) -> None:
        super().__init__(identity=BOARD)
        self.service: Service | None = None
        self.checked = 0
        self.late: list[LedFrame] = []

    def send_leds(self, frame: LedFrame) -> None:
        super().send_leds(frame)
        session = self.service.session if self.service is not None else None
        if session is None or session.journal is None:
            return
        taken = load_sensor_log(session.files.sensor).events
        if not session.journal.path.is_file() or \
                read_journal(session.journal.path).events != taken:
            self.late.append(frame)
        self.checked += 1


def test_every_frame_of_two_games_has_its_journal_on_disk_first(tmp_path: Path) -> None:
    """"On disk before shown", each game's first frame included."""
    clock, board = Clock(), JournalCheckingBoard()
    svc = service(tmp_path, board, clock)
    board.service = svc
    feed(svc, [ev.Snapshot(0.5, START), *events(FOOLS_MATE, t=1.0), ev.Tick(9.0)])
    clock.now += 5.0
    feed(svc, events("-h4 +d8 -g4 +g2 -e5 +e7 -f3 +f2", t=12.0))
    feed(svc, events(SCHOLARS, t=20.0))
    svc.close()
    assert board.checked > 10 and board.late == []


def test_a_new_folder_name_lost_at_a_power_cut_is_found_again(tmp_path: Path) -> None:
    """On a file system that does not order a rename with the file's data, a power cut
    can leave the game's journal in the folder made ahead, under its old name: the next
    start puts it back under the game's id and the game goes on, on its board."""
    clock = Clock()
    svc = service(tmp_path, FakeBoard(identity=BOARD), clock)
    assert (tmp_path / "data" / PREPARED / JOURNAL).is_file()  # made ahead, empty
    feed(svc, [ev.Snapshot(0.5, START), *events(SCHOLARS)])
    session = svc.session
    assert session is not None and session.journal is not None
    game_id = session.game_id
    # the power goes: the files are closed as they are, nothing else is written
    svc._release()
    session.sensor_log.file.close()
    session.journal.file.close()
    folder = tmp_path / "data" / "games" / game_id
    folder.rename(tmp_path / "data" / PREPARED)  # the rename never reached the disk
    assert Archive(tmp_path / "data").games() == []

    view = RecordingView()
    again = Service(FakeBoard(identity=BOARD), profile=PROFILES["fide"], start=StartInfo(),
                    namer=OutputNamer(tmp_path / "out"), options=RunOptions(), view=view,
                    archive=Archive(tmp_path / "data"), clock=clock)
    again.open()
    assert [g.game_id for g in Archive(tmp_path / "data").games()] == [game_id]
    feed(again, [ev.Snapshot(0.0, AFTER_NF6), *events("-h5 -f7 +f7 Cw", t=0.0)])
    assert any(f"resuming game {game_id}" in m for m in view.all_messages)
    assert again.session is not None and again.session.result is not None
    assert pgn_moves(again.session.record.pgn_text())[-1] == "Qxf7#"
    again.close()
    assert (tmp_path / "data" / PREPARED / JOURNAL).stat().st_size == 0  # made ahead anew


def test_an_empty_journal_is_no_game(tmp_path: Path) -> None:
    """A folder whose journal never got a byte (the power went as the game started) is
    neither listed nor resumed."""
    (tmp_path / "data" / "games" / "20260101-120000").mkdir(parents=True)
    (tmp_path / "data" / "games" / "20260101-120000" / JOURNAL).write_bytes(b"")
    archive = Archive(tmp_path / "data")
    assert archive.games() == [] and archive.unfinished(BOARD) is None


assert storage  # (the module whose files these are)
