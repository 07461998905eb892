"""The results an arbiter confirmed, kept on disk, and the club ladder computed from them.

A board's credential sits on a Pi under a table, so what a board says about its own game
never rates anyone: a result enters the ladder only when an arbiter confirmed it, either
by giving it (a `cmd/result` the board acknowledged) or by confirming on the station
the result a board shows (docs/ladder.md, "At the station"). Each confirmation is
appended to `results.jsonl` in the station's data directory; the ladder replays that
file in order, the latest confirmed result of each game counting once."""

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
        # (board, game) -> its confirmed row, in the order the games were first confirmed
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        self._read()

    def _read(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        unconfirmed = 0
        for number, line in enumerate(lines, start=1):
            try:
                row = json.loads(line)
                key = (str(row["board"]), str(row["game"]))
            except (ValueError, KeyError, TypeError):
                log.warning("%s:%d: not a result record; skipped", self.path, number)
                continue
            if not row.get("confirmed_by"):
                unconfirmed += 1  # (written by a station that rated what boards said)
                continue
            self.rows[key] = row
        if unconfirmed:
            log.warning("%s: %d results no arbiter confirmed are left out of the ladder",
                        self.path, unconfirmed)

    def confirmed(self, board: str, game: str) -> str | None:
        """The result an arbiter confirmed for this game, None if none."""
        row = self.rows.get((board, game))
        return row["result"] if row is not None else None

    def confirm(self, game: Game, result: str, user: str, time_ms: int,
                how: str) -> bool:
        """Record `result` of `game` as confirmed by `user` (`how`: "command" or
        "confirmed"), unless it is recorded so already; on disk before it counts."""
        key = (game.board, game.game)
        row = {"board": game.board, "game": game.game, "round": game.round,
               "board_no": game.board_no, "white": game.white.name,
               "black": game.black.name, "result": result, "time": time_ms,
               "confirmed_by": user, "how": how}
        held = self.rows.get(key)
        if held is not None and (held["result"], held["white"], held["black"]) == (
                row["result"], row["white"], row["black"]):
            return False
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(row, ensure_ascii=False) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        self.rows[key] = row
        return True

    def standings(self) -> list[dict[str, Any]]:
        """The ladder from every confirmed game with both names, in the order they were
        first confirmed."""
        ladder = Ladder()
        for row in self.rows.values():
            try:
                ladder.play(GameResult(row.get("white") or "", row.get("black") or "",
                                       row["result"]))
            except LadderError:
                continue  # a game without both names (or a player against himself)
        return [standing.to_json() for standing in ladder.standings()]
