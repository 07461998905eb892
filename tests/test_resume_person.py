"""A game against the computer resumed after the service was killed with its built-in
board emulator: the fresh emulator's pieces stand at the start, its person remembers the
game (as a player does) and puts the pieces back where the LEDs guide him, then plays
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

    def fresh(memory: Remembered) -> Person:
        remembered.append(memory)
        return Person(memory.fen, seed=seed + 1000, memory=lambda: memory)

    first = Person(seed=seed)
    played = play(first, remote=remote, seed=seed, max_plies=30, restarts={nth: after},
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
