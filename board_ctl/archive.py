"""The data directory: one folder a game, each with its crash-safe journal.

    DATA/lock                                 held (flock) by the service using DATA
    DATA/games/20261130-153012/journal.jsonl
    DATA/next-game/journal.jsonl              the next game's, made ahead (empty)

The next game's folder and journal are made, and made durable, while no game waits on
the disk (`prepare`): a game's start then only renames the folder and appends to the
file, so its first LED frame waits for one fdatasync like any move, not for new files
and directory syncs. A power cut can leave the rename undone on a file system that does
not order it with the file's data: the journal, whose start record names its game, is
then put back under its name at the next start (`adopt_prepared`).

A game's PGN, report and sensor log can be exported from its journal at any time, also
while the game is still being played (the journal is only ever appended to): a game in
progress gives the moves completed so far, nothing guessed.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import BoardCtlError
from board_ctl.journal import JournalWriter, Recovered, decode_record, read_journal
from board_ctl.record import GameRecord
from board_ctl.replay import feed_all, new_game
from board_ctl.sensorlog import StartInfo, dumps, event_to_json, start_to_json
from board_ctl.storage import StorageError, describe, fsync_directory, make_directory
from board_ctl.words import count

JOURNAL = "journal.jsonl"
LOCK = "lock"
PREPARED = "next-game"  # the next game's folder, made ahead (DATA/next-game)
ID_FORMAT = "%Y%m%d-%H%M%S"


class ArchiveError(BoardCtlError, LookupError):
    """No such game, or a name that fits several."""


class DataDirBusy(BoardCtlError, RuntimeError):
    """Another service holds the data directory."""

    def __init__(self, root: Path, owner: str) -> None:
        self.root, self.owner = root, owner
        super().__init__(f"{self.owner_text} (another board-ctl run): stop that one, or "
                         f"give this one its own --data-dir")

    @property
    def owner_text(self) -> str:
        return f"the data directory {self.root} is already in use by pid {self.owner}"


def default_data_dir() -> Path:
    """Where the games are archived unless told: $BOARD_CTL_DATA; else $STATE_DIRECTORY
    (set by systemd's StateDirectory=, the first of several); else the user's data
    directory ($XDG_DATA_HOME/board-ctl, ~/.local/share/board-ctl on Linux)."""
    if os.environ.get("BOARD_CTL_DATA"):
        return Path(os.environ["BOARD_CTL_DATA"])
    state = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if state:
        return Path(state)
    import platformdirs  # only here: most commands never need it

    return Path(platformdirs.user_data_dir("board-ctl", appauthor=False))


class DataDirLock:
    """The data directory's lock (flock on DATA/lock, which holds the owner's pid): one
    service a data directory, or a second one would resume and write the first one's
    game. It goes with the process, however that ends."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / LOCK
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise DataDirBusy (held) / StorageError (cannot be created)."""
        try:
            make_directory(self.root)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StorageError(describe(exc, "the data directory", self.root)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise DataDirBusy(self.root, owner) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass  # the pid is for people (a full disk): the lock itself holds
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd

    def missing(self) -> bool:
        """The lock file is gone (the data directory was deleted) or is another file."""
        if self._fd is None:
            return False
        try:
            stat = os.stat(self.path)
        except OSError:
            return True
        mine = os.fstat(self._fd)
        return (stat.st_dev, stat.st_ino) != (mine.st_dev, mine.st_ino)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with the descriptor; the file stays
            self._fd = None


@dataclass
class GameEntry:
    game_id: str
    folder: Path
    recovered: Recovered

    @property
    def started(self) -> dt.datetime | None:
        try:
            return dt.datetime.strptime(self.game_id[:15], ID_FORMAT)
        except ValueError:
            return None

    @property
    def tags(self) -> dict[str, str]:
        return self.recovered.start.tags

    @property
    def plies(self) -> int:
        return sum(1 for e in self.recovered.effects if e.get("kind") == "move")

    @property
    def result(self) -> str:
        results = [e for e in self.recovered.effects if e.get("kind") == "result"]
        return str(results[-1]["result"]) if results else "*"

    @property
    def finished(self) -> bool:
        return self.recovered.finished

    @property
    def abandoned(self) -> bool:
        return self.recovered.abandoned

    @property
    def status(self) -> str:
        """The result, or why there is none yet: "1-0", "* (in progress)", "* (abandoned)"."""
        if self.abandoned:
            return f"{self.result} (abandoned)"
        return self.result if self.finished else f"{self.result} (in progress)"

    def record(self, profile: Profile | None = None) -> GameRecord:
        """The game as its journal's events replay it (the referee is deterministic).

        Up to the last time journaled (an effect or a time mark included: a flag that
        fell on a timer has no event of its own). A finished game is settled there as the
        service settled it; a game in progress or abandoned is not: a move still on its
        way (a piece in hand, a press not yet made) is not guessed at, so the record has
        exactly the moves completed so far."""
        recovered = self.recovered
        start = recovered.start
        time_control = TimeControl.parse(start.time_control) if start.time_control else None
        profile = profile or PROFILES.get(recovered.profile, PROFILES["fide"])
        referee, record = new_game(start, profile, time_control)
        feed_all(referee, record, recovered.events)
        if recovered.settled:
            record.extend(referee.finish(recovered.last_t))
        else:
            record.extend(referee.feed(ev.Tick(max(recovered.last_t, referee.now))))
        return record

    def pgn_text(self) -> str:
        record = self.record()
        started = self.started
        return record.pgn_text(started.date() if started else None)

    def sensor_log_text(self) -> str:
        lines = [start_to_json(self.recovered.start)]
        lines += [event_to_json(event) for event in self.recovered.events]
        return "".join(dumps(line) + "\n" for line in lines)


def _board_of(journal: Path) -> str | None:
    """The board a journal's game is played on, from its first line alone (None: not
    said, a journal from before boards were named, or a first line that is damaged)."""
    try:
        with journal.open("rb") as stream:
            first = stream.readline(64 * 1024)
    except OSError:
        return None
    try:
        record = decode_record(first.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    board = record.get("board") if record is not None else None
    return board if isinstance(board, str) else None


def _ends_cleanly(journal: Path) -> bool:
    """The journal's last line is an intact `end` record."""
    try:
        with journal.open("rb") as stream:
            size = stream.seek(0, os.SEEK_END)
            stream.seek(max(0, size - 512))
            tail = stream.read()
    except OSError:
        return False
    lines = tail.split(b"\n")
    if len(lines) < 2 or lines[-1]:
        return False  # no complete last line, or a torn one after it
    try:
        record = decode_record(lines[-2].decode("utf-8") + "\n")
    except UnicodeDecodeError:
        return False
    return record is not None and record.get("kind") == "end"


class Archive:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.games_dir = root / "games"
        self.prepared = root / PREPARED
        self.unsettled = False  # a prepared folder was renamed: its name is not synced yet

    def _folders(self, reverse: bool = False) -> list[Path]:
        """The games' folders with a journal, in the order of their ids (but one whose
        journal never got a byte: no game started there)."""
        if not self.games_dir.is_dir():
            return []
        found = []
        for folder in self.games_dir.iterdir():
            try:
                if not folder.name.startswith(".") and (folder / JOURNAL).stat().st_size:
                    found.append(folder)
            except OSError:
                continue
        return sorted(found, reverse=reverse)

    def prepare(self) -> None:
        """Make the next game's folder and empty journal now, durably (the folder, the
        file and their names), so that a game's start costs no new file. Called by the
        service that holds the data directory, when no game waits on the disk. Raises
        OSError (a full or read-only disk: the game's start then makes them itself)."""
        self.adopt_prepared()
        journal = self.prepared / JOURNAL
        if journal.is_file() and journal.stat().st_size == 0:
            return
        make_directory(self.games_dir)  # (where it goes: the same file system)
        make_directory(self.prepared)
        fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_directory(self.prepared)
        fsync_directory(self.games_dir)
        fsync_directory(self.root)

    def adopt_prepared(self) -> str | None:
        """A prepared journal that holds a game (the power went before its folder's new
        name was on disk): its folder renamed to the game's id, which its start record
        names. The id, or None when there was nothing to adopt."""
        journal = self.prepared / JOURNAL
        try:
            if journal.stat().st_size == 0:
                return None
        except OSError:
            return None
        with journal.open("rb") as stream:
            first = decode_record(stream.readline(64 * 1024).decode("utf-8", "replace"))
        named = first.get("game") if first is not None else None
        base = named if isinstance(named, str) and named and "/" not in named \
            and not named.startswith(".") else dt.datetime.fromtimestamp(
                journal.stat().st_mtime).strftime(ID_FORMAT)
        game_id, n = base, 1
        while (self.games_dir / game_id).exists():
            n += 1
            game_id = f"{base}-{n}"
        os.rename(self.prepared, self.games_dir / game_id)
        fsync_directory(self.games_dir)
        fsync_directory(self.root)
        return game_id

    def lock(self) -> DataDirLock:
        """Take the data directory for this process (DataDirBusy if another has it)."""
        lock = DataDirLock(self.root)
        lock.acquire()
        return lock

    def new_game(
        self, start: StartInfo, now: dt.datetime, profile: str = "fide",
        files: dict[str, str] | None = None, *, commit: bool = True,
        board: str | None = None,
    ) -> tuple[str, JournalWriter]:
        """A new game named by its start time, played on `board`, and its journal. With
        commit False its folder and journal are made at the journal's first commit: a
        game that never gets that far leaves nothing behind."""
        base = now.strftime(ID_FORMAT)
        game_id, n = base, 1
        while (self.games_dir / game_id).exists():
            n += 1
            game_id = f"{base}-{n}"
        path = self.games_dir / game_id / JOURNAL
        prepared = self._take_prepared(self.games_dir / game_id)
        return game_id, JournalWriter.create(path, start, profile, files, commit=commit,
                                             board=board, game_id=game_id,
                                             prepared=prepared)

    def _take_prepared(self, folder: Path) -> bool:
        """The prepared folder renamed to `folder`, if there is one with an empty
        journal (a rename: no new file, no sync; the journal's first fdatasync carries
        it on a journaling file system, and `settle` makes it durable on any). True if
        it was taken."""
        try:
            if (self.prepared / JOURNAL).stat().st_size != 0:
                return False
            os.rename(self.prepared, folder)
        except OSError:
            return False
        self.unsettled = True
        return True

    def unsettled_names(self) -> list[Path]:
        """The directories to sync to make a prepared folder's new name durable (the
        service does it off the LEDs' path, once they show the game's first frame);
        [] when there is none."""
        if not self.unsettled:
            return []
        self.unsettled = False
        return [self.games_dir, self.root]

    def games(self) -> list[GameEntry]:
        entries = []
        for folder in self._folders():
            journal = folder / JOURNAL
            if journal.is_file():
                entries.append(GameEntry(folder.name, folder, read_journal(journal)))
        return entries

    def unfinished(self, board: str | None = None) -> GameEntry | None:
        """What a service starting on `board` may resume: the latest game played on that
        board, if it is not over. A game of another board is never resumed here, nor one
        the board has played a later game after. (A journal from before boards were
        named counts as any board's. A journal whose last line is an intact end record
        is over: only its first line and its tail are read, so a start-up does not read
        months of games.) With `board` None: the latest unfinished game of any board."""
        for folder in self._folders(reverse=True):
            journal = folder / JOURNAL
            if not journal.is_file():
                continue
            played_on = _board_of(journal)
            if board is not None and played_on is not None and played_on != board:
                continue  # another board's game
            if _ends_cleanly(journal):
                if board is None or played_on is None:
                    continue
                return None  # this board's latest game is over
            entry = GameEntry(folder.name, folder, read_journal(journal))
            if not entry.finished:
                return entry
            if board is not None and played_on is not None:
                return None
        return None

    def abandon(self, entry: GameEntry, writer: JournalWriter | None = None) -> None:
        """Leave an unfinished game unfinished for good: its journal (`writer`, if it is
        open already) gets an end record saying so (its moves stay: `board-ctl export`),
        and no start resumes it again. Raises JournalError (a journal that cannot be
        written)."""
        if writer is None:
            writer = JournalWriter.reopen(entry.folder / JOURNAL, entry.recovered)
        try:
            writer.end(entry.recovered.last_t, abandoned=True)
        finally:
            writer.close()
        entry.recovered.ended = entry.recovered.abandoned = True

    def find(self, name: str) -> GameEntry:
        games = self.games()
        exact = [g for g in games if g.game_id == name]
        found = exact or [g for g in games if g.game_id.startswith(name)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise ArchiveError(f"no game {name!r} in {self.games_dir} (see `board-ctl games`)")
        raise ArchiveError(f"{name!r} fits {count(len(found), 'game')}: "
                           + ", ".join(g.game_id for g in found))

    def event_games(self, event: str) -> list[GameEntry]:
        found = [g for g in self.games() if g.tags.get("Event") == event]
        if not found:
            raise ArchiveError(f"no game of the event {event!r} in {self.games_dir}")
        return found
