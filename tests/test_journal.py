"""The crash-safe journal: what a power cut leaves is recovered, said, and resumed."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import chess
import pytest

from board_ctl.archive import Archive
from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import JournalWriter, decode_record, encode_record, read_journal
from board_ctl.replay import feed_all, new_game, replay_events
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderStyle, render_game
from corpus import corpus


def rendered_log(index: int, **style: object):  # type: ignore[no-untyped-def]
    rendered = render_game(corpus()[index], seed=index, style=RenderStyle(**style))
    return rendered, read_sensor_log(rendered.jsonl().splitlines())


def play_into_journal(path: Path, log, upto: int | None = None,  # type: ignore[no-untyped-def]
                      writer: JournalWriter | None = None) -> None:
    """What the service does: each event and its effects on disk before they are shown."""
    writer = writer or JournalWriter.create(path, log.start, "fide")
    referee, record = new_game(log.start, PROFILES["fide"])
    for event in log.events[:upto]:
        effects = referee.feed(event)
        writer.record(event, effects)
        record.extend(effects)
    if upto is None:
        writer.record(None, referee.finish())
    writer.close()


def test_record_lines_carry_a_checksum() -> None:
    line = encode_record({"t": 1.5, "ev": "lift", "sq": "e2"})
    assert decode_record(line) == {"t": 1.5, "ev": "lift", "sq": "e2"}
    assert decode_record(line.replace("e2", "e3")) is None  # corrupt
    assert decode_record(line[:-1]) is None  # torn: no end of line
    assert decode_record(line[: len(line) // 2]) is None


def test_a_journal_replays_to_the_same_game(tmp_path: Path) -> None:
    rendered, log = rendered_log(0)
    journal = tmp_path / "journal.jsonl"
    play_into_journal(journal, log)
    recovered = read_journal(journal)
    assert recovered.problems == [] and recovered.events == log.events
    moves = [e["uci"] for e in recovered.effects if e["kind"] == "move"]
    assert moves == [m.uci() for m in rendered.moves]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_a_power_cut_anywhere_loses_no_complete_record(tmp_path: Path, seed: int) -> None:
    rendered, log = rendered_log(seed % 5 + 1)
    journal = tmp_path / "journal.jsonl"
    play_into_journal(journal, log)
    data = journal.read_bytes()
    cut = random.Random(seed).randrange(len(data) // 10, len(data))
    journal.write_bytes(data[:cut])  # the power went off in the middle of a write
    recovered = read_journal(journal)
    complete = data[:cut].count(b"\n")
    assert recovered.intact_lines == complete
    if not data[:cut].endswith(b"\n"):
        assert len(recovered.problems) == 1 and "torn" in recovered.problems[0]
        assert f"up to line {complete}" in recovered.problems[0]
    # Every event whose line was complete is back, in order.
    assert recovered.events == log.events[: len(recovered.events)]
    # The game resumes: the cut tail is removed and the rest of the game appended.
    writer = JournalWriter.resume(journal, recovered, recovered.last_t)
    referee, record = new_game(recovered.start, PROFILES["fide"])
    feed_all(referee, record, recovered.events)
    rest = log.events[len(recovered.events):]
    for event in rest:
        effects = referee.feed(event)
        writer.record(event, effects)
        record.extend(effects)
    record.extend(referee.finish())
    writer.close()
    assert [m.move for m in record.moves] == rendered.moves
    again = read_journal(journal)
    assert again.problems == [] and again.resumes == 1 and again.events == log.events


def test_a_corrupt_line_in_the_middle_is_reported(tmp_path: Path) -> None:
    _, log = rendered_log(2)
    journal = tmp_path / "journal.jsonl"
    play_into_journal(journal, log)
    lines = journal.read_text().splitlines(keepends=True)
    lines[40] = lines[40].replace('"lift"', '"list"')
    journal.write_text("".join(lines))
    recovered = read_journal(journal)
    assert recovered.intact_lines == 40
    assert "line 41" in recovered.problems[0] and "corrupt" in recovered.problems[0]


def test_the_archive_lists_and_exports_games_also_in_progress(tmp_path: Path) -> None:
    archive = Archive(tmp_path)
    rendered, log = rendered_log(3)
    game_id, writer = archive.new_game(log.start, dt.datetime(2026, 11, 30, 15, 30), "fide")
    play_into_journal(writer.path, log, upto=len(log.events) // 2, writer=writer)
    [game] = archive.games()
    assert game.game_id == "20261130-153000" and not game.finished
    unfinished = archive.unfinished()
    assert unfinished is not None and unfinished.game_id == game_id
    half = game.pgn_text()
    assert '[Date "2026.11.30"]' in half and '[Result "*"]' in half
    whole = replay_events(log.start, log.events, PROFILES["fide"])
    assert len(whole.moves) == len(rendered.moves)
    assert archive.find("20261130").game_id == game_id


def test_snapshot_after_a_restart_reconciles_without_a_phantom_move() -> None:
    # A knight knocked off while the power was off: the snapshot shows g1 empty.
    start_log = read_sensor_log(['{"t": 1.0, "ev": "lift", "sq": "e2"}',
                                 '{"t": 1.5, "ev": "place", "sq": "e4"}',
                                 '{"t": 2.0, "ev": "clock", "side": "white"}'])
    referee, record = new_game(start_log.start, PROFILES["fide"])
    feed_all(referee, record, start_log.events)
    after = chess.Board()
    after.push_uci("e2e4")
    record.extend(referee.feed(ev.Snapshot(3.0, after.occupied & ~chess.BB_G1)))
    record.extend(referee.feed(ev.Tick(5.0)))
    assert [line["code"] for line in record.report if line["kind"] == "alert"] == [
        "position-mismatch"]
    record.extend(referee.feed(ev.Snapshot(6.0, after.occupied)))
    assert [m.san for m in record.moves] == ["e4"]
    assert [line["code"] for line in record.report if line["kind"] == "clear"] == [
        "position-mismatch"]
