"""The engine opponent's parts, with Debian's real Stockfish: finding and starting it, its
strength, its answers (cancellable, never blocking the caller), the draw rule, the time
it is given, the opening book, the per-game side and PGN name, and the one-line errors."""

from __future__ import annotations

import queue
import random
import struct
import time
from pathlib import Path

import chess
import chess.engine
import chess.polyglot
import pytest

from board_ctl.config import parse_config
from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import ConfigError
from board_ctl.opponent.engine import (
    EngineError,
    EngineSettings,
    EngineThread,
    accepts_draw,
    find_engine,
)
from board_ctl.opponent.messages import EngineFailed, EngineReply, JudgeDraw, Suggest, Think
from board_ctl.opponent.opponent import Opponent, OpponentSettings
from board_ctl.sensorlog import StartInfo
from conftest import missing_tool
from servicekit import board_ctl

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def stockfish() -> str:
    try:
        return find_engine("stockfish")
    except EngineError:
        missing_tool("Debian's stockfish is not installed (apt-get install stockfish)")
        raise


def started(settings: EngineSettings, rng: random.Random | None = None
            ) -> tuple[EngineThread, queue.Queue[object]]:
    answers: queue.Queue[object] = queue.Queue()
    engine = EngineThread(settings, answers.put, rng)
    engine.start()
    return engine, answers


# ---------------------------------------------------------------- finding and starting


def test_a_missing_stockfish_names_the_debian_package() -> None:
    with pytest.raises(EngineError) as caught:
        find_engine("stockfish", path="/nonexistent", extra=())
    assert str(caught.value) == ("opponent.engine: no engine 'stockfish' on PATH: install "
                                 "Debian's package stockfish (apt-get install stockfish)")


def test_debians_stockfish_is_found_in_usr_games(stockfish: str) -> None:
    # a service's PATH (systemd's) does not have /usr/games: it is looked in all the same
    assert find_engine("stockfish", path="/usr/bin:/bin") == stockfish


def test_a_path_that_is_no_program_is_one_line(tmp_path: Path) -> None:
    not_a_program = tmp_path / "stockfish"
    not_a_program.write_text("no", encoding="utf-8")
    with pytest.raises(EngineError, match=r"is not an executable file$"):
        find_engine(str(not_a_program))


@pytest.mark.parametrize("args, message", [
    (["--opponent", "no-such-engine"],
     "board-ctl run: --opponent: no engine 'no-such-engine' on PATH or in /usr/games: "
     "give its path"),
    (["--opponent", "--level", "25"],
     "board-ctl run: --level must be at most 20, got 25"),
])
def test_cli_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = board_ctl("run", *args, "--once", cwd=tmp_path)
    assert result.returncode in (1, 2) and result.stderr.strip() == message


def test_a_program_that_is_no_engine_is_one_line(tmp_path: Path) -> None:
    result = board_ctl("run", "--opponent", "/bin/true", "--once", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("board-ctl run: --opponent: ")


def test_an_engine_from_the_config_file_is_named_by_its_key(tmp_path: Path) -> None:
    config = tmp_path / "board.toml"
    config.write_text('[opponent]\nengine = "no-such-engine"\n', encoding="utf-8")
    result = board_ctl("run", "--config", str(config), "--once", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == ("board-ctl run: opponent.engine: no engine "
                                     "'no-such-engine' on PATH or in /usr/games: give its path")


@pytest.mark.parametrize("text, message", [
    ('[opponent]\nengine = "stockfish"\nside = "blue"',
     "opponent.side must be one of white, black, random, got 'blue'"),
    ('[opponent]\nengine = "stockfish"\nlevel = 3\nelo = 1500',
     "opponent.level and opponent.elo both set: choose one"),
    ('[opponent]\nengine = "stockfish"\nmovetime = 0',
     "opponent.movetime must be at least 0.01, got 0"),
    ('[opponent]\nbook = "/no/such/book.bin"', "opponent.book: no such file /no/such/book.bin"),
    ('[emulator]\nlog = "game.jsonl"\n[opponent]\nengine = "stockfish"',
     "emulator.log with opponent.engine: the emulator plays the person's side itself"),
])
def test_bad_opponent_config_is_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(text)


# ---------------------------------------------------------------- strength and name


@pytest.mark.parametrize("settings, label, options", [
    (EngineSettings(level=3), "(level 3)", {"Skill Level": 3}),
    (EngineSettings(elo=1600), "(Elo 1600)", {"UCI_LimitStrength": True, "UCI_Elo": 1600}),
    (EngineSettings(), "", {}),
])
def test_strength_is_set_through_uci_options(stockfish: str, settings: EngineSettings,
                                             label: str, options: dict[str, object]) -> None:
    engine, _ = started(settings)
    try:
        assert engine.label.startswith("Stockfish ") and engine.label.endswith(label)
        assert engine._options == options  # what was configured on the engine
    finally:
        engine.close()


@pytest.mark.parametrize("settings, message", [
    (EngineSettings(level=21), "opponent.level: Stockfish [\\d.]+'s Skill Level is 0-20, not 21"),
    (EngineSettings(elo=1000), "opponent.elo: Stockfish [\\d.]+ plays at Elo 1350-2850, not 1000"),
])
def test_strength_out_of_the_engines_range_is_one_line(stockfish: str, settings: EngineSettings,
                                                       message: str) -> None:
    with pytest.raises(EngineError, match=message):
        started(settings)


def test_the_engine_runs_nicer_than_the_service(stockfish: str) -> None:
    """When they compete for a core, the board's LEDs come first."""
    import os

    from board_ctl.opponent.engine import ENGINE_NICENESS

    engine, _ = started(EngineSettings())
    try:
        assert engine._transport is not None
        pid = engine._transport.get_pid()
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(ours + ENGINE_NICENESS, 19)
    finally:
        engine.close()


# ---------------------------------------------------------------- answers


def test_answers_come_back_through_the_callback_without_blocking(stockfish: str) -> None:
    engine, answers = started(EngineSettings(level=5))
    try:
        board = chess.Board()
        asked = time.monotonic()
        engine.ask(Think("k1", board.copy(), chess.engine.Limit(time=0.3)))
        assert time.monotonic() - asked < 0.05  # the caller (the service loop) goes on
        reply = answers.get(timeout=10)
        assert isinstance(reply, EngineReply) and reply.key == "k1"
        assert reply.move in board.legal_moves and not reply.from_book
        engine.ask(Suggest("k2", board.copy(), chess.engine.Limit(time=0.1)))
        hint = answers.get(timeout=10)
        assert isinstance(hint, EngineReply) and hint.move in board.legal_moves
    finally:
        engine.close()


def test_a_newer_request_cancels_the_search_under_way(stockfish: str) -> None:
    engine, answers = started(EngineSettings())
    try:
        board = chess.Board()
        engine.ask(Think("old", board.copy(), chess.engine.Limit(time=60)))
        time.sleep(0.2)  # let the long search start (what is measured is the new answer)
        asked = time.monotonic()
        engine.ask(Think("new", board.copy(), chess.engine.Limit(time=0.1)))
        reply = answers.get(timeout=10)
        assert isinstance(reply, EngineReply) and reply.key == "new"
        assert time.monotonic() - asked < 5  # not after the old search's minute
        engine.cancel()
        with pytest.raises(queue.Empty):
            answers.get(timeout=0.5)  # nothing for the cancelled search
    finally:
        engine.close()


@pytest.mark.parametrize("fen, side, accept", [
    # Black (the engine) a queen down: worse, it accepts; a queen up: it declines
    ("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3", chess.BLACK, True),
    ("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNB1KBNR w KQkq - 0 3", chess.BLACK, False),
])
def test_a_draw_offer_is_judged_by_evaluation(stockfish: str, fen: str, side: chess.Color,
                                              accept: bool) -> None:
    engine, answers = started(EngineSettings(level=1))
    try:
        engine.ask(JudgeDraw("d", chess.Board(fen), side, chess.engine.Limit(time=0.3)))
        reply = answers.get(timeout=10)
        assert isinstance(reply, EngineReply) and reply.accept == accept
        assert reply.score_cp is not None and (reply.score_cp < 0) == accept
    finally:
        engine.close()


@pytest.mark.parametrize("score, move, accept", [
    (-50, 5, True), (-49, 5, False), (-15, 30, True), (15, 30, True), (16, 30, False),
    (0, 29, False), (-100000, 2, True), (100000, 60, False),
])
def test_the_draw_rule(score: int, move: int, accept: bool) -> None:
    assert accepts_draw(score, move) == accept


def test_a_killed_engine_is_reported_and_started_again(stockfish: str) -> None:
    engine, answers = started(EngineSettings())
    try:
        assert engine._transport is not None
        engine._transport.kill()  # the engine's process dies
        time.sleep(0.2)
        engine.ask(Think("a", chess.Board(), chess.engine.Limit(time=0.1)))
        first = answers.get(timeout=10)
        assert isinstance(first, EngineFailed) and "failed" in first.reason
        engine.ask(Think("b", chess.Board(), chess.engine.Limit(time=0.1)))
        second = answers.get(timeout=10)
        assert isinstance(second, EngineReply) and second.key == "b"
    finally:
        engine.close()


def polyglot_book(path: Path, entries: list[tuple[chess.Board, chess.Move, int]]) -> None:
    """A Polyglot book (16-byte big-endian entries sorted by key), written by hand."""
    rows = []
    for board, move, weight in entries:
        encoded = (chess.square_file(move.to_square) | chess.square_rank(move.to_square) << 3
                   | chess.square_file(move.from_square) << 6
                   | chess.square_rank(move.from_square) << 9)
        rows.append((chess.polyglot.zobrist_hash(board), encoded, weight))
    path.write_bytes(b"".join(struct.pack(">QHHI", key, move, weight, 0)
                              for key, move, weight in sorted(rows)))


def test_the_opening_book_moves_first(stockfish: str, tmp_path: Path) -> None:
    book = tmp_path / "book.bin"
    start = chess.Board()
    polyglot_book(book, [(start, chess.Move.from_uci("a2a3"), 10)])  # Stockfish never would
    engine, answers = started(EngineSettings(book=str(book)), random.Random(1))
    try:
        engine.ask(Think("b", start.copy(), chess.engine.Limit(time=0.1)))
        reply = answers.get(timeout=10)
        assert isinstance(reply, EngineReply) and reply.from_book
        assert reply.move == chess.Move.from_uci("a2a3")
        after = start.copy()
        after.push_uci("e2e4")
        engine.ask(Think("out", after, chess.engine.Limit(time=0.1)))
        reply = answers.get(timeout=10)
        assert isinstance(reply, EngineReply) and not reply.from_book  # out of book
    finally:
        engine.close()


# ---------------------------------------------------------------- the opponent's part


def referee(time_control: str | None = None, remote: chess.Color = chess.BLACK) -> Referee:
    tc = TimeControl.parse(time_control) if time_control else None
    return Referee(profile=PROFILES["fide"], time_control=tc, remote=remote)


def test_the_engine_is_told_its_real_clock_at_any_emulator_speed(stockfish: str) -> None:
    opponent = Opponent(OpponentSettings(EngineSettings(), "black"))
    opponent.scale = 10.0  # the board plays ten times faster than real time
    game = referee("40/5400+30:1800+30")
    game.feed(ev.Tick(0.0))
    game.feed(ev.Lifted(1.0, chess.E2))
    game.feed(ev.Placed(1.5, chess.E4))
    game.feed(ev.ClockPressed(62.0, chess.WHITE))
    limit = opponent._limit(game, chess.BLACK)
    assert limit.white_clock == pytest.approx((5400 - 62.0 + 30) / 10)
    assert limit.black_clock == pytest.approx(5400 / 10)
    assert limit.white_inc == limit.black_inc == pytest.approx(3.0)
    assert limit.remaining_moves == 40 and limit.time is None
    untimed = Opponent(OpponentSettings(EngineSettings(), "black", movetime=2.0))
    untimed.scale = 4.0
    assert untimed._limit(referee(), chess.BLACK).time == pytest.approx(0.5)


def test_each_game_draws_a_side_and_names_the_engine(stockfish: str) -> None:
    opponent = Opponent(OpponentSettings(EngineSettings(level=2), "random"), random.Random(3))
    opponent.start()
    try:
        start = StartInfo(tags={"White": "Ann", "Event": "Club night"})
        sides = [opponent.start_info(start) for _ in range(40)]
        assert {info.remote for info in sides} == {chess.WHITE, chess.BLACK}
        for info in sides:
            name = "White" if info.remote == chess.WHITE else "Black"
            assert info.tags[name] == opponent.label and opponent.label.endswith("(level 2)")
            assert info.tags["Event"] == "Club night"
    finally:
        opponent.close()


def test_an_answer_for_a_position_gone_by_is_dropped(stockfish: str) -> None:
    opponent = Opponent(OpponentSettings(EngineSettings(level=0), "black", movetime=0.2))
    answers: queue.Queue[object] = queue.Queue()
    opponent.deliver = answers.put
    opponent.start()
    try:
        game = Referee(profile=PROFILES["casual"], remote=chess.BLACK)
        game.feed(ev.Tick(0.0))
        game.feed(ev.Lifted(1.0, chess.E2))
        game.feed(ev.Placed(1.5, chess.E4))
        game.feed(ev.Tick(3.0))  # released: Black (the engine) to move
        opponent.update(game, 1)
        reply = answers.get(timeout=10)
        assert isinstance(reply, EngineReply)
        # the person took his move back meanwhile: the answer is for a position gone by
        game.feed(ev.TakebackAsked(3.1))
        assert game.board.ply() == 0
        assert opponent.answer(reply, game, 1) == (None, None)
        # back where it was asked: now it is the engine's move
        game.feed(ev.Lifted(3.5, chess.E4))  # the pawn back, as the LEDs guide
        game.feed(ev.Placed(4.0, chess.E2))
        game.feed(ev.Tick(5.5))
        game.feed(ev.Lifted(6.0, chess.E2))  # and the same move again
        game.feed(ev.Placed(6.5, chess.E4))
        game.feed(ev.Tick(8.0))
        assert game.board.ply() == 1
        event, text = opponent.answer(reply, game, 1)
        assert isinstance(event, ev.OpponentMoved) and event.move == reply.move
        assert text is not None and " plays " in text
        assert opponent.answer(reply, game, 2) == (None, None)  # another game
    finally:
        opponent.close()


# ---------------------------------------------------------------- the terminal views


@pytest.mark.parametrize("remote, promotion, words", [
    ("THINKING", None, "the computer is thinking"),
    ("SHOWN", chess.KNIGHT, "the computer plays b1=N becomes a knight make it on the board"),
    ("HINT", None, "hint: the move lit"),
])
def test_the_views_say_what_the_computer_does(remote: str, promotion: chess.PieceType | None,
                                              words: str) -> None:
    import io

    from rich.console import Console
    from rich.text import Text

    from board_ctl.core.effects import Colour, LedFrame, Remote, SquareLight, StatusLights
    from board_ctl.service.richview import render
    from board_ctl.service.view import PlainView, ViewState

    frame = LedFrame(3.0, (SquareLight(chess.B2, Colour.BLUE),
                           SquareLight(chess.B1, Colour.GREEN)),
                     StatusLights(True, False, None, False, Remote[remote], promotion))
    state = ViewState("playing", 1, "8/2P5/8/8/8/6k1/8/1n2K3 w - - 0 2", chess.STARTING_FEN,
                      0, frame, moves=("c7", "b1=N") if promotion else ("c7",))
    out = io.StringIO()
    Console(width=100, file=out, force_terminal=True).print(render(state, [], 100))
    text = " ".join(Text.from_ansi(out.getvalue()).plain.replace("│", " ").split())
    for word in words.split():  # (the line may wrap beside the board)
        assert word in text, (word, text)
    lines: list[str] = []
    PlainView(write=lines.append).show(state, [frame])
    assert len(lines) == 1 and ("the computer" in lines[0] or "hint" in lines[0])
    if promotion:
        assert "knight" in text and "promoting to a knight" in lines[0]


@pytest.mark.slow
def test_the_side_drawn_for_each_game_is_said(stockfish: str, tmp_path: Path) -> None:
    """--engine-side random: the console says which side the engine plays, game by game
    (it said only "random" at the start)."""
    from board_ctl.service.game import OutputNamer
    from board_ctl.service.service import RunOptions, Service
    from servicekit import FakeBoard, RecordingView
    from test_service_loop import START, feed

    opponent = Opponent(OpponentSettings(EngineSettings(level=0), "random", movetime=0.1),
                        random.Random(5))
    opponent.start()
    view = RecordingView()
    service = Service(FakeBoard(), profile=PROFILES["casual"], start=StartInfo(),
                      namer=OutputNamer(tmp_path), options=RunOptions(), view=view,
                      opponent=opponent)
    service.open()
    try:
        sides = []
        for n in range(6):  # each game resigned, the board set up again
            feed(service, [ev.Snapshot(10.0 * n + 1.0, 0), ev.Snapshot(10.0 * n + 2.0, START)])
            assert service.session is not None
            remote = service.session.start.remote
            assert remote is not None
            [said] = [m for m in view.all_messages if m.startswith(f"game {n + 1} started")]
            name = "White" if remote == chess.WHITE else "Black"
            assert said.endswith(f"; {opponent.label} plays {name} (drawn)"), said
            sides.append(remote)
            feed(service, [ev.Resigned(10.0 * n + 3.0, not remote)])
        assert set(sides) == {chess.WHITE, chess.BLACK}
    finally:
        service.request_stop()
        service.step(timeout=0)
        service.close()
