"""What the terminal shows: the board, its LEDs, the alerts and the side to move.

The loop thread builds an immutable `ViewState` after anything visible changes and hands
it, with the effects that caused it, to a view: `PlainView` prints one line per move,
alert and message (readable in a CI log or a journal), `RichView` (board_ctl.service.
richview, when `rich` is installed and stdout is a terminal) redraws a live board from
its own thread, so drawing never delays an LED frame.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TextIO

import chess

from board_ctl.core.effects import (
    Alert,
    AlertCleared,
    Blink,
    Buzzer,
    Colour,
    Effect,
    GameOver,
    LedFrame,
    MoveMade,
    Note,
    Penalty,
    Remote,
    SquareLight,
)
from board_ctl.sensorlog import SIDE_NAMES

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ViewState:
    phase: str  # "setup" (waiting for the start position), "playing", "over"
    game: int  # game number in this run (0 before the first)
    fen: str  # the game's position (the start position while setting up)
    start_fen: str
    occupied: chess.Bitboard  # what the sensors show
    frame: LedFrame | None  # the LEDs as last sent
    alerts: tuple[tuple[str, str], ...] = ()  # (code, text) of the open alerts
    moves: tuple[str, ...] = ()  # SAN of every move so far
    result: str | None = None
    termination: str = ""
    board: str = ""  # which board, on which port
    link: str = "connected"
    t: float = 0.0  # game time, s
    clocks: tuple[float | None, float | None] = (None, None)  # White's, Black's time left
    running: chess.Color | None = None  # whose clock is running (None: stopped)
    waiting: str = ""  # setting up: the unfinished game whose position is awaited (its id)

    @property
    def turn(self) -> chess.Color:
        return chess.Board(self.fen).turn


class View(Protocol):
    def show(self, state: ViewState, effects: Sequence[Effect]) -> None: ...

    def message(self, text: str) -> None: ...

    def close(self) -> None: ...


def move_label(start_fen: str, ply: int, san: str) -> str:
    """``12. Nf3`` or ``12... Nf6`` for the ply-th move (1-based) from start_fen."""
    board = chess.Board(start_fen)
    index = ply - 1 + (0 if board.turn == chess.WHITE else 1)
    number = board.fullmove_number + index // 2
    return f"{number}. {san}" if index % 2 == 0 else f"{number}... {san}"


def moves_text(start_fen: str, sans: Sequence[str], last: int | None = None) -> str:
    """``12. Nf3 Nf6 13. c4`` for the moves from start_fen (only the `last` plies if set)."""
    first = 0 if last is None else max(len(sans) - last, 0)
    words = []
    for i in range(first, len(sans)):
        label = move_label(start_fen, i + 1, sans[i])
        if "..." in label and i != first:
            label = sans[i]
        words.append(label)
    return " ".join(words)


# A square LED drawn as a sign beside the piece, never a letter: in the plain board a
# colour's initial reads as another piece ("kr"), and without colour (NO_COLOR, a log, a
# colour-blind player) the sign alone must tell green (put a piece here) from red.
LED_MARKS = {Colour.GREEN: "+", Colour.RED: "-", Colour.BLUE: "*", Colour.YELLOW: "?",
             Colour.WHITE: "=", Colour.ORANGE: "!"}
LED_MEANINGS = {Colour.GREEN: "put a piece here", Colour.RED: "take this piece away",
                Colour.BLUE: "the touched piece must move", Colour.YELLOW: "which was taken?",
                Colour.WHITE: "draw", Colour.ORANGE: "suspect sensor"}
_RESULT_MEANINGS = {Colour.RED: "the king that lost", Colour.WHITE: "a draw"}
# Against a computer: its move to make (steady) or a hint (blinking), from blue to green.
_REMOTE_MEANINGS = {
    Remote.SHOWN: {Colour.BLUE: "the computer's piece to move", Colour.GREEN: "where it goes",
                   Colour.RED: "take this piece off"},
    Remote.HINT: {Colour.BLUE: "the hint's piece", Colour.GREEN: "where it goes"}}


def led_mark(light: SquareLight | None) -> str:
    """The sign a square's LED is drawn as (a space when it is dark)."""
    if light is None:
        return " "
    return LED_MARKS.get(light.colour, " ")


def describe_leds(frame: LedFrame) -> str:
    """The lit squares grouped by colour: ``green (slow) a1 b1, red e8; buzzer chirp``."""
    groups: dict[tuple[Colour, Blink], list[str]] = {}
    for light in frame.squares:
        groups.setdefault((light.colour, light.blink), []).append(
            chess.square_name(light.square))
    lights = ", ".join(
        colour.name.lower() + (f" ({blink.name.lower()})" if blink else "") + " "
        + " ".join(squares) for (colour, blink), squares in groups.items())
    buzzer = "" if frame.buzzer == Buzzer.SILENT else f"; buzzer {frame.buzzer.name.lower()}"
    return f"{lights or 'all dark'}{buzzer}{remote_text(frame)}"


def remote_text(frame: LedFrame) -> str:
    """What the status LEDs say of a computer opponent (empty without one)."""
    status = frame.status
    if status.remote == Remote.THINKING:
        return "; the computer is thinking"
    if status.remote == Remote.SHOWN:
        piece = (f", promoting to a {chess.piece_name(status.promotion)}"
                 if status.promotion else "")
        return f"; the computer's move{piece}: make it on the board"
    if status.remote == Remote.HINT:
        return "; a hint is shown"
    return ""


def computer_line(state: ViewState) -> str:
    """What the computer opponent is doing, in words (empty without one)."""
    frame = state.frame
    if frame is None or frame.status.remote == Remote.NONE:
        return ""
    status = frame.status
    if status.remote == Remote.THINKING:
        return "the computer is thinking"
    if status.remote == Remote.HINT:
        return "hint: the move lit (blinking) on the board"
    san = state.moves[-1] if state.moves else "its move"
    piece = f" (the pawn becomes a {chess.piece_name(status.promotion)})" \
        if status.promotion else ""
    return f"the computer plays {san}{piece}: make it on the board"


def led_legend(frame: LedFrame | None) -> str:
    """What the signs on the board mean, for the colours lit (empty when all are dark)."""
    lit = frame.squares if frame else ()
    over = frame is not None and frame.status.game_over
    remote = frame.status.remote if frame is not None else Remote.NONE
    meanings = {**LED_MEANINGS, **_REMOTE_MEANINGS.get(remote, {})}
    colours = sorted({light.colour for light in lit if light.colour in LED_MARKS})
    return "  ".join(
        f"{LED_MARKS[c]} {c.name.lower()}: "
        + (_RESULT_MEANINGS.get(c, meanings[c]) if over else meanings[c])
        for c in colours)


def board_text(state: ViewState) -> str:
    """The position, rank 8 on top, White's pieces in capitals (as in FEN); each lit
    square LED as a sign after its square's piece, explained below the board."""
    board = chess.Board(state.fen)
    lights = {s.square: s for s in (state.frame.squares if state.frame else ())}
    rows = []
    for rank in range(7, -1, -1):
        cells = []
        for file in range(8):
            square = chess.square(file, rank)
            piece = board.piece_at(square)
            cells.append((piece.symbol() if piece else ".") + led_mark(lights.get(square)))
        rows.append(f"{rank + 1} " + " ".join(cells))
    rows.append("  " + " ".join(f + " " for f in "abcdefgh"))
    legend = led_legend(state.frame)
    if legend:
        rows.append(legend)
    return "\n".join(rows)


class PlainView:
    """Line by line, for logs and pipes."""

    def __init__(self, write: Callable[[str], object] | None = None,
                 stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stdout
        self._write = write or self._print
        self._closed = False
        self._leds = ""  # what the last `leds:` line said ("" : all dark since)

    def _print(self, line: str) -> None:
        if self._closed:
            return
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except BrokenPipeError:
            # The reader went away (`| head`, a closed terminal): the board plays on.
            self._closed = True
            self._discard_output()
            log.warning("standard output closed: no more lines shown; the board plays on")

    def _discard_output(self) -> None:
        """What is left in the stream's buffer would fail again at exit: send it nowhere."""
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no file behind the stream
            pass

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        for effect in effects:
            line = self._line(state, effect)
            if line:
                self._write(line)
            if isinstance(effect, GameOver):
                self._write(board_text(state))

    def _line(self, state: ViewState, effect: Effect) -> str | None:
        t = f"[{effect.t:8.2f}]"
        match effect:
            case MoveMade(ply=ply, san=san, clock=clock):
                left = f"  [{format_clock(clock)}]" if clock is not None else ""
                return f"{t} {move_label(state.start_fen, ply, san)}{left}"
            case Alert(code=code, side=side, text=text):
                who = f" ({SIDE_NAMES[side]})" if side is not None else ""
                return f"{t} ALERT {code}{who}: {text}"
            case AlertCleared(code=code):
                return f"{t} cleared {code}"
            case GameOver(result=result, termination=termination):
                return f"{t} RESULT {result} ({termination})"
            case Penalty(to_side=side, seconds=seconds, reason=reason):
                return f"{t} penalty: {seconds} s to {SIDE_NAMES[side]} ({reason})"
            case Note(text=text):
                return f"{t} note: {text}"
            case LedFrame(squares=squares):
                leds = describe_leds(effect) if squares else ""
                said, self._leds = self._leds, leds
                # (a frame that changes only what the line does not show says nothing new)
                if leds and leds != said:
                    return f"{t} leds: {leds}"
        return None

    def message(self, text: str) -> None:
        self._write(text)

    def close(self) -> None:
        pass


class NullView:
    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        pass

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


VIEWS_HELP = ("terminal view: rich (a live board), plain (one line per move and alert), none; "
              "auto picks rich on a terminal, plain otherwise")


def make_view(kind: str, stream: TextIO | None = None) -> View:
    """`auto`: rich on a terminal when rich is installed, else plain lines."""
    stream = stream or sys.stdout
    if kind == "none":
        return NullView()
    if kind == "auto":
        kind = "rich" if stream.isatty() else "plain"
    if kind == "rich":
        try:
            from board_ctl.service.richview import RichView
        except ImportError:
            return PlainView(stream=stream)
        return RichView(stream=stream)
    return PlainView(stream=stream)


def format_clock(seconds: float) -> str:
    """A clock's time as the players read it: h:mm:ss, tenths under a minute."""
    if seconds < 60:
        return f"{seconds:.1f}"
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
