"""The crash-safe journal of a game: every record on disk before its effect is shown.

One JSON object a line: the sensor-log and game-report objects themselves, a sequence
number (`seq`: 1, 2, 3 ... in the order written) and a CRC-32 of the line. Records are
written in groups (everything the service took from its queue at once) and fsync'd once
per group, before any of the group's effects is shown. Because the referee is pure and
deterministic, the journal's events alone rebuild the game exactly (position, moves,
clocks, penalties, touched pieces); its effect lines are the record of what was shown,
for people and for checking.

Reading never destroys anything and says what it found, line by line:

- a torn last line (the power went during a write) is dropped: it never was a record;
- a line whose checksum fails is corrupt; one flipped bit anywhere in it (its end of
  line included) is repaired, since the checksum then says which bit it was;
- the sequence numbers show deleted lines (a gap) and duplicated ones (a number seen
  before: the copy is dropped, so a duplicated line never changes a game);
- the intact records after a lost one are salvaged when they are consistent: the game
  replayed without the lost record must give the moves, alerts and results that the
  journal itself recorded after it; otherwise the game is recovered up to the damage.

A service that resumes a damaged journal keeps the original beside it
(`journal.jsonl.damaged`) and rewrites the journal with what was recovered.

Records:
    {"ev": "start", "profile": .., "board": .., "game": ..}
                                    the game's start (sensor-log `start` object, the rule
                                    profile, the board it is played on: a game resumes
                                    only on that board; and the game's id)
    {"kind": "files", "pgn": ..}    where the game's PGN, report and sensor log are written
    {"t": .., "ev": "lift", ...}    every sensor/clock/button event (sensor-log objects)
    {"t": .., "kind": "move", ...}  every effect (game-report objects, LED frames excepted)
    {"t": .., "kind": "time"}       a clock ran at least until t (nothing else happened)
    {"t": .., "kind": "resume"}     the service restarted here (power cut, crash)
    {"t": .., "kind": "order"}      an arbiter's order, {"kind": "ack"} an alert acknowledged
                                    (board_ctl.hall: who did what; the game's own effects
                                    of an order are the events and effects that follow)
    {"t": .., "kind": "end"}        the game is over and archived; with "abandoned": true,
                                    left unfinished for good (a new game was set up on its
                                    board, or `board-ctl games --abandon`)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from board_ctl.core import events as ev
from board_ctl.core.effects import Effect, LedFrame
from board_ctl.errors import BoardCtlError, SensorLogError
from board_ctl.record import report_object
from board_ctl.sensorlog import StartInfo, event_to_json, parse_line, start_to_json
from board_ctl.storage import AppendFile, describe, unique_name, write_atomic_bytes
from board_ctl.words import count

log = logging.getLogger(__name__)

DAMAGED = ".damaged"  # the original of a damaged journal, kept beside it
# The game-report kinds (record.report_object): what the referee's effects leave. Other
# kinds are the journal's own bookkeeping (start of files, time marks, restarts, the end)
# or notes of those who acted on the game (an arbiter's order, an acknowledgement).
EFFECT_KINDS = frozenset({"move", "alert", "clear", "result", "penalty", "note", "tags"})
REPAIR_LIMIT = 1024  # bytes: a corrupt stretch longer than this is not searched for a flip


class JournalError(BoardCtlError, OSError):
    """A journal that cannot be written or read at all."""


def _canonical(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def encode_record(obj: dict[str, Any]) -> str:
    """The line for a record: its canonical JSON with the CRC-32 of that JSON added."""
    text = _canonical(obj)
    crc = zlib.crc32(text.encode("utf-8"))
    return f'{text[:-1]},"crc":"{crc:08x}"}}\n' if obj else f'{{"crc":"{crc:08x}"}}\n'


def decode_record(line: str) -> dict[str, Any] | None:
    """The record of a complete, intact line (its `seq` included); None for a torn or
    corrupt one."""
    if not line.endswith("\n"):
        return None  # the write was cut short
    try:
        obj = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("crc"), str):
        return None
    crc = obj.pop("crc")
    if f"{zlib.crc32(_canonical(obj).encode('utf-8')):08x}" != crc:
        return None
    return obj


def _decode(chunk: bytes) -> dict[str, Any] | None:
    """A line's bytes (without its end of line) as a record."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decode_record(text + "\n")


@dataclass
class Recovered:
    """What a journal holds, as far as it is intact."""

    start: StartInfo
    events: list[ev.Event]
    effects: list[dict[str, Any]]
    profile: str = "fide"
    board: str | None = None  # the board it is played on (None: a journal from before)
    resumes: int = 0
    ended: bool = False
    abandoned: bool = False  # ended unfinished: nothing settled or guessed at its end
    last_t: float = 0.0
    intact_lines: int = 0  # lines at the start of the file that are read as written
    problems: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # pgn, report, sensor
    records: list[dict[str, Any]] = field(default_factory=list)  # kept, in order, no seq
    last_seq: int = 0  # the sequence number the next record written follows
    damaged: bool = False  # more than a torn tail: the journal must be rewritten to go on

    @property
    def finished(self) -> bool:
        """Over (a result), or archived as ended: not to be resumed, and its end settled."""
        return self.ended or any(e.get("kind") == "result" for e in self.effects)

    @property
    def settled(self) -> bool:
        """Finished, and settled at its end as the service settles a game that ends (a
        move on its way completed): an abandoned game is not, it keeps only the moves
        that were made."""
        return self.finished and not self.abandoned


@dataclass
class _Line:
    number: int  # 1-based line of the file
    record: dict[str, Any] | None  # None: corrupt
    seq: int = 0
    repaired: bool = False


def read_journal(path: Path) -> Recovered:
    """Read a journal, salvaging every intact, consistent record and saying what was
    dropped or repaired and why (see the module's docstring)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read journal {path}: {exc.strerror or exc}") from exc
    chunks = raw.split(b"\n")
    tail = chunks.pop()  # after the last end of line: b"" unless a write was torn
    total = len(chunks) + (1 if tail else 0)
    problems: list[str] = []
    lines = [_Line(n, _decode(c)) for n, c in enumerate(chunks, start=1)]
    if tail and _flip_search(tail, last=True) is not None:  # the last end of line's bit
        chunks.append(tail[:-1])
        lines.append(_Line(total, _decode(tail[:-1]), repaired=True))
        problems.append(f"journal {path}: line {total}: one flipped bit, repaired (the "
                        f"checksum says which)")
        tail = b""
    lines = _repaired(lines, chunks, problems, path)
    kept, intact, losses, damaged = _in_sequence(lines, total, problems, path)
    recovered = _build(kept, problems)
    if losses:
        recovered = _salvage(kept, losses, problems, path, recovered)
    if tail:
        problems.append(
            f"journal {path}: line {total} of {total} is torn (cut short by a power cut "
            f"or crash); recovered the game up to line {total - 1}, dropping 1 line"
            if not damaged else
            f"journal {path}: line {total} of {total} is torn (cut short by a power cut "
            f"or crash): dropped")
    recovered.problems = problems
    recovered.intact_lines = intact
    recovered.damaged = damaged
    return recovered


def _repaired(lines: list[_Line], chunks: list[bytes], problems: list[str],
              path: Path) -> list[_Line]:
    """Each stretch of corrupt lines tried with each one of its bits flipped (an end of
    line included): a single flipped bit is found by the checksums and undone."""
    out: list[_Line] = []
    i = 0
    while i < len(lines):
        if lines[i].record is not None:
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].record is None:
            j += 1
        fixed = _flip_search(b"\n".join(chunks[i:j]))
        if fixed is None:
            out.extend(lines[i:j])
        else:
            first, last = lines[i].number, lines[j - 1].number
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            problems.append(f"journal {path}: {where}: one flipped bit, repaired (the "
                            f"checksum says which)")
            out.extend(_Line(first, record, repaired=True) for record in fixed)
        i = j
    return out


def _flip_search(stretch: bytes, last: bool = False) -> list[dict[str, Any]] | None:
    """The records of `stretch` (lines without their final end of line) with one bit
    flipped back, or None. `last`: the file's unterminated end, whose final byte may be
    the end of line that was flipped (a torn write cannot be completed by a flip)."""
    if len(stretch) > REPAIR_LIMIT:
        return None
    data = bytearray(stretch)
    for index in range(len(stretch) - 1, len(stretch)) if last else range(len(stretch)):
        original = stretch[index]
        for bit in range(8):
            data[index] = original ^ (1 << bit)
            parts = bytes(data).split(b"\n")
            if last and parts[-1] == b"":
                parts.pop()
            records = [_decode(part) for part in parts]
            if records and all(r is not None for r in records):
                return [r for r in records if r is not None]
        data[index] = original
    return None


def _in_sequence(lines: list[_Line], total: int, problems: list[str], path: Path
                 ) -> tuple[list[_Line], int, list[tuple[int, int]], bool]:
    """The records in their sequence, duplicates dropped and losses found: (kept lines,
    the lines read as written before any problem, the losses as (index in `kept` of the
    record after them, records lost), whether anything was dropped or repaired)."""
    kept: list[_Line] = []
    by_seq: dict[int, dict[str, Any]] = {}
    losses: list[tuple[int, int]] = []
    expected, unaccounted = 1, 0  # corrupt lines not yet matched with a gap
    intact, clean = 0, True
    for line in lines:
        if line.record is None:
            problems.append(f"journal {path}: line {line.number} of {total} is corrupt "
                            f"(its checksum does not match)")
            losses.append((len(kept), 1))
            unaccounted += 1
            clean = False
            continue
        record = dict(line.record)
        seq = record.pop("seq", None)
        if isinstance(seq, bool) or not isinstance(seq, int):
            seq = expected  # a journal written before sequence numbers
        if seq < expected:
            copy = "a duplicate" if by_seq.get(seq) == record else "a stray copy"
            problems.append(f"journal {path}: line {line.number} of {total} is {copy} of "
                            f"record {seq} (seen before): dropped")
            clean = False
            continue
        gap = seq - expected - unaccounted
        if gap > 0:
            problems.append(f"journal {path}: {count(gap, 'record')} missing before line "
                            f"{line.number} (numbers {expected}-{seq - 1}): lines deleted "
                            f"or lost")
            losses.append((len(kept), gap))
            clean = False
        unaccounted = 0
        expected = seq + 1
        by_seq[seq] = record
        kept.append(_Line(line.number, record, seq, line.repaired))
        clean = clean and not line.repaired
        if clean:
            intact = line.number
    return kept, intact, losses, not clean


def _build(lines: list[_Line], problems: list[str]) -> Recovered:
    recovered = Recovered(StartInfo(), [], [])
    for line in lines:
        assert line.record is not None
        _take(recovered, line.record, line.number, problems)
        recovered.records.append(line.record)
        recovered.last_seq = line.seq
    return recovered


def _is_effect(record: dict[str, Any]) -> bool:
    return "ev" not in record and record.get("kind") in EFFECT_KINDS


def _salvage(kept: list[_Line], losses: list[tuple[int, int]], problems: list[str],
             path: Path, whole: Recovered) -> Recovered:
    """Keep the records after a loss if the game without the lost ones is the game the
    journal recorded; else only those before the first loss."""
    lost_at = losses[0][0]
    if lost_at == 0 or (kept[0].record or {}).get("ev") != "start":
        problems.append(f"journal {path}: its start line is lost: nothing can be salvaged")
        return _build([], [])
    after = len(kept) - lost_at
    if after == 0:
        return whole
    # where each loss falls among the journal's effects
    effects_before = [0]
    for line in kept:
        effects_before.append(effects_before[-1] + _is_effect(line.record or {}))
    gaps: dict[int, int] = {}
    for index, lost in losses:
        gaps[effects_before[index]] = gaps.get(effects_before[index], 0) + lost
    if _consistent(whole, gaps):
        problems.append(f"journal {path}: the {count(after, 'intact record')} after the damage "
                        f"are salvaged: replayed without what was lost, they give the "
                        f"moves, alerts and result the journal recorded")
        return whole
    first = kept[lost_at].number
    problems.append(f"journal {path}: the {count(after, 'intact record')} from line {first} on "
                    f"do not agree with the game without what was lost: recovered the "
                    f"game up to the damage (the file keeps them)")
    return _build(kept[:lost_at], [])


def _comparable(obj: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in obj.items() if k not in ("t", "seq")},
                      sort_keys=True)


def _consistent(recovered: Recovered, gaps: dict[int, int]) -> bool:
    """The journal's effects are those of its events replayed, but for the records lost:
    a replayed effect the journal lacks is allowed only where records were lost (`gaps`:
    effects recorded before the loss -> records lost there)."""
    recorded = [_comparable(e) for e in recovered.effects]
    replayed = [_comparable(json.loads(json.dumps(line)))
                for line in replay_effects(recovered)]
    budget = dict(gaps)
    j = 0
    for effect in replayed:
        if j < len(recorded) and effect == recorded[j]:
            j += 1
        elif budget.get(j, 0) > 0:
            budget[j] -= 1
        else:
            return False
    return j == len(recorded)


def replay_effects(recovered: Recovered) -> list[dict[str, Any]]:
    """The report objects (LED frames left out) of the journal's events replayed as the
    live game saw them: a finished game settled at its end, one in progress not."""
    from board_ctl.core.profiles import PROFILES
    from board_ctl.replay import new_game

    profile = PROFILES.get(recovered.profile, PROFILES["fide"])
    referee, _ = new_game(recovered.start, profile)
    effects: list[Effect] = []
    for event in recovered.events:
        effects += referee.feed(event)
    effects += (referee.finish(recovered.last_t) if recovered.settled
                else referee.feed(ev.Tick(max(recovered.last_t, referee.now))))
    return [line for effect in effects if not isinstance(effect, LedFrame)
            if (line := report_object(effect)) is not None]


def _take(recovered: Recovered, record: dict[str, Any], number: int,
          problems: list[str]) -> None:
    if "ev" in record:
        # (the start's `profile` is the sensor log's: its start line says it too; `board`
        # names the board the game is played on, the journal's own)
        obj = {k: v for k, v in record.items() if k != "board"}
        try:
            item = parse_line(json.dumps(obj), number)
        except SensorLogError as exc:
            problems.append(f"journal line {number}: {exc}")
            return
        if isinstance(item, StartInfo):
            recovered.start = item
            recovered.profile = str(record.get("profile", "fide"))
            board = record.get("board")
            recovered.board = board if isinstance(board, str) else None
        elif item is not None:
            recovered.events.append(item)
            recovered.last_t = max(recovered.last_t, item.t)
        return
    kind = record.get("kind")
    if kind == "resume":
        recovered.resumes += 1
    elif kind == "end":
        recovered.ended = True
        recovered.abandoned = record.get("abandoned") is True
    elif kind == "files":
        recovered.files = {k: str(v) for k, v in record.items()
                           if k in ("pgn", "report", "sensor") and isinstance(v, str)}
        return
    elif kind in EFFECT_KINDS:
        recovered.effects.append(record)
    if kind is not None:  # the clock ran at least until then (a time mark, an effect ...)
        t = record.get("t", 0.0)
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            recovered.last_t = max(recovered.last_t, float(t))


def _keep_aside(path: Path) -> Path:
    """A copy of the journal as it is, beside it (a second name for the same file where
    the file system allows, so even a full disk has room for it)."""
    aside = unique_name(path, DAMAGED)
    try:
        os.link(path, aside)
    except OSError:
        shutil.copy2(path, aside)
    return aside


class JournalWriter:
    """Appends records and makes them durable before the caller shows them.

    Records are staged (`record`, `mark_time`) and written together by `commit`, one
    fsync for the lot; `write` (the start, a restart, the end) commits at once. A commit
    the disk refuses raises JournalError naming the file and the disk; the journal is
    left as it was before the commit, and the records wait, in order, for the next one.
    """

    def __init__(self, file: AppendFile, seq: int = 0) -> None:
        self.file = file
        self.path = file.path
        self._seq = seq

    @classmethod
    def create(cls, path: Path, start: StartInfo, profile: str = "fide",
               files: dict[str, str] | None = None, *, commit: bool = True,
               board: str | None = None, game_id: str | None = None,
               prepared: bool = False) -> JournalWriter:
        """A new journal (never overwriting one) of the game `game_id` played on
        `board`. With commit False, the file is created at the first `commit` (nothing
        is left on disk if that fails). `prepared`: the file exists already, empty and
        durable (Archive.prepare), and is appended to."""
        writer = cls(AppendFile(path, "journal", durable=True, fresh=not prepared))
        first = start_to_json(start) | {"profile": profile}
        if board is not None:
            first["board"] = board
        if game_id is not None:
            first["game"] = game_id
        writer.stage([first])
        if files:
            writer.stage([{"kind": "files", **files}])
        if commit:
            writer.commit()
        return writer

    @classmethod
    def reopen(cls, path: Path, recovered: Recovered) -> JournalWriter:
        """Go on writing a recovered journal: a torn tail is cut off; a damaged journal
        is kept beside (`.damaged`) and rewritten with what was recovered."""
        try:
            if recovered.damaged:
                lines = [encode_record(record | {"seq": n})
                         for n, record in enumerate(recovered.records, start=1)]
                aside = _keep_aside(path)
                try:
                    write_atomic_bytes(path, "".join(lines).encode("utf-8"))
                except OSError:
                    aside.unlink()  # the original is still where it was
                    raise
                log.warning("journal %s was damaged: the original is kept as %s", path,
                            aside.name)
                seq = len(lines)
            else:
                with path.open("rb+") as raw:
                    data = raw.read()
                    whole = data.rfind(b"\n") + 1  # every complete line is intact
                    if whole != len(data):  # cut off a torn tail
                        raw.truncate(whole)
                        raw.flush()
                        os.fsync(raw.fileno())
                seq = recovered.last_seq
        except OSError as exc:
            raise JournalError(describe(exc, "journal", path)) from None
        return cls(AppendFile(path, "journal", durable=True), seq)

    @classmethod
    def resume(cls, path: Path, recovered: Recovered, t: float) -> JournalWriter:
        """`reopen`, then the restart is marked."""
        writer = cls.reopen(path, recovered)
        writer.write([{"t": round(t, 6), "kind": "resume"}])
        return writer

    @property
    def waiting(self) -> int:
        """Records staged or refused by the disk, not yet durable."""
        return self.file.waiting

    def stage(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            self._seq += 1
            self.file.add(encode_record(record | {"seq": self._seq}).encode("utf-8"))

    def commit(self) -> None:
        error = self.file.flush()
        if error is not None:
            raise JournalError(error)

    def write(self, records: Iterable[dict[str, Any]]) -> None:
        self.stage(records)
        self.commit()

    def record(self, event: ev.Event | None, effects: Iterable[Effect]) -> None:
        """Stage one event and what it caused (durable at the next commit)."""
        records = [event_to_json(event)] if event is not None else []
        records += [line for effect in effects if not isinstance(effect, LedFrame)
                    if (line := report_object(effect)) is not None]
        self.stage(records)

    def mark_time(self, t: float) -> None:
        """Time has reached ``t`` with nothing to record: after a power cut the thinking
        time up to here is still charged (only the time the power was off is not)."""
        self.stage([{"t": round(t, 6), "kind": "time"}])

    def files(self, files: dict[str, str]) -> None:
        self.stage([{"kind": "files", **files}])

    def end(self, t: float, *, abandoned: bool = False) -> None:
        """The game is over (abandoned: left unfinished for good)."""
        record: dict[str, Any] = {"t": round(t, 6), "kind": "end"}
        if abandoned:
            record["abandoned"] = True
        self.write([record])

    def close(self) -> None:
        """Commit what is staged (a failure is logged: the records are lost with the
        process, which is ending), then close."""
        try:
            self.commit()
        except JournalError as exc:
            log.error("%s; %s not written", exc, count(self.waiting, "record"))
        self.file.close()
