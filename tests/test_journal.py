"""The crash-safe journal: what a power cut leaves is recovered, said, and resumed."""

from __future__ import annotations

import datetime as dt
import json
import random
import tempfile
from pathlib import Path

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.archive import Archive
from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.journal import (
    JournalWriter,
    decode_record,
    encode_record,
    read_journal,
    replay_effects,
)
from board_ctl.replay import feed_all, new_game, replay_events
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderStyle, render_game
from corpus import corpus
from servicekit import pgn_moves


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


# ---------------------------------------------------------------- damage, found and salvaged


def journaled(tmp_path: Path, index: int, upto: int | None = None):  # type: ignore[no-untyped-def]
    """A rendered corpus game journaled as the service does; (journal path, its lines,
    the game's moves as replayed from the whole journal)."""
    _, log = rendered_log(index)
    path = tmp_path / f"journal-{index}.jsonl"
    play_into_journal(path, log, upto=upto)
    recovered = read_journal(path)
    assert recovered.problems == []
    return path, path.read_bytes().splitlines(keepends=True), recovered


def uci_of(recovered) -> list[str]:  # type: ignore[no-untyped-def]
    return [e["uci"] for e in recovered.effects if e["kind"] == "move"]


def test_records_carry_their_sequence_number(tmp_path: Path) -> None:
    _, lines, recovered = journaled(tmp_path, 1)
    seqs = [json.loads(line)["seq"] for line in lines]
    assert seqs == list(range(1, len(lines) + 1))
    assert recovered.last_seq == len(lines)


@pytest.mark.parametrize("seed", range(40))
def test_one_flipped_bit_anywhere_is_repaired(tmp_path: Path, seed: int) -> None:
    """A bit flipped in any line, its end of line included (two lines then read as one,
    or one as two), loses nothing: the checksums say which bit it was."""
    rng = random.Random(seed)
    path, lines, whole = journaled(tmp_path, 1 + seed % 4, upto=None if seed % 2 else 150)
    data = bytearray(b"".join(lines))
    at = rng.randrange(len(data))
    data[at] ^= 1 << rng.randrange(8)
    path.write_bytes(bytes(data))
    line = data[:at].count(b"\n") + 1
    recovered = read_journal(path)
    assert any(f"line {line}" in p and "repaired" in p for p in recovered.problems), \
        recovered.problems
    assert recovered.events == whole.events and recovered.effects == whole.effects
    assert recovered.intact_lines == line - 1 and recovered.damaged


@pytest.mark.parametrize("bit", range(8))
def test_a_flipped_last_end_of_line_is_repaired_not_taken_for_a_torn_write(
        tmp_path: Path, bit: int) -> None:
    path, lines, whole = journaled(tmp_path, 2, upto=80)
    data = bytearray(b"".join(lines))
    data[-1] ^= 1 << bit
    path.write_bytes(bytes(data))
    recovered = read_journal(path)
    assert recovered.problems == [f"journal {path}: line {len(lines)}: one flipped bit, "
                                  f"repaired (the checksum says which)"]
    assert recovered.events == whole.events and recovered.effects == whole.effects
    JournalWriter.resume(path, recovered, recovered.last_t).close()  # goes on whole
    again = read_journal(path)
    assert again.problems == [] and again.events == whole.events and again.resumes == 1


def garble(line: bytes) -> bytes:
    """A line damaged beyond one bit (a bad sector, a stray write)."""
    return line[:5] + b"\x00\xff garbage \x00" + line[len(line) // 2:]


@pytest.mark.parametrize("seed", range(30))
def test_records_after_a_destroyed_line_are_salvaged_when_consistent(tmp_path: Path,
                                                                    seed: int) -> None:
    """A destroyed line is reported with its number. The records after it are kept when
    the game without the lost record is the game they recorded (always so for a lost
    effect or time mark: the events alone make the game); otherwise the game is
    recovered up to the damage. Never another game."""
    rng = random.Random(seed)
    path, lines, whole = journaled(tmp_path, 1 + seed % 5)
    index = rng.randrange(2, len(lines) - 1)
    lost = json.loads(lines[index])
    lines[index] = garble(lines[index])
    path.write_bytes(b"".join(lines))
    recovered = read_journal(path)
    assert f"line {index + 1} of {len(lines)} is corrupt" in recovered.problems[0]
    # then what became of the records after it (the old reader dropped them all, unsaid)
    assert len(recovered.problems) == 2, recovered.problems

    def game(recovered):  # type: ignore[no-untyped-def]
        return [{k: v for k, v in e.items() if k != "t"} for e in replay_effects(recovered)]

    whole_game = game(whole)
    if "ev" not in lost:
        assert "salvaged" in recovered.problems[1], recovered.problems
    if "salvaged" in recovered.problems[1]:
        assert game(recovered) == whole_game  # the same game: moves, clocks, alerts
        assert len(recovered.events) == len(whole.events) - ("ev" in lost)
    else:
        assert "do not agree" in recovered.problems[1]
        prefix = read_journal_prefix(tmp_path, lines[:index])
        assert recovered.events == prefix.events and recovered.effects == prefix.effects
    assert recovered.damaged and recovered.intact_lines == index


def read_journal_prefix(tmp_path: Path, lines: list[bytes]):  # type: ignore[no-untyped-def]
    prefix = tmp_path / "prefix.jsonl"
    prefix.write_bytes(b"".join(lines))
    return read_journal(prefix)


@pytest.mark.parametrize("seed", range(12))
def test_a_duplicated_line_is_dropped_and_changes_nothing(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path, lines, whole = journaled(tmp_path, 1 + seed % 4, upto=60 + seed * 7)
    index = len(lines) - 1 if seed % 3 == 0 else rng.randrange(1, len(lines))
    lines.insert(index + 1, lines[index])  # the last line twice, or any other
    path.write_bytes(b"".join(lines))
    recovered = read_journal(path)
    assert recovered.problems == [f"journal {path}: line {index + 2} of {len(lines)} is a "
                                  f"duplicate of record {index + 1} (seen before): dropped"]
    assert recovered.events == whole.events and recovered.effects == whole.effects


def test_a_duplicated_last_press_does_not_change_the_game(tmp_path: Path) -> None:
    """The old journal took the copy for a second press: a press without a move."""
    path, lines, whole = journaled(tmp_path, 2, upto=None)
    index = max(i for i, line in enumerate(lines) if b'"ev":"clock"' in line)
    path.write_bytes(b"".join(lines[: index + 1] + [lines[index]]))
    recovered = read_journal(path)
    assert len(recovered.problems) == 1 and "duplicate" in recovered.problems[0]
    from board_ctl.archive import GameEntry

    game = GameEntry("x", tmp_path, recovered).record()
    assert not [r for r in game.report if r["kind"] in ("alert", "penalty")]


@pytest.mark.parametrize("seed", range(12))
def test_a_deleted_line_is_found(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path, lines, whole = journaled(tmp_path, 1 + seed % 4)
    index = rng.randrange(2, len(lines) - 1)
    gone = json.loads(lines.pop(index))
    path.write_bytes(b"".join(lines))
    recovered = read_journal(path)
    assert recovered.problems[0] == (
        f"journal {path}: 1 record missing before line {index + 1} (numbers "
        f"{gone['seq']}-{gone['seq']}): lines deleted or lost")
    if "kind" in gone:
        assert recovered.events == whole.events and "salvaged" in recovered.problems[1]


def test_resuming_a_damaged_journal_keeps_the_original_and_goes_on_clean(
        tmp_path: Path) -> None:
    path, lines, whole = journaled(tmp_path, 3, upto=120)
    effect = next(i for i, line in enumerate(lines) if b'"kind":"move"' in line)
    lines[effect] = garble(lines[effect])
    damaged = b"".join(lines)
    path.write_bytes(damaged)
    recovered = read_journal(path)
    assert "salvaged" in recovered.problems[1] and recovered.damaged
    writer = JournalWriter.resume(path, recovered, recovered.last_t)
    writer.close()
    assert path.with_name(path.name + ".damaged").read_bytes() == damaged  # never destroyed
    again = read_journal(path)
    assert again.problems == [] and again.events == whole.events and again.resumes == 1
    seqs = [json.loads(line)["seq"] for line in path.read_bytes().splitlines()]
    assert seqs == list(range(1, len(seqs) + 1))
    # a second damage later keeps both originals
    path.write_bytes(path.read_bytes()[:-3] + b"xx\n")
    JournalWriter.resume(path, read_journal(path), 0.0).close()
    assert path.with_name(path.name + ".damaged-2").is_file()


def test_any_text_in_a_record_is_one_line(tmp_path: Path) -> None:
    """Unicode line and paragraph separators, NEL, form feeds: one record, one line."""
    path = tmp_path / "journal.jsonl"
    _, log = rendered_log(1)
    writer = JournalWriter.create(path, log.start)
    odd = "a\u2028b\u2029c\x85d\x0ce\x1cf\r\n"
    writer.write([{"t": 1.0, "kind": "note", "text": odd}])
    writer.close()
    recovered = read_journal(path)
    assert recovered.problems == [] and recovered.effects[0]["text"] == odd


def test_export_of_a_game_in_progress_has_no_guessed_move(tmp_path: Path) -> None:
    """Killed while White's queen is in hand (7. Qb3 on its way in the Opera game): the
    journal of the live game gives the six moves made; the old export ended `7. Qxf6`."""
    from board_ctl.archive import GameEntry

    rendered, log = rendered_log(0)  # classics.pgn 0: the Opera game
    assert rendered.moves[12].uci() == "f3b3"
    b3 = next(i for i, e in enumerate(log.events)
              if isinstance(e, ev.Placed) and e.square == chess.B3)
    lift = max(i for i, e in enumerate(log.events[:b3])
               if isinstance(e, ev.Lifted) and e.square == chess.F3)
    path = tmp_path / "journal.jsonl"
    play_into_journal(path, log, upto=lift + 1)
    text = GameEntry("x", tmp_path, read_journal(path)).pgn_text()
    assert pgn_moves(text) == [board.san(m) for board, m in sans(rendered.moves[:12])]
    assert "Qxf6" not in text and '[Result "*"]' in text


def sans(moves: list[chess.Move]):  # type: ignore[no-untyped-def]
    board = chess.Board()
    for move in moves:
        yield board.copy(), move
        board.push(move)


@pytest.mark.parametrize("index", range(1, 7))
def test_export_in_progress_gives_exactly_the_moves_completed(tmp_path: Path,
                                                              index: int) -> None:
    """At any moment of a game, the journal read back gives the moves the live referee
    had completed (its own move records), nothing guessed, nothing missing."""
    from board_ctl.archive import GameEntry

    _, log = rendered_log(index)
    rng = random.Random(index)
    for cut in sorted(rng.sample(range(2, len(log.events)), 12)):
        path = tmp_path / f"journal-{cut}.jsonl"
        play_into_journal(path, log, upto=cut)
        recovered = read_journal(path)
        record = GameEntry("x", tmp_path, recovered).record()
        assert [m.move.uci() for m in record.moves] == uci_of(recovered), cut


# ---------------------------------------------------------------- any damage at all

_PLAYED: dict[int, tuple[bytes, object]] = {}  # journals played once, damaged many times
DAMAGE = st.lists(st.tuples(st.sampled_from(["flip", "garble", "delete", "duplicate",
                                             "swap", "cut"]),
                            st.floats(0, 1), st.integers(0, 7)), min_size=1, max_size=4)


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=DAMAGE, index=st.integers(1, 4))
def test_any_damage_is_reported_and_never_gives_another_game(
        tmp_path: Path, damage: list[tuple[str, float, int]], index: int) -> None:
    """Bits flipped, lines garbled, deleted, duplicated, swapped, the file cut: reading
    never fails, says what it found, and the game it gives back is the journal's game
    or the beginning of it, never one that was not played."""
    if index not in _PLAYED:
        _, lines, whole = journaled(tmp_path, index, upto=150)
        _PLAYED[index] = (b"".join(lines), whole)
    original, whole = _PLAYED[index]
    data = original
    for what, where, bit in damage:
        if not data:
            break
        lines = data.splitlines(keepends=True)
        at = min(int(where * len(lines)), len(lines) - 1)
        if what == "flip":
            pos = min(int(where * len(data)), len(data) - 1)
            data = data[:pos] + bytes([data[pos] ^ (1 << bit)]) + data[pos + 1:]
            continue
        if what == "garble":
            lines[at] = garble(lines[at])
        elif what == "delete":
            del lines[at]
        elif what == "duplicate":
            lines.insert(at, lines[at])
        elif what == "swap" and at + 1 < len(lines):
            lines[at], lines[at + 1] = lines[at + 1], lines[at]
        elif what == "cut":
            data = data[: int(where * len(data))]
            continue
        data = b"".join(lines)
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "journal.jsonl"
    path.write_bytes(data)
    recovered = read_journal(path)
    if data != original:
        assert recovered.problems or len(recovered.events) < len(whole.events)
    moves = [m["uci"] for m in replay_effects(recovered) if m["kind"] == "move"]
    assert moves == uci_of(whole)[: len(moves)]


def test_who_did_what_records_do_not_stop_a_salvage(tmp_path: Path) -> None:
    """An arbiter's order and acknowledgement lines (board_ctl.hall) are the journal's own
    notes, not the game's effects: a damaged journal with them is still salvaged."""
    _, log = rendered_log(2)
    path = tmp_path / "journal.jsonl"
    writer = JournalWriter.create(path, log.start)
    referee, _ = new_game(log.start, PROFILES["fide"])
    for k, event in enumerate(log.events[:120]):
        writer.record(event, referee.feed(event))
        if k == 60:
            writer.stage([{"t": event.t, "kind": "ack", "code": "x", "by": "arbiter"},
                          {"t": event.t, "kind": "order", "what": "new-game", "by": "a"}])
    writer.close()
    whole = read_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    effect = next(i for i, line in enumerate(lines) if b'"kind":"move"' in line and i > 10)
    lines[effect] = garble(lines[effect])
    path.write_bytes(b"".join(lines))
    recovered = read_journal(path)
    assert "salvaged" in recovered.problems[1], recovered.problems
    assert recovered.events == whole.events
