"""The live terminal view (rich): the board with its square LEDs, the status LEDs, the
side to move, the open alerts, the last moves and the service's messages.

Drawing happens on the view's own thread, at most ten times a second and only after a
change; the loop thread only swaps in a new immutable `ViewState`.

The board must read the same without colour (NO_COLOR, a monochrome or colour-blind
reader): White's pieces are the outlined glyphs and Black's the filled ones, and each lit
square LED is a sign beside its piece (view.LED_MARKS), the colour only repeating it. The
panel is as wide as the terminal allows (up to MAX_WIDTH) whatever it shows, so it does not
jump between frames; below WIDE columns the game's details go under the board instead of
beside it, down to 40 columns.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from typing import TextIO

import chess
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.style import Style
from rich.table import Table
from rich.text import Text

from board_ctl.core.effects import Blink, Colour, Effect
from board_ctl.service.view import (
    ViewState,
    computer_line,
    describe_leds,
    format_clock,
    led_legend,
    led_mark,
    moves_text,
)

LED_COLOURS = {Colour.RED: "red3", Colour.GREEN: "green3", Colour.BLUE: "dodger_blue2",
               Colour.YELLOW: "yellow3", Colour.WHITE: "grey93", Colour.ORANGE: "dark_orange"}
LIGHT, DARK = "#c8b48a", "#8c6e4b"
# Outlined for White, filled for Black: told apart by shape, not by colour.
GLYPHS = {chess.WHITE: {chess.KING: "♔", chess.QUEEN: "♕", chess.ROOK: "♖", chess.BISHOP: "♗",
                        chess.KNIGHT: "♘", chess.PAWN: "♙"},
          chess.BLACK: {chess.KING: "♚", chess.QUEEN: "♛", chess.ROOK: "♜", chess.BISHOP: "♝",
                        chess.KNIGHT: "♞", chess.PAWN: "♟"}}
STRAY = "●"  # something stands where the game has nothing
EMPTY = "·"  # an empty square, without colour
REDRAW_EVERY = 0.1  # s
BOARD_WIDTH = 2 + 8 * 3  # rank label, eight cells of three
MAX_WIDTH = 100  # the panel's width on a wide terminal
WIDE = 64  # from this many columns the details stand beside the board
GAP = 2  # columns between the board and the details


class RichView:
    def __init__(self, stream: TextIO | None = None, console: Console | None = None) -> None:
        self.console = console or Console(file=stream)
        self._state: ViewState | None = None
        self._messages: deque[str] = deque(maxlen=6)
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name="view", daemon=True)
        self._thread.start()

    # --- called from the loop thread

    def show(self, state: ViewState, effects: Sequence[Effect]) -> None:
        self._state = state
        self._dirty.set()

    def message(self, text: str) -> None:
        with self._lock:
            self._messages.append(text)
        self._dirty.set()

    def close(self) -> None:
        self._closing.set()
        self._dirty.set()
        self._thread.join(timeout=5)

    # --- the view thread

    def _run(self) -> None:
        with Live(self._render(), console=self.console, auto_refresh=False,
                  redirect_stdout=False, redirect_stderr=False) as live:
            while not self._closing.is_set():
                self._dirty.wait()
                self._dirty.clear()
                live.update(self._render(), refresh=True)
                self._closing.wait(REDRAW_EVERY)  # at most 10 redraws a second
            live.update(self._render(), refresh=True)

    def _render(self) -> RenderableType:
        with self._lock:
            messages = list(self._messages)
        return render(self._state, messages, self.console.width,
                      colour=has_colour(self.console))


def has_colour(console: Console) -> bool:
    """Whether the terminal shows colours (not with NO_COLOR, nor on a dumb terminal)."""
    return console.color_system is not None and not console.no_color


def render(state: ViewState | None, messages: Sequence[str], width: int,
           colour: bool = True) -> RenderableType:
    """Everything the view shows for `state`, for a terminal `width` columns wide; without
    `colour` (NO_COLOR, a monochrome terminal) empty squares show a dot, as the light and
    dark squares cannot."""
    if state is None:
        return Group(Text("board-ctl: connecting to the board ...", style="bold"),
                     *[Text(m, style="dim") for m in messages])
    panel_width = min(width, MAX_WIDTH)
    inner = panel_width - 4  # the panel's borders and padding
    if inner >= WIDE - 4:
        layout = Table.grid(padding=(0, GAP))
        layout.add_column(width=BOARD_WIDTH, no_wrap=True)
        layout.add_column(width=inner - BOARD_WIDTH - GAP, overflow="fold")
        layout.add_row(board_grid(state, colour), Group(*details(state)))
        body: RenderableType = layout
    else:  # narrow: the details under the board
        body = Group(board_grid(state, colour), Text(""), *details(state))
    log = Text("\n".join(messages), style="dim") if messages else Text("")
    title = Text(f"board-ctl · {state.board}", overflow="ellipsis", no_wrap=True)
    title.truncate(max(inner - 2, 1), overflow="ellipsis")
    return Group(Panel(body, title=title, width=panel_width), log)


def board_grid(state: ViewState, colour: bool = True) -> Table:
    board = chess.Board(state.fen)
    lights = {s.square: s for s in (state.frame.squares if state.frame else ())}
    grid = Table.grid()
    grid.add_column(width=2, no_wrap=True)
    for _ in range(8):
        grid.add_column(width=3, no_wrap=True)
    for rank in range(7, -1, -1):
        cells: list[Text] = [Text(f"{rank + 1} ", style="dim")]
        for file in range(8):
            square = chess.square(file, rank)
            bg = LIGHT if (file + rank) % 2 else DARK
            light = lights.get(square)
            blink = False
            if light is not None and light.colour in LED_COLOURS:
                bg = LED_COLOURS[light.colour]
                blink = light.blink != Blink.STEADY
            mark = led_mark(light)
            piece = board.piece_at(square)
            sensed = bool(state.occupied & chess.BB_SQUARES[square])
            if piece is not None:
                glyph = GLYPHS[piece.color][piece.piece_type]
                fg = "bright_white" if piece.color == chess.WHITE else "black"
                dim = not sensed  # lifted off its square
                style = Style(color=fg, bgcolor=bg, bold=True, dim=dim, blink=blink)
            elif sensed:
                glyph = STRAY
                style = Style(color="grey30", bgcolor=bg, blink=blink)
            else:
                glyph = " " if colour else EMPTY
                style = Style(color="grey50", bgcolor=bg, blink=blink)
            cells.append(Text(f" {glyph}{mark}", style=style))
        grid.add_row(*cells)
    grid.add_row(Text("  "), *[Text(f" {f} ", style="dim") for f in "abcdefgh"])
    return grid


def details(state: ViewState) -> list[Text]:
    """The game beside (or under) the board: phase, side to move, clocks, status LEDs,
    what the lit squares mean, alerts, the last moves, the link."""
    lines: list[Text] = []
    head = {"setup": "setting up: put the pieces on their start squares",
            "playing": "playing", "over": "game over"}.get(state.phase, state.phase)
    if state.waiting:
        head = (f"game {state.waiting} waits: set up its position as the LEDs show, or "
                f"the start position for a new game")
    lines.append(Text(f"Game {state.game or '-'} · {head}", style="bold"))
    if state.phase == "playing":
        side = "White (♔)" if state.turn == chess.WHITE else "Black (♚)"
        lines.append(Text(f"{side} to move", style="bold cyan"))
    white, black = state.clocks
    if white is not None and black is not None:
        lines.append(Text(f"clock  White {format_clock(white)}  ·  Black "
                          f"{format_clock(black)}", style="bold"))
    if state.result:
        lines.append(Text(f"Result {state.result} ({state.termination})", style="bold green"))
    frame = state.frame
    if frame is not None:
        st = frame.status

        def lamp(on: bool, name: str) -> str:
            return f"{'●' if on else '○'} {name}"

        alert = "○ alert" if st.alert is None else f"● alert ({st.alert.name.lower()})"
        lines.append(Text("  ".join([lamp(st.white_to_move, "white"),
                                     lamp(st.black_to_move, "black"), alert,
                                     lamp(st.game_over, "game over")])))
        computer = computer_line(state)
        if computer:
            lines.append(Text(computer, style="bold magenta"))
        legend = led_legend(frame)
        if legend:
            lines.append(Text(legend))
        lines.append(Text(f"LEDs: {describe_leds(frame)}", style="dim"))
    for code, text in state.alerts:
        lines.append(Text(f"⚠ {code}: {text}", style="bold red"))
    if state.moves:
        lines.append(Text("Moves: " + moves_text(state.start_fen, state.moves, last=12)))
    lines.append(Text(f"link: {state.link} · t = {state.t:.1f} s", style="dim"))
    return lines
