"""The replay pipeline's cheap parts write and read exactly what the general ones do:
the movetext written from the SAN the referee recorded is python-chess's exporter's, byte
for byte; a plain lift/place line read without json is the event json would give, and
anything else (out of range, backwards, Unix time, odd spacing) goes the general way
with its error or warning."""

from __future__ import annotations

import datetime as dt
import io
import json

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl import sensorlog
from board_ctl.core.effects import Alert, GameOver, MoveMade, Note, TakenBack
from board_ctl.pgntags import header_line
from board_ctl.record import GameRecord
from board_ctl.replay import replay_log
from board_ctl.core.profiles import PROFILES
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import render_behaviour
from board_ctl.simulate.violations import NoEligiblePly
from test_simulate import classics

DATE = dt.date(2026, 1, 1)


def python_chess_pgn(record: GameRecord) -> str:
    """The PGN as python-chess exports the game built from the record (the oracle)."""
    game = record.pgn_game(DATE)
    tags = "\n".join(header_line(name, value) for name, value in game.headers.items())
    exporter = chess.pgn.StringExporter(headers=False, variations=True, comments=True)
    return f"{tags}\n\n{game.accept(exporter)}\n"


BEHAVIOURS = ["clean", "no-noise-from-fen", "touch-move", "illegal-move", "move-changed",
              "knocked-during-move", "knocked-restored-late", "blitz-scramble"]


def replayed(behaviour: str, limit: int) -> list[GameRecord]:
    """Up to `limit` classic games in `behaviour`, with a clock and without, replayed."""
    records = []
    for seed, game in enumerate(classics()):
        for use_clock in (True, False):
            if len(records) >= limit:
                return records
            try:
                rendered = render_behaviour(game, behaviour, seed=seed, use_clock=use_clock)
            except (NoEligiblePly, ValueError):
                continue
            log = read_sensor_log(io.StringIO(rendered.jsonl()))
            records.append(replay_log(log, PROFILES[rendered.profile]))
    return records


@pytest.mark.parametrize("behaviour", BEHAVIOURS)
def test_the_pgn_of_replayed_games_is_python_chess_s_byte_for_byte(behaviour: str) -> None:
    """Alerts and notes as comments, [%clk] with a time control, [%emt], games from a
    position with either side to move, every ending."""
    records = replayed(behaviour, limit=2)
    assert records
    for record in records:
        assert record._movetext(record.result.result if record.result else "*") is not None
        assert record.pgn_text(DATE) == python_chess_pgn(record)


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", ["illegal-castling", "selector-after-press",
                                       "knock-off-capture", *BEHAVIOURS])
def test_the_pgn_of_every_classic_game_is_python_chess_s(behaviour: str) -> None:
    for record in replayed(behaviour, limit=40):
        assert record.pgn_text(DATE) == python_chess_pgn(record)


def _made(ply: int, board: chess.Board, uci: str, clock: float | None = None,
          elapsed: float | None = None) -> MoveMade:
    move = chess.Move.from_uci(uci)
    san = board.san(move)
    board.push(move)
    return MoveMade(float(ply), ply, move, san, clock, elapsed)


@pytest.mark.parametrize("fen", [chess.STARTING_FEN,
                                 "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 7 41"])
def test_comments_takebacks_and_odd_texts_are_written_as_python_chess_does(fen: str) -> None:
    board = chess.Board(fen)
    black = board.turn == chess.BLACK
    record = GameRecord(start_fen=fen)
    ucis = (["e8g8", "e1c1", "a8a1", "h1h8"] if black else ["e2e4", "e7e5", "g1f3", "b8c6"])
    record.add(Note(0.0, "a note before the first move } with a brace"))
    record.add(_made(1, board, ucis[0], 5399.5, 0.0004))
    record.add(Alert(1.5, "touch-move", chess.WHITE, (chess.E2,), "x" * 150))
    record.add(_made(2, board, ucis[1], 3599.9996, 12.25))
    record.add(Note(2.5, "   "))
    record.add(_made(3, board, ucis[2], None, 61.0))
    board.pop()
    record.add(TakenBack(3.5, 1))
    record.add(_made(3, board, ucis[2], 0.0, None))
    record.add(_made(4, board, ucis[3], 7322.5, 3600.0))
    record.add(Note(4.5, "ends with a newline\n"))
    record.add(GameOver(5.0, "1/2-1/2", "agreement"))
    assert record._movetext("1/2-1/2") is not None
    assert record.pgn_text(DATE) == python_chess_pgn(record)


def test_no_move_and_a_result_then_a_clock_annotation_in_a_comment() -> None:
    record = GameRecord()
    record.add(Note(0.0, "before"))
    record.add(GameOver(1.0, "0-1", "resignation"))
    assert record.pgn_text(DATE) == python_chess_pgn(record)
    # A comment holding an annotation python-chess would rewrite: python-chess writes it.
    board = chess.Board()
    record = GameRecord()
    record.add(_made(1, board, "e2e4", 100.0, 1.0))
    record.add(Note(1.0, "an arbiter's reason: [%clk 0:00:07]"))
    record.add(_made(2, board, "e7e5", 90.0, 2.0))
    assert record._movetext("*") is None
    assert record.pgn_text(DATE) == python_chess_pgn(record)


@pytest.mark.parametrize("script, fen, time_control", [
    ("-d4 Cw ~1 T", "4k3/8/8/2p1p3/3B4/8/8/4K3 w - - 0 1", None),  # a capture square unseen
    ("-e1 @0.01 -f2 @0.2 +e2 @0.05 +f3 Cw", "4k3/8/8/8/8/8/5P2/4K3 w - - 0 1", "300+2"),
])
def test_a_move_read_uncertain_keeps_its_readings_in_the_report_and_its_note_in_the_pgn(
        script: str, fen: str, time_control: str | None) -> None:
    from script import play

    record = play(script, fen, time_control=time_control).record
    (made,) = record.moves
    assert made.uncertain  # (the scripts are read two ways alike)
    (line,) = [json.loads(text) for text in record.report_lines() if '"move"' in text]
    assert line["uncertain"] == [made.move.uci()] + [other.uci() for other in made.uncertain]
    assert record._movetext(record.result.result if record.result else "*") is not None
    pgn = record.pgn_text(DATE)
    assert pgn == python_chess_pgn(record) and "uncertain:" in pgn


# -- the reader's plain lines ---------------------------------------------------------------


def general_read(lines: list[str], monkeypatch: pytest.MonkeyPatch) -> sensorlog.SensorLog:
    """The log read with every line taken the general way (json)."""
    with monkeypatch.context() as patched:
        patched.setattr(sensorlog, "_PLAIN_SENSOR_LINE", lambda text: None)
        return read_sensor_log(lines)


def same(a: sensorlog.SensorLog, b: sensorlog.SensorLog) -> None:
    assert a.events == b.events and a.lines == b.lines and a.start == b.start
    assert [(str(e), e.line, type(e)) for e in a.errors] == \
        [(str(e), e.line, type(e)) for e in b.errors]
    assert [(str(w), w.line) for w in a.warnings] == [(str(w), w.line) for w in b.warnings]
    assert all(type(x.t) is float and type(x.t) is type(y.t)
               for x, y in zip(a.events, b.events))


NUMBERS = st.one_of(
    st.floats(min_value=0, max_value=2e12, allow_nan=False).map(repr),
    st.integers(min_value=0, max_value=10**13).map(str),
    st.sampled_from(["0", "-0", "-0.0", "0.0", "1e3", "1E-3", "2.5e+2", "1e400", "01", "1.",
                     ".5", "1_0", "999999999999.9999", "1000000000000", "1000000000001",
                     "1500000000.25", "-1", "NaN", "Infinity", "1" * 40]))
SQUARES = st.one_of(st.sampled_from(chess.SQUARE_NAMES),
                    st.sampled_from(["E2", "i9", "a0", "e22", ""]))


@st.composite
def plain_like_lines(draw: st.DrawFn) -> str:
    t, sq = draw(NUMBERS), draw(SQUARES)
    ev = draw(st.sampled_from(["lift", "place", "Lift", "clock"]))
    shape = draw(st.sampled_from([
        '{{"t": {t}, "ev": "{ev}", "sq": "{sq}"}}\n',
        '  {{"t": {t}, "ev": "{ev}", "sq": "{sq}"}}\r\n',
        '{{"t":{t},"ev":"{ev}","sq":"{sq}"}}\n',
        '{{"t": {t}, "ev": "{ev}", "sq": "{sq}", "sq": "h8"}}\n',
        '{{"t": {t}, "ev": "{ev}", "sq": "{sq}"}}\x0b\n',
        '{{"t": {t}, "ev": "{ev}", "sq": "{sq}"}}',
    ]))
    return shape.format(t=t, ev=ev, sq=sq)


@settings(max_examples=40, deadline=None)
@given(st.lists(plain_like_lines(), max_size=12))
def test_plain_lines_read_as_json_reads_them(lines: list[str]) -> None:
    check_read_alike(lines)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.lists(plain_like_lines(), max_size=12))
def test_plain_lines_read_as_json_reads_them_many(lines: list[str]) -> None:
    check_read_alike(lines)


def check_read_alike(lines: list[str]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        same(read_sensor_log(io.StringIO("".join(lines))),
             general_read(io.StringIO("".join(lines)), monkeypatch))  # type: ignore[arg-type]
        same(read_sensor_log(lines), general_read(lines, monkeypatch))


def test_the_corpus_logs_read_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    for seed, game in enumerate(classics()[:2]):
        text = render_behaviour(game, "dense-bounce", seed=seed).jsonl()
        same(read_sensor_log(io.StringIO(text)), general_read(io.StringIO(text),  # type: ignore[arg-type]
                                                               monkeypatch))
    # (and the plain lines are the commonest: most of a log)
    plain = sum(1 for line in text.splitlines()
                if sensorlog._PLAIN_SENSOR_LINE(line + "\n") is not None)
    assert plain > 0.8 * len(text.splitlines())


def test_a_plain_line_with_a_bad_time_keeps_its_error_and_number() -> None:
    lines = ['{"t": 5.0, "ev": "lift", "sq": "e2"}\n',
             '{"t": 4.0, "ev": "place", "sq": "e4"}\n',
             '{"t": 1e13, "ev": "place", "sq": "e4"}\n',
             '{"t": 6, "ev": "place", "sq": "e4"}\n']
    log = read_sensor_log(lines)
    assert [json.dumps([e.t, e.square]) for e in log.events] == ["[5.0, 12]", "[6.0, 28]"]
    assert [(e.line, str(e).split(":")[0]) for e in log.errors] == [(2, "line 2"), (3, "line 3")]
    assert "time goes backwards" in str(log.errors[0])
    assert "'t' must be the seconds since the game started" in str(log.errors[1])
