"""The service and its disks: the data directory locked, a disk that fills up (the data
directory's, the output directory's), a data directory deleted during a game, a start
that cannot write, a game stopped and resumed; the journal's group commit.

Real disks throughout (a small tmpfs mounted for the test, filled by a file), the loop
stepped by hand on a fake board with a manual clock."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from board_ctl.archive import PREPARED, Archive, DataDirBusy
from board_ctl.core import events as ev
from board_ctl.core.effects import Blink, LedFrame
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import decode_record, read_journal
from board_ctl.sensorlog import StartInfo, load_sensor_log
from board_ctl.service.game import OutputNamer
from board_ctl.service.service import RunOptions, Service
from board_ctl.storage import StorageError
from diskkit import fill, small_disk
from script import events
from servicekit import RecordingView, child_env, pgn_moves
from test_service_loop import START, Clock, FakeBoard, feed

SCHOLARS = "-e2 +e4 Cw -e7 +e5 Cb -f1 +c4 Cw -b8 +c6 Cb -d1 +h5 Cw -g8 +f6 Cb"
MATE = "-h5 -f7 +f7 Cw"
SCHOLARS_SAN = ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]


class Setup:
    """A service on a fake board, its data directory and output directory given."""

    def __init__(self, data: Path, out: Path, *, pgn: Path | None = None,
                 board: FakeBoard | None = None) -> None:
        self.board = board or FakeBoard()
        self.view = RecordingView()
        self.clock = Clock()
        self.service = Service(self.board, profile=PROFILES["fide"], start=StartInfo(),
                               namer=OutputNamer(out, pgn=pgn), options=RunOptions(),
                               view=self.view, archive=Archive(data), clock=self.clock)

    def open(self) -> Setup:
        self.service.open()
        return self

    def feed(self, items: list[object], seconds: float = 0.0) -> None:
        feed(self.service, items)
        if seconds:
            self.clock.now += seconds
            self.service.step(timeout=0)  # housekeeping: the storage checks

    def alarms(self, *words: str) -> list[str]:
        return [m for m in self.view.all_messages if all(w in m for w in words)]


def journal_of(data: Path) -> Path:
    [path] = sorted((data / "games").glob("*/journal.jsonl"))
    return path


def board_events(data: Path) -> list[ev.Event]:
    return read_journal(journal_of(data)).events


def whole_lines(path: Path) -> list[bytes]:
    """Every line of a file, each checked to be whole (a JSON object and its newline)."""
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), f"{path} ends in a partial line"
    lines = raw.splitlines()
    for line in lines:
        json.loads(line)
    return lines


def leftovers(directory: Path) -> list[Path]:
    """Temporary or empty files, which nothing should leave behind (but the next game's
    journal, made ahead on purpose: Archive.prepare)."""
    return [p for p in directory.rglob("*") if p.is_file()
            and (p.name.endswith(".tmp") or p.stat().st_size == 0) and p.name != "filler"
            and p.parent.name != PREPARED]


# ---------------------------------------------------------------- the lock


def test_a_second_service_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    first = Setup(tmp_path / "data", tmp_path / "out").open()
    first.feed([ev.Snapshot(0.5, START), *events("-e2 +e4 Cw")])
    second = Setup(tmp_path / "data", tmp_path / "out2")
    with pytest.raises(DataDirBusy, match=f"already in use by pid {os.getpid()}"):
        second.open()
    assert second.board.put is None  # refused before it touched the board
    first.feed(events("-e7 +e5 Cb", t=3.0))  # the first one is not disturbed
    assert read_journal(journal_of(tmp_path / "data")).problems == []
    first.service.close()
    Setup(tmp_path / "data", tmp_path / "out2").open().service.close()  # free again


def test_board_ctl_run_on_a_data_dir_in_use_is_one_line(tmp_path: Path) -> None:
    lock = Archive(tmp_path / "data").lock()  # this process holds it
    try:
        result = subprocess.run(
            [sys.executable, "-m", "board_ctl.cli", "run", "--once", "--view", "none",
             "--data-dir", str(tmp_path / "data")], cwd=tmp_path, env=child_env(),
            capture_output=True, text=True, timeout=60)
    finally:
        lock.release()
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"board-ctl run: the data directory {tmp_path / 'data'} is already in use by pid "
        f"{os.getpid()} (another board-ctl run): stop that one, or give this one its own "
        f"--data-dir"]


# ---------------------------------------------------------------- full disks


def test_a_full_data_disk_loses_nothing_and_says_which_file_and_disk(tmp_path: Path) -> None:
    """The data directory's disk is full when the game starts: the operator is told which
    file on which disk, the alert LED blinks fast, the game goes on and its PGN is
    written to the output directory (another disk). Space given back, the journal is
    written with everything that waited, in order."""
    with small_disk(tmp_path / "disk") as disk:
        data, out = disk / "data", tmp_path / "out"
        setup = Setup(data, out).open()
        filler = fill(disk)
        setup.feed([ev.Snapshot(0.5, START), *events(SCHOLARS)[:6]])
        [alarm] = setup.alarms("cannot write journal")
        journal = data / "games" / setup.service.session.game_id / "journal.jsonl"
        assert f"cannot write journal {journal}: No space left on device (the file " \
               f"system mounted at {disk} (tmpfs on tmpfs): 0 B free of" in alarm
        assert setup.board.frames[-1].status.alert == Blink.FAST
        assert not journal.exists() and not leftovers(disk)  # nothing half-written
        setup.feed(events(SCHOLARS, t=1.0)[6:], seconds=1.0)
        assert len(setup.alarms("cannot write journal")) == 1  # said once, not per event
        filler.unlink()  # space again: everything that waited is written, in order
        setup.feed([], seconds=1.0)
        assert setup.alarms(str(journal), "is written again")
        fed = load_sensor_log(setup.service.session.files.sensor).events
        assert board_events(data) == fed
        fill(disk)  # full again (but for the journal's last page) until the end
        setup.feed(events(MATE, t=20.0))
        session = setup.service.last_session
        assert session is not None and session.result is not None
        assert pgn_moves(session.files.pgn.read_text()) == SCHOLARS_SAN
        setup.service.close()
        whole_lines(journal)
        assert not leftovers(disk)


def test_a_full_output_disk_keeps_the_game_in_the_journal(tmp_path: Path) -> None:
    """The output directory's disk fills during the game: the sensor log stops at a whole
    line, the PGN cannot be written: each is said with its file and disk, no temporary
    or empty file is left, and the journal (another disk) has the whole game."""
    with small_disk(tmp_path / "disk") as disk:
        data, out = tmp_path / "data", disk / "out"
        setup = Setup(data, out).open()
        setup.feed([ev.Snapshot(0.5, START), *events(SCHOLARS)[:3]])
        files = setup.service.session.files
        fill(disk)
        # a chattering contact: more lines than the sensor log's last page still holds
        chatter = events(" ".join(["@0.002 -a2 @0.002 +a2"] * 150), t=2.21)
        setup.feed(chatter + events(SCHOLARS, t=2.0)[3:] + events(MATE, t=20.0))
        assert setup.alarms(f"cannot write sensor log {files.sensor}: No space left on "
                            f"device (the file system mounted at {disk}")
        assert setup.alarms(f"cannot write PGN {files.pgn}: No space left on device",
                            "board-ctl export")
        assert not files.pgn.exists() and not leftovers(disk)
        assert len(whole_lines(files.sensor)) >= 2
        # the game's end names no PGN that is not there
        assert setup.alarms("game 1: 1-0", "no PGN written")
        assert not [m for m in setup.view.all_messages
                    if m.startswith("game ") and f"PGN {files.pgn}" in m]
        setup.service.close()
    [game] = Archive(data).games()
    assert game.finished and pgn_moves(game.pgn_text()) == SCHOLARS_SAN


# ---------------------------------------------------------------- the data dir deleted


def test_a_data_dir_deleted_during_a_game_is_made_again(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    setup = Setup(data, out).open()
    setup.feed([ev.Snapshot(0.5, START), *events(SCHOLARS)[:9]])
    shutil.rmtree(data)  # someone cleans up
    setup.feed(events(SCHOLARS, t=1.0)[9:12], seconds=1.0)
    assert setup.alarms(f"the data directory {data} was deleted during the game")
    assert setup.alarms(f"the journal {journal_of(data)} was deleted during the game: "
                        f"written again with everything so far")
    assert setup.board.frames[-1].status.alert == Blink.FAST
    assert (data / "lock").read_text().strip() == str(os.getpid())
    setup.feed(events(SCHOLARS, t=1.0)[12:] + events(MATE, t=20.0))
    setup.service.close()
    recovered = read_journal(journal_of(data))
    assert recovered.problems == [] and recovered.ended
    fed = load_sensor_log(setup.service.last_session.files.sensor).events
    assert recovered.events == fed
    assert pgn_moves(Archive(data).games()[0].pgn_text()) == SCHOLARS_SAN


# ---------------------------------------------------------------- a start that cannot write


@pytest.mark.parametrize("how", ["a file in the way", "a read-only disk"])
def test_a_start_that_cannot_write_leaves_no_game_behind(tmp_path: Path, how: str) -> None:
    data = tmp_path / "data"
    if how == "a file in the way":
        (tmp_path / "games").write_text("not a directory")
        context = None
        out = tmp_path / "games"
    else:
        context = small_disk(tmp_path / "ro", readonly=True)
        out = context.__enter__() / "games"
    try:
        setup = Setup(data, out)
        with pytest.raises(StorageError, match=f"cannot write the games' files in {out}"):
            setup.open()
        assert setup.board.put is None
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    assert Archive(data).games() == []
    again = Setup(data, tmp_path / "writable").open()  # nothing to resume
    assert again.service.session is None
    assert not again.alarms("resuming")
    again.service.close()


def test_a_read_only_data_dir_is_said_at_start(tmp_path: Path) -> None:
    with small_disk(tmp_path / "ro", readonly=True) as disk:
        setup = Setup(disk / "data", tmp_path / "out")
        with pytest.raises(StorageError, match=f"cannot write the data directory "
                                               f"{disk / 'data'}: Read-only file system"):
            setup.open()
        assert setup.board.put is None


def test_a_damaged_journal_on_a_full_disk_is_left_as_it_was(tmp_path: Path) -> None:
    """Resuming rewrites a damaged journal; with no room for that, the start fails
    saying why, and the journal is exactly as it was (no copy, no half-written file)."""
    with small_disk(tmp_path / "disk") as disk:
        data = disk / "data"
        first = Setup(data, tmp_path / "out").open()
        first.feed([ev.Snapshot(0.5, START), *events(SCHOLARS)])
        first.service.request_stop()
        first.service.step(timeout=0)
        first.service.close()
        path = journal_of(data)
        lines = path.read_bytes().splitlines(keepends=True)
        lines[5] = b"garbage\n"
        damaged = b"".join(lines)
        path.write_bytes(damaged)
        fill(disk)
        second = Setup(data, tmp_path / "out")
        with pytest.raises(OSError, match=f"cannot write journal {path}: No space left"):
            second.open()
        assert path.read_bytes() == damaged
        assert sorted(p.name for p in path.parent.iterdir()) == ["journal.jsonl"]


def test_board_ctl_run_in_a_read_only_directory_fails_at_once(tmp_path: Path) -> None:
    with small_disk(tmp_path / "ro", readonly=True) as cwd:
        result = subprocess.run(
            [sys.executable, "-m", "board_ctl.cli", "run", "--once", "--view", "none",
             "--data-dir", str(tmp_path / "data")], cwd=cwd, env=child_env(),
            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith(f"board-ctl run: cannot write the games' files in {cwd}/games: "
                           f"Read-only file system (the file system mounted at {cwd}")
    assert Archive(tmp_path / "data").games() == []


# ---------------------------------------------------------------- stopped and resumed


def test_a_stopped_game_keeps_its_files_and_guesses_nothing(tmp_path: Path) -> None:
    """Stopped (SIGTERM) with White's pawn lifted from e4 (exd5 on its way): the PGN so
    far has the two moves made, the journal no guessed third; resumed, the game goes on
    in the same files, and only one PGN is left, the whole game's."""
    data, out = tmp_path / "data", tmp_path / "out"
    first = Setup(data, out).open()
    first.feed([ev.Snapshot(0.5, START), *events("-e2 +e4 Cw -d7 +d5 Cb -e4")])
    first.service.request_stop()
    assert not first.service.step(timeout=0)
    first.service.close()
    files = first.service.last_session.files
    assert pgn_moves(files.pgn.read_text()) == ["e4", "d5"]
    recovered = read_journal(journal_of(data))
    assert not recovered.finished and [e["san"] for e in recovered.effects
                                       if e["kind"] == "move"] == ["e4", "d5"]

    second = Setup(data, out).open()
    assert second.alarms("left unfinished on this board")
    after = chess.Board()
    for san in ("e4", "d5"):
        after.push_san(san)
    second.feed([ev.Snapshot(0.0, after.occupied & ~chess.BB_E4)])  # as it was left
    assert second.alarms("resuming game") and second.service.session.files == files
    second.feed(events("-d5 +d5 Cw -d8 +d5 Cb", t=0.0))  # exd5 Qxd5
    second.service.close()
    assert sorted(p.name for p in out.glob("*.pgn")) == [files.pgn.name]
    assert pgn_moves(files.pgn.read_text()) == ["e4", "d5", "exd5", "Qxd5"]
    log = load_sensor_log(files.sensor)
    assert not log.errors and log.events == board_events(data)


def test_a_resumed_game_under_another_pgn_name_removes_its_partial_files(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = Setup(data, tmp_path, pgn=tmp_path / "a.pgn").open()
    first.feed([ev.Snapshot(0.5, START), *events(SCHOLARS)])
    first.service.request_stop()
    first.service.step(timeout=0)
    first.service.close()
    assert (tmp_path / "a.pgn").exists()
    second = Setup(data, tmp_path, pgn=tmp_path / "b.pgn").open()
    second.feed([ev.Snapshot(0.0, first.service.last_session.referee.occupied),
                 *events(MATE, t=0.0)])
    second.service.close()
    assert sorted(p.name for p in tmp_path.glob("*.pgn")) == ["b.pgn"]
    assert pgn_moves((tmp_path / "b.pgn").read_text()) == SCHOLARS_SAN
    assert second.alarms("its earlier partial files are removed")


# ---------------------------------------------------------------- group commit


class DiskCheckingBoard(FakeBoard):
    """Reads the journal from disk at every LED frame: what the frame shows must be
    there already (the promise "on disk before shown")."""

    def __init__(self, data: Path) -> None:
        super().__init__()
        self.data = data
        self.fed: list[ev.Event] = []
        self.late: list[LedFrame] = []

    def send_leds(self, frame: LedFrame) -> None:
        super().send_leds(frame)
        paths = list((self.data / "games").glob("*/journal.jsonl"))
        on_disk = untimed(read_journal(paths[0]).events) if paths else []
        if on_disk != untimed(self.fed):
            self.late.append(frame)


def untimed(items: list[ev.Event]) -> list[ev.Event]:
    """Events without their times (the game's clock starts at its first snapshot)."""
    return [dataclasses.replace(e, t=0.0) for e in items]


def test_a_batch_is_one_fsync_and_on_disk_before_it_is_shown(tmp_path: Path) -> None:
    data = tmp_path / "data"
    board = DiskCheckingBoard(data)
    setup = Setup(data, tmp_path / "out", board=board).open()
    first = events("-e2 +e4 Cw")
    board.fed += first  # (the snapshot that starts the game is not one of its events)
    setup.feed([ev.Snapshot(0.5, START), *first])
    journal = setup.service.session.journal
    assert journal is not None
    script = events(SCHOLARS[len("-e2 +e4 Cw "):], t=3.0)
    bounces = [e for pair in zip(script, script) for e in pair]  # each event twice, as a
    # bouncing contact may report it: all of it waits on the queue for the loop
    before = journal.file.flushes
    for event in bounces:
        setup.service.submit(event)
    board.fed += bounces
    assert setup.service.step(timeout=0)
    assert journal.file.flushes == before + 1  # the whole batch: one write, one fsync
    assert [m.san for m in setup.service.session.record.moves] == SCHOLARS_SAN[:6]
    assert board.frames and board.late == []
    setup.service.close()
    assert untimed(board_events(data)) == untimed(board.fed)


def test_journal_lines_are_whole_after_every_commit(tmp_path: Path) -> None:
    data = tmp_path / "data"
    setup = Setup(data, tmp_path / "out").open()
    setup.feed([ev.Snapshot(0.5, START), *events(SCHOLARS)])
    for line in journal_of(data).read_bytes().splitlines(keepends=True):
        assert decode_record(line.decode()) is not None
    setup.service.close()
