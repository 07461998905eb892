"""The terminal views, read as text: every piece told apart by side and type and every lit
square by its colour, without any colour (NO_COLOR, a log, a colour-blind player), at every
width from 40 to 120 columns, and a panel that keeps its width from frame to frame.

The frames are the real ones: games played through the service loop (a fake board fed a
simulated player's sensor log), set-up guidance, an illegal move's restore lights, a
knocked-over piece, an ambiguous capture, the result."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import chess
import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from board_ctl.core import events as ev
from board_ctl.core.effects import Blink, Colour, Effect, LedFrame, SquareLight, StatusLights
from board_ctl.core.profiles import PROFILES
from board_ctl.sensorlog import StartInfo, load_sensor_log
from board_ctl.service.game import OutputNamer
from board_ctl.service.richview import EMPTY, GLYPHS, STRAY, has_colour, render
from board_ctl.service.service import RunOptions, Service
from board_ctl.service.view import LED_MARKS, PlainView, ViewState, board_text
from board_ctl.simulate import render_game, render_violation
from servicekit import FAST, FakeBoard, game_from

WIDTHS = range(40, 121)
LONG_LINK = "emulator on /tmp/a-rather-long-name-for-the-board-link"  # the header's widest
PIECES = {glyph: chess.Piece(piece_type, colour)
          for colour, glyphs in GLYPHS.items() for piece_type, glyph in glyphs.items()}
MARKS = {mark: colour for colour, mark in LED_MARKS.items()}



class Collect:
    """A view that keeps every state it is shown."""

    def __init__(self) -> None:
        self.states: list[ViewState] = []

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        self.states.append(state)

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def played(tmp_path: Path, events: list[ev.Event], start: StartInfo = StartInfo(),
           setup: chess.Bitboard | None = None) -> list[ViewState]:
    """Every state the service shows while the board reports `events`."""
    view = Collect()
    service = Service(FakeBoard(LONG_LINK), profile=PROFILES["fide"], start=start,
                      namer=OutputNamer(tmp_path), options=RunOptions(), view=view,
                      clock=lambda: 0.0)
    service.open()
    expected = chess.Board(start.fen).occupied
    first = [ev.Snapshot(0.0, setup if setup is not None else expected)]
    if setup is not None:  # the board is set up piece by piece, under guidance
        first += [ev.Placed(0.1 * (i + 1), sq)
                  for i, sq in enumerate(chess.scan_forward(expected & ~setup))]
    t0 = first[-1].t + 0.5
    for event in first + [e.__class__(**{**_fields(e), "t": e.t + t0}) for e in events]:
        service.handle(event)
    service.handle(ev.Tick(t0 + events[-1].t + 5.0))
    service.close()
    return view.states


def _fields(event: ev.Event) -> dict[str, object]:
    return {name: getattr(event, name) for name in event.__slots__}  # type: ignore[attr-defined]


def game_states(tmp_path: Path) -> Iterator[tuple[str, list[ViewState]]]:
    """A few real games' worth of frames, each with something lit."""
    opera = game_from("classics.pgn", 0)
    for name, rendered in [
        ("illegal-move", render_violation(opera, "illegal-move", seed=1, style=FAST)),
        ("position-mismatch", render_violation(opera, "position-mismatch", seed=2, style=FAST)),
        ("touch-move", render_violation(opera, "touch-move", seed=3, style=FAST)),
        ("clean", render_game(game_from("classics.pgn", 8), seed=4, style=FAST)),
    ]:
        path = tmp_path / f"{name}.jsonl"
        rendered.write(path)
        log = load_sensor_log(path)
        setup = chess.Board().occupied & ~chess.BB_RANK_2 if name == "clean" else None
        yield name, played(tmp_path / name, log.events, log.start, setup=setup)


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> list[ViewState]:
    found = [s for _, group in game_states(tmp_path_factory.mktemp("views")) for s in group]
    lit = {light.colour for s in found if s.frame for light in s.frame.squares}
    assert {Colour.GREEN, Colour.RED, Colour.BLUE} <= lit  # the frames show what matters
    assert {s.phase for s in found} == {"setup", "playing", "over"}
    return found


def what_it_shows(state: ViewState) -> tuple[dict[chess.Square, chess.Piece],
                                               dict[chess.Square, Colour]]:
    board = chess.Board(state.fen)
    pieces = board.piece_map()
    lights = {s.square: s.colour for s in (state.frame.squares if state.frame else ())}
    return pieces, lights


# ---------------------------------------------------------------- the plain view


def read_plain(text: str) -> tuple[dict[chess.Square, chess.Piece], dict[chess.Square, Colour]]:
    """The plain board read back by a person: FEN letters, a sign per lit square."""
    pieces, lights = {}, {}
    rows = [line for line in text.splitlines() if line[:1].isdigit()]
    assert len(rows) == 8
    for row in rows:
        rank = int(row[0]) - 1
        cells = row[2:].split(" ")
        cells = [c for c in cells if c]
        assert len(cells) == 8, row
        for file, cell in enumerate(cells):
            square = chess.square(file, rank)
            assert cell[0] in "PNBRQKpnbrqk.", f"{cell!r} in {row!r}"
            if cell[0] != ".":
                pieces[square] = chess.Piece.from_symbol(cell[0])
            if len(cell) > 1:
                assert len(cell) == 2 and cell[1] in MARKS, f"{cell!r}: a mark must not read as a piece"
                lights[square] = MARKS[cell[1]]
    return pieces, lights


def test_the_plain_board_reads_back_without_colour(states: list[ViewState]) -> None:
    for state in states:
        assert read_plain(board_text(state)) == what_it_shows(state)


def test_a_lit_king_is_not_read_as_a_rook() -> None:
    """The case reported: a red LED under Black's king printed as `kr`."""
    frame = LedFrame(0.0, (SquareLight(chess.E8, Colour.RED), SquareLight(chess.D1, Colour.BLUE)),
                     StatusLights(game_over=True))
    state = ViewState("over", 1, chess.STARTING_FEN, chess.STARTING_FEN,
                      chess.BB_ALL, frame)
    text = board_text(state)
    assert "kr" not in text and "Qb" not in text
    assert read_plain(text)[1] == {chess.E8: Colour.RED, chess.D1: Colour.BLUE}
    assert "red: the king that lost" in text  # what the sign means, under the board


def test_plain_view_prints_the_board_at_the_result(tmp_path: Path) -> None:
    lines: list[str] = []
    view = PlainView(write=lines.append)
    rendered = render_game(game_from("classics.pgn", 0), seed=1, style=FAST)
    path = tmp_path / "g.jsonl"
    rendered.write(path)
    log = load_sensor_log(path)
    service = Service(FakeBoard(LONG_LINK), profile=PROFILES["fide"], start=log.start,
                      namer=OutputNamer(tmp_path), view=view, clock=lambda: 0.0)
    service.open()
    for event in [ev.Snapshot(0.0, chess.BB_ALL & ~chess.BB_RANK_3 & ~chess.BB_RANK_4
                              & ~chess.BB_RANK_5 & ~chess.BB_RANK_6), *log.events]:
        service.handle(event)
    service.handle(ev.Tick(log.events[-1].t + 5))
    service.close()
    text = "\n".join(lines)
    assert "17. Rd8#" in text and "RESULT 1-0 (checkmate)" in text
    final = text[text.index("RESULT"):]
    board = chess.Board(log.start.fen)
    for move in rendered.moves:
        board.push(move)
    pieces, lights = read_plain(final)
    assert pieces == board.piece_map() and lights == {chess.E8: Colour.RED}


def test_plain_view_says_what_the_leds_show_once_per_change() -> None:
    """Frames that differ only in what the line does not show (the status LEDs, the
    buzzer) print no second line; the same lights back after dark squares print again."""
    lines: list[str] = []
    view = PlainView(write=lines.append)
    state = ViewState("playing", 1, chess.STARTING_FEN, chess.STARTING_FEN, chess.BB_ALL, None)
    shown = (SquareLight(chess.E7, Colour.BLUE), SquareLight(chess.E5, Colour.GREEN))
    frames = [LedFrame(1.0, shown, StatusLights(white_to_move=True)),
              LedFrame(1.5, shown, StatusLights(black_to_move=True)),  # status only
              LedFrame(2.0, shown, StatusLights(black_to_move=True, alert=Blink.FAST)),
              LedFrame(3.0, (), StatusLights(white_to_move=True)),  # dark
              LedFrame(4.0, shown, StatusLights(white_to_move=True)),  # the same, again
              LedFrame(5.0, shown[:1], StatusLights(white_to_move=True))]
    view.show(state, frames)
    assert [line.split()[1] for line in lines] == ["1.00]", "4.00]", "5.00]"], lines
    assert all(" leds: " in line for line in lines)


# ---------------------------------------------------------------- the rich view


def rich_text(state: ViewState, width: int, monkeypatch: pytest.MonkeyPatch) -> str:
    """What a terminal `width` columns wide shows with NO_COLOR=1, as plain text."""
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    console = Console(width=width, file=out, force_terminal=True)
    console.print(render(state, ["game 1 started; sensor log games/game-1.sensor.jsonl"],
                         console.width, colour=has_colour(console)))
    sent = out.getvalue()
    assert "\x1b[1m" in sent or "\x1b[2m" in sent  # still a terminal: bold and dim stay
    assert not re.search(r"\x1b\[[0-9;]*[34]8;", sent)  # NO_COLOR: no colour at all
    return Text.from_ansi(sent).plain


def read_rich(text: str) -> tuple[dict[chess.Square, chess.Piece], dict[chess.Square, Colour],
                                  chess.Bitboard]:
    """The rich board read back from plain text: glyph per piece, a sign per lit square,
    and the squares where something stands that the game does not have."""
    pieces, lights, stray = {}, {}, 0
    rows = [line[2:2 + 26] for line in text.splitlines()
            if line[:2] == "│ " and line[2:3].isdigit() and line[3:4] == " "]
    assert len(rows) == 8, text
    for row in rows:
        rank = int(row[0]) - 1
        for file in range(8):
            cell = row[2 + 3 * file: 5 + 3 * file]
            assert len(cell) == 3 and cell[0] == " ", f"{cell!r} in {row!r}"
            glyph, mark = cell[1], cell[2]
            square = chess.square(file, rank)
            if glyph in PIECES:
                pieces[square] = PIECES[glyph]
            elif glyph == STRAY:
                stray |= chess.BB_SQUARES[square]
            else:
                assert glyph == EMPTY, f"{glyph!r} is no piece"
            if mark != " ":
                assert mark in MARKS, f"{mark!r}"
                lights[square] = MARKS[mark]
    return pieces, lights, stray


def panel_width(text: str) -> int:
    lines = text.splitlines()
    (top,) = [line for line in lines if line.startswith("╭")]
    widths = {cell_len(line) for line in lines if line[:1] in "╭│╰"}
    assert len(widths) == 1, f"ragged panel: {widths}"
    return cell_len(top)


def test_glyphs_tell_side_and_type_apart_by_shape() -> None:
    assert len(PIECES) == 12  # twelve different glyphs for the twelve kinds of piece
    assert not set(PIECES) & set(MARKS) and STRAY not in PIECES


@pytest.fixture(scope="module")
def sample(states: list[ViewState]) -> list[ViewState]:
    """Every frame with a square lit or an alert open, each phase's first and last, and
    every 20th of the rest: what the rich tests render (each rendering costs ms)."""
    picked = [s for s in states if (s.frame and s.frame.squares) or s.alerts]
    for phase in ("setup", "playing", "over"):
        of_phase = [s for s in states if s.phase == phase]
        picked += [of_phase[0], of_phase[-1]]
    picked += states[::20]
    unique = {id(s): s for s in picked}
    return sorted(unique.values(), key=states.index)


@pytest.mark.parametrize("width", [40, 63, 64, 120])
def test_the_rich_board_reads_back_without_colour_and_keeps_its_width(
        sample: list[ViewState], width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    widths = set()
    for state in sample:
        text = rich_text(state, width, monkeypatch)
        pieces, lights, stray = read_rich(text)
        assert (pieces, lights) == what_it_shows(state)
        assert stray == state.occupied & ~chess.Board(state.fen).occupied
        assert "Game " in text and "link:" in text
        widths.add(panel_width(text))
    assert widths == {min(width, 100)}  # the panel does not jump between frames


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_every_width_from_40_to_120(sample: list[ViewState], width: int,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lit = [s for s in sample if s.frame and s.frame.squares][::2]
    shown = [rich_text(state, width, monkeypatch) for state in lit]
    for state, text in zip(lit, shown):
        assert read_rich(text)[:2] == what_it_shows(state)
    assert {panel_width(text) for text in shown} == {min(width, 100)}


def test_an_ambiguous_capture_and_a_lifted_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """Yellow candidates beside the pieces, a piece in hand still drawn where it stood,
    and a stray piece where the game has none."""
    board = chess.Board("4k3/8/8/3p1p2/4N3/8/8/4K3 w - - 0 1")
    occupied = board.occupied & ~chess.BB_E4 | chess.BB_A3  # knight in hand, a stray on a3
    frame = LedFrame(0.0, (SquareLight(chess.D5, Colour.YELLOW, Blink.FAST),
                           SquareLight(chess.F5, Colour.YELLOW, Blink.FAST)),
                     StatusLights(white_to_move=True))
    state = ViewState("playing", 1, board.fen(), board.fen(), occupied, frame)
    pieces, lights, stray = read_rich(rich_text(state, 40, monkeypatch))
    assert pieces == board.piece_map() and stray == chess.BB_A3
    assert lights == {chess.D5: Colour.YELLOW, chess.F5: Colour.YELLOW}
