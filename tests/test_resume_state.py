"""A power cut at any moment of a game against a computer: the journal on disk, resumed,
brings the referee back to what the board showed when the power went (its LEDs), not
to an earlier state that a timer had already left (the computer's move seen made, a move
completed by release). Then the scan at connection finds the game where it was."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import chess
import pytest

from board_ctl.core import events as ev
from board_ctl.core.effects import LedFrame
from board_ctl.core.leds import led_frame
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import JournalWriter, read_journal
from board_ctl.service.game import GameFiles, GameSession, OutputNamer
from firmware_bridge.player import Person
from remotekit import Played, play


def files(folder: Path) -> GameFiles:
    folder.mkdir(parents=True, exist_ok=True)
    return OutputNamer(folder).files(1, dt.datetime(2026, 12, 1))


def shown(frame: LedFrame) -> tuple[object, ...]:
    return frame.squares, frame.status, frame.guidance


def game(seed: int, use_clock: bool) -> Played:
    person = Person(seed=seed, use_clock=use_clock)
    return play(person, remote=chess.BLACK if seed % 2 else chess.WHITE, seed=seed,
                max_plies=10, time_control="600+5" if use_clock else None)


def check_every_cut(tmp_path: Path, played: Played) -> int:
    """Feed the game to a journaled session as the service does (each item committed
    before its effects are shown); after each item that changed the LEDs, cut the power
    there and resume a copy of the journal. Returns the number of cuts checked."""
    journal = tmp_path / "live" / "journal.jsonl"
    session = GameSession(1, played.start, PROFILES["fide"], files(tmp_path / "live"), t0=0.0,
                          journal=JournalWriter.create(journal, played.start, "fide"))
    last: LedFrame | None = None
    cuts = 0
    for item in played.events:
        frames = [e for e in session.feed(item) if isinstance(e, LedFrame)]
        session.commit()
        if not frames:
            continue
        last = frames[-1]
        cut = tmp_path / f"cut{cuts}" / "journal.jsonl"
        cut.parent.mkdir()
        shutil.copyfile(journal, cut)
        recovered = read_journal(cut)
        resumed = GameSession(1, recovered.start, PROFILES["fide"], files(cut.parent), t0=None,
                              recovered=recovered)
        again = led_frame(resumed.resume_at, resumed.referee.led_view())  # as the service
        assert shown(again) == shown(last), (
            f"cut after {item} at ply {len(session.record.moves)}: resumed to "
            f"{again}\n  but the board showed {last}")
        assert ([m.move for m in resumed.record.moves]
                == [m.move for m in session.record.moves])
        resumed.close()
        shutil.rmtree(cut.parent)
        cuts += 1
    session.close()
    return cuts


@pytest.mark.parametrize("use_clock", [False, True])
def test_a_cut_after_any_change_of_the_leds_resumes_to_what_they_showed(
        tmp_path: Path, use_clock: bool) -> None:
    played = game(1, use_clock)
    assert len(played.chosen) >= 10
    assert check_every_cut(tmp_path, played) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 10))
@pytest.mark.parametrize("use_clock", [False, True])
def test_many_games_cut_anywhere_resume_to_what_the_leds_showed(
        tmp_path: Path, seed: int, use_clock: bool) -> None:
    assert check_every_cut(tmp_path, game(seed, use_clock)) >= 20
