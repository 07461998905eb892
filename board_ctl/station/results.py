"""The results the station has seen, kept on disk, and the club ladder computed from them.

The hall's model lives in memory and a restarted station hears only the boards' retained
messages, so finished games would drop out of the ladder after a restart. Each result is
therefore appended to `results.jsonl` in the station's data directory the first time it
is seen (and again if an arbiter corrects it); the ladder replays that file in order,
the latest result of each game counting once."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from board_ctl.ladder import GameResult, Ladder, LadderError
from board_ctl.station.model import Game

log = logging.getLogger(__name__)


class ResultLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        # (board, game) -> its row, in the order the games first finished
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        self._read()

    def _read(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        for number, line in enumerate(lines, start=1):
            try:
                row = json.loads(line)
                key = (str(row["board"]), str(row["game"]))
            except (ValueError, KeyError, TypeError):
                log.warning("%s:%d: not a result record; skipped", self.path, number)
                continue
            self.rows[key] = row

    def note(self, game: Game, time_ms: int) -> bool:
        """Record a finished game's result unless it is already recorded as it is."""
        if not game.finished:
            return False
        key = (game.board, game.game)
        row = {"board": game.board, "game": game.game, "round": game.round,
               "board_no": game.board_no, "white": game.white.name,
               "black": game.black.name, "result": game.result, "time": time_ms}
        held = self.rows.get(key)
        if held is not None and (held["result"], held["white"], held["black"]) == (
                row["result"], row["white"], row["black"]):
            return False
        self.rows[key] = row
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        return True

    def standings(self) -> list[dict[str, Any]]:
        """The ladder from every recorded game with both names, in the order they ended."""
        ladder = Ladder()
        for row in self.rows.values():
            try:
                ladder.play(GameResult(row.get("white") or "", row.get("black") or "",
                                       row["result"]))
            except LadderError:
                continue  # a game without both names (or a player against himself)
        return [standing.to_json() for standing in ladder.standings()]
