"""A game against the computer resumed after the service was killed with its built-in
board emulator: the emulator starts again with its pieces where the game left them (a
real board keeps them through a power cut), its person remembers the game (as a player
does), puts back what the LEDs guide him to (a piece that was in his hand) and plays
on. Without processes (tests/remotekit.py): the referee rebuilt from what it was fed, as
from the journal; the same cut at every moment of a move: the computer's move just
announced, being made, made, the person's own reply under way."""

from __future__ import annotations

import random

import chess
import pytest

from board_ctl.core.profiles import PROFILES
from board_ctl.replay import replay_events
from firmware_bridge.player import Person, Remembered
from remotekit import play


@pytest.mark.parametrize("seed", range(16))
def test_a_fresh_emulators_person_puts_the_resumed_game_back_and_plays_on(seed: int) -> None:
    rng = random.Random(seed)
    remote = chess.BLACK if seed % 2 else chess.WHITE
    after = rng.choice([0.0, 0.3, 1.0, 2.0, 4.0, 8.0])  # s after the computer's n-th move
    nth = rng.choice([1, 2, 3, 5])
    remembered: list[Remembered] = []

    def fresh(memory: Remembered, occupied: chess.Bitboard) -> Person:
        remembered.append(memory)
        return Person(memory.fen, seed=seed + 1000, memory=lambda: memory,
                      occupied=occupied)

    first = Person(seed=seed)
    played = play(first, remote=remote, seed=seed, max_plies=30, emulator_restarts={nth: after},
                  fresh=fresh)
    person = played.person
    assert person is not first and remembered, "no restart"
    log = "\n".join(first.log + ["-- restart --"] + person.log)
    assert [m.move for m in played.record.moves] == played.chosen, log
    assert len(played.chosen) >= 30 or played.result is not None, log  # before: it stalled
    assert any(line.startswith("resumed the game I remember") for line in person.log), log
    # the one alert: the position the fresh emulator showed, and nothing once put back
    assert {a["code"] for a in played.alerts} <= {"position-mismatch"}, played.alerts
    again = replay_events(played.start, played.events, PROFILES["fide"])
    assert again.pgn_text() == played.record.pgn_text()


@pytest.mark.parametrize("cut", [5, 12])
def test_the_built_in_emulator_starts_with_the_pieces_where_the_game_left_them(
        cut: int) -> None:
    """The service tells its built-in emulator the unfinished game before starting it: the
    emulator's first scan shows the pieces where the game's sensors last had them (one
    lifted, in the person's hand, included), not the start position: a resumed game's
    board is the board it was played on (before: a fresh emulator at the start)."""
    import queue

    from board_ctl.core import events as ev
    from board_ctl.service.emulatorboard import EmulatorBoard

    game = chess.Board()
    rng = random.Random(cut)
    for _ in range(cut):
        game.push(rng.choice(list(game.legal_moves)))
    in_hand = next(iter(chess.SquareSet(game.occupied_co[game.turn])))
    occupied = game.occupied & ~chess.BB_SQUARES[in_hand]
    board = EmulatorBoard(None, 1.0, player=("--play", "auto", "--seed", "3"))
    board.keep_game(game, [in_hand], occupied)
    got: queue.Queue[object] = queue.Queue()
    board.start(got.put)
    try:
        while True:
            item = got.get(timeout=20)
            if isinstance(item, ev.Snapshot):
                break
    finally:
        board.stop()
    assert item.occupied == occupied, chess.SquareSet(item.occupied ^ occupied)
