"""The data directory: one folder a game, each with its crash-safe journal.

    DATA/games/20261130-153012/journal.jsonl

A game's PGN, report and sensor log can be exported from its journal at any time, also
while the game is still being played (the journal is only ever appended to).
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import BoardCtlError
from board_ctl.journal import JournalWriter, Recovered, read_journal
from board_ctl.record import GameRecord
from board_ctl.replay import feed_all, new_game
from board_ctl.sensorlog import StartInfo, dumps, event_to_json, start_to_json

JOURNAL = "journal.jsonl"
ID_FORMAT = "%Y%m%d-%H%M%S"


class ArchiveError(BoardCtlError, LookupError):
    """No such game, or a name that fits several."""


def default_data_dir() -> Path:
    """$BOARD_CTL_DATA, else the user's data directory (XDG), as systemd services expect."""
    if os.environ.get("BOARD_CTL_DATA"):
        return Path(os.environ["BOARD_CTL_DATA"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "board-ctl"


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
        return self.recovered.ended or self.result != "*"

    def record(self, profile: Profile | None = None) -> GameRecord:
        """The game as its journal's events replay it (the referee is deterministic)."""
        start = self.recovered.start
        time_control = TimeControl.parse(start.time_control) if start.time_control else None
        profile = profile or PROFILES.get(self.recovered.profile, PROFILES["fide"])
        referee, record = new_game(start, profile, time_control)
        feed_all(referee, record, self.recovered.events)
        # Up to the last thing journaled, an effect included: a flag that fell on a timer
        # has no event of its own.
        record.extend(referee.finish(self.recovered.last_t))
        return record

    def pgn_text(self) -> str:
        record = self.record()
        started = self.started
        return record.pgn_text(started.date() if started else None)

    def sensor_log_text(self) -> str:
        lines = [start_to_json(self.recovered.start)]
        lines += [event_to_json(event) for event in self.recovered.events]
        return "".join(dumps(line) + "\n" for line in lines)


class Archive:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.games_dir = root / "games"

    def new_game(
        self, start: StartInfo, now: dt.datetime, profile: str = "fide"
    ) -> tuple[str, JournalWriter]:
        """A new game folder named by its start time, and its journal."""
        self.games_dir.mkdir(parents=True, exist_ok=True)
        base = now.strftime(ID_FORMAT)
        game_id, n = base, 1
        while (self.games_dir / game_id).exists():
            n += 1
            game_id = f"{base}-{n}"
        folder = self.games_dir / game_id
        folder.mkdir()
        return game_id, JournalWriter.create(folder / JOURNAL, start, profile)

    def games(self) -> list[GameEntry]:
        if not self.games_dir.is_dir():
            return []
        entries = []
        for folder in sorted(self.games_dir.iterdir()):
            journal = folder / JOURNAL
            if journal.is_file():
                entries.append(GameEntry(folder.name, folder, read_journal(journal)))
        return entries

    def unfinished(self) -> GameEntry | None:
        """The latest game not yet over: what a restarted service resumes."""
        games = [g for g in self.games() if not g.finished]
        return games[-1] if games else None

    def find(self, name: str) -> GameEntry:
        games = self.games()
        exact = [g for g in games if g.game_id == name]
        found = exact or [g for g in games if g.game_id.startswith(name)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise ArchiveError(f"no game {name!r} in {self.games_dir} (see `board-ctl games`)")
        raise ArchiveError(f"{name!r} fits {len(found)} games: "
                           + ", ".join(g.game_id for g in found))

    def event_games(self, event: str) -> list[GameEntry]:
        found = [g for g in self.games() if g.tags.get("Event") == event]
        if not found:
            raise ArchiveError(f"no game of the event {event!r} in {self.games_dir}")
        return found
