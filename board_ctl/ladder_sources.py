"""Where the ladder's games come from: PGN files and the board's archive.

Each source gives its rateable games in their order and a note for every game it leaves
out (unfinished, a name missing, no result), so nothing is dropped silently. Only the
tags are read: White, Black and Result.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import chess.pgn

from board_ctl.ladder import RESULTS, GameResult, LadderError, player_name


@dataclass
class Loaded:
    games: list[GameResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: int = 0

    def extend(self, other: Loaded) -> None:
        self.games += other.games
        self.notes += other.notes
        self.skipped += other.skipped

    def skip(self, note: str) -> None:
        self.notes.append(note)
        self.skipped += 1


class ArchivedGame(Protocol):
    """What the ladder reads of a game in `board_ctl.archive.Archive(...).games()`."""

    @property
    def tags(self) -> Mapping[str, str]: ...

    @property
    def result(self) -> str: ...

    @property
    def finished(self) -> bool: ...


def _players(tags: Mapping[str, str]) -> str:
    return f"{tags.get('White') or '?'} - {tags.get('Black') or '?'}"


def _rated(tags: Mapping[str, str], result: str | None) -> GameResult | str:
    """The game to rate, or why it is left out."""
    white, black = player_name(tags.get("White")), player_name(tags.get("Black"))
    if white is None or black is None:
        sides = (("White", white), ("Black", black))
        return f"no {' or '.join(side for side, name in sides if name is None)} name"
    result = (result or "").strip()
    if result == "*":
        return "unfinished (*)"
    if result not in RESULTS:
        return f"result {result!r} is none of {', '.join(RESULTS)}" if result else "no Result tag"
    try:
        return GameResult(white, black, result)
    except LadderError as exc:
        return str(exc)


def from_pgn_text(text: str, label: str) -> Loaded:
    """Every game of a PGN text, in order; `label` names the source in the notes."""
    loaded = Loaded()
    stream = io.StringIO(text)
    number = 0
    while (headers := chess.pgn.read_headers(stream)) is not None:
        number += 1
        rated = _rated(headers, headers.get("Result"))
        if isinstance(rated, GameResult):
            loaded.games.append(rated)
        else:
            loaded.skip(f"{label}: game {number} ({_players(headers)}): {rated}; skipped")
    if number == 0:
        loaded.notes.append(f"{label}: no game in it")
    return loaded


def read_pgn(path: Path) -> Loaded:
    """A PGN file's games; LadderError when the file cannot be read at all."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LadderError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
        note = None
    except UnicodeDecodeError:
        # Older PGN files are often Latin-1; every byte decodes, so no game is lost.
        text = data.decode("latin-1")
        note = f"{path}: not UTF-8, read as Latin-1"
    loaded = from_pgn_text(text, str(path))
    if note:
        loaded.notes.insert(0, note)
    return loaded


def from_archive(games: Iterable[ArchivedGame], label: str) -> Loaded:
    """The archive's games in its order (the order `board-ctl games` lists them)."""
    loaded = Loaded()
    for number, game in enumerate(games, 1):
        if not game.finished:
            rated: GameResult | str = "still being played"
        elif game.result == "*":
            rated = "ended without a result"
        else:
            rated = _rated(game.tags, game.result)
        if isinstance(rated, GameResult):
            loaded.games.append(rated)
        else:
            loaded.skip(f"{label}: game {number} ({_players(game.tags)}): {rated}; skipped")
    return loaded
