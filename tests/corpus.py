"""The real-game corpus and a replay helper shared by the corpus tests and the benchmark."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from board_ctl.core.profiles import PROFILES
from board_ctl.record import GameRecord
from board_ctl.replay import replay_log
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderedGame

GAMES_DIR = Path(__file__).parent / "data" / "games"


@functools.cache
def corpus() -> tuple[chess.pgn.Game, ...]:
    games = []
    for path in sorted(GAMES_DIR.glob("*.pgn")):
        with path.open(encoding="utf-8") as stream:
            while (game := chess.pgn.read_game(stream)) is not None:
                games.append(game)
    return tuple(games)


def has_move(game: chess.pgn.Game, predicate: Callable[[chess.Board, chess.Move], bool]
             ) -> bool:
    """Whether `predicate(board, move)` holds for some move of the game's main line."""
    board = game.board()
    for move in game.mainline_moves():
        if predicate(board, move):
            return True
        board.push(move)
    return False


@dataclass
class Replayed:
    rendered: RenderedGame
    record: GameRecord

    @property
    def moves(self) -> list[chess.Move]:
        return [made.move for made in self.record.moves]

    @property
    def alerts(self) -> list[str]:
        return [line["code"] for line in self.record.report if line["kind"] == "alert"]

    @property
    def result(self) -> str:
        return self.record.result.result if self.record.result else "*"

    def first_divergence(self) -> int:
        expected = self.rendered.moves
        for ply, (got, want) in enumerate(zip(self.moves, expected)):
            if got != want:
                return ply
        return min(len(self.moves), len(expected))


def replay_rendered(rendered: RenderedGame, profile: str = "fide") -> Replayed:
    """Through the public format: the rendered log is written as JSON Lines and read back."""
    log = read_sensor_log(io.StringIO(rendered.jsonl()))
    assert not log.errors, log.errors
    return Replayed(rendered, replay_log(log, PROFILES[profile]))
