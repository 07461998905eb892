"""What an app is shown (board_ctl.apps.position), over real games refereed in process.

Each rendered sensor log is fed to the referee event by event (with the Ticks a quiet
link sends), as the service does with the app ports on (`release_completes`: an app's engine or web page is the players'
opponent); after each event the port's model is given the game's position and the
settled occupancy, as the service publishes them. Every placement an app would have
read is then held to the game (tests/appskit.py): one of its positions or a move in
progress, every position read after its move, the last one the game's end.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import chess
import chess.pgn
import pytest

from appskit import check_timeline, positions_of, skippable, squares_of
from board_ctl.apps.position import AppPosition
from board_ctl.core import events as ev
from board_ctl.core.effects import MoveMade
from board_ctl.core.referee import Referee
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderStyle, render_game
from board_ctl.simulate.render import RenderedGame
from board_ctl.simulate.violations import render_violation
from corpus import corpus, has_move
from livechesskit import ALL_KINDS, Window, kinds
from servicekit import excerpt, game_from

TICK = 0.05  # s: the service hears the board at least this often (its link's Ticks)
CLOCK = RenderStyle(think=(0.3, 2.0), long_think_prob=0.0)
# Without a clock a move is complete once its piece has stood 1 s (3 s for a promotion);
# a player who answers sooner completes it by starting his own.
NO_CLOCK = RenderStyle(use_clock=False, think=(0.3, 2.0), long_think_prob=0.0)


def shown_timeline(rendered: RenderedGame) -> tuple[list[str], list[chess.Move], list[str]]:
    """(every placement an app read, the moves the referee recorded, the guesses logged)."""
    log = read_sensor_log(io.StringIO(rendered.jsonl()))
    assert not log.errors
    referee = Referee(log.start.fen, time_control=log.start.time_control,
                      release_completes=True)
    model = AppPosition(log.start.fen)
    placements = [model.board_fen()]
    moves: list[chess.Move] = []
    guesses: list[str] = []

    def show(effects: list) -> None:
        moves.extend(e.move for e in effects if isinstance(e, MoveMade))
        update = model.update(referee.board.fen(), referee.occupied)
        guesses.extend(g.text() for g in update.guesses)
        if update.changes:
            placements.append(model.board_fen())

    t = 0.0
    for event in log.events:
        while t + TICK < event.t:  # the board's link ticks while it is quiet
            t += TICK
            show(referee.feed(ev.Tick(t)))
        t = max(t, event.t)
        show(referee.feed(event))
    show(referee.finish())
    return placements, moves, guesses


def check(rendered: RenderedGame, where: str, violation_plies: set[int] = frozenset(),
          ) -> None:
    placements, moves, guesses = shown_timeline(rendered)
    # The record ends before a last capture swapped in one motion, unless it mates
    # (README, "Where a record ends"): then the app's last read is that move in progress.
    unfinished = moves == rendered.moves[:-1]
    assert moves == rendered.moves or unfinished, \
        f"{where}: the referee's record differs from the game"
    clock = any(line.get("ev") == "clock" for line in rendered.lines)
    may_skip = set() if clock else skippable(rendered.start_fen, rendered.moves)
    check_timeline(placements, positions_of(rendered.start_fen, rendered.moves),
                   violation_plies=violation_plies, may_skip=may_skip,
                   last_unfinished=unfinished, where=where)
    if not violation_plies:
        assert not guesses, f"{where}: a clean game needed guesses: {guesses}"


# Windows of corpus games with castling, en passant, a promotion and a recapture (found
# by livechesskit.windows over the whole corpus, which takes seconds: named here as
# (file, game, first ply, end ply)).
WINDOWS = (("stockfish-300.pgn", 298, 14, 29), ("stockfish-300.pgn", 287, 32, 76))


def window(index: int) -> chess.pgn.Game:
    pgn, number, start, end = WINDOWS[index]
    game = game_from(pgn, number)
    w = Window(game, start, end)
    board, moves = w.board_at(start), list(game.mainline_moves())[start:end]
    found: set[str] = set()
    for i, move in enumerate(moves):
        found |= kinds(board, move, moves[i + 1] if i + 1 < len(moves) else None)
        board.push(move)
    assert found >= ALL_KINDS, found
    return excerpt(game, start, end)


def game_with_both_castlings() -> chess.pgn.Game:
    """A corpus game where one side castles short and the other long."""
    game = game_from("stockfish-300.pgn", 16)

    def castles(short: bool) -> Callable[[chess.Board, chess.Move], bool]:
        return lambda board, move: board.is_castling(move) and (
            board.is_kingside_castling(move) == short)
    assert has_move(game, castles(True)) and has_move(game, castles(False))
    return game


@pytest.mark.parametrize("style", [CLOCK, NO_CLOCK], ids=["clock", "no-clock"])
@pytest.mark.parametrize("index", [0, 1])
def test_every_kind_of_move(index: int, style: RenderStyle) -> None:
    """Windows of real games with castling, en passant, a promotion and a recapture."""
    game = window(index)
    for seed in range(2):
        check(render_game(game, seed=seed, style=style), f"window {index} seed {seed}")


@pytest.mark.parametrize("style", [CLOCK, NO_CLOCK], ids=["clock", "no-clock"])
def test_castling_both_ways(style: RenderStyle) -> None:
    game = game_with_both_castlings()
    check(render_game(game, seed=5, style=style), "both castlings")


VIOLATIONS = ["illegal-move", "position-mismatch", "knocked-over-the-press",
              "knocked-during-move", "touch-move", "move-changed"]


@pytest.mark.parametrize("code", VIOLATIONS)
def test_violations_show_the_pieces_as_they_lie(code: str) -> None:
    """An illegal move reinstated, a knocked piece, a touched piece put back, a released
    piece moved on: pieces shown where they lie, never a position made up."""
    game = window(0)
    for seed in range(2):
        rendered = render_violation(game, code, seed=seed, style=CLOCK)
        plies = {ply for _, ply in rendered.expected_alerts}
        check(rendered, f"{code} seed {seed}", {p for ply in plies for p in (ply, ply + 1)})


def test_illegal_move_is_shown_then_taken_back() -> None:
    """The piece of an illegal move is read on the square it was put on (so the app can
    tell), then back on its own: the record and the app's last read are the game's."""
    game = window(0)
    rendered = render_violation(game, "illegal-move", seed=3, style=CLOCK)
    placements, _, guesses = shown_timeline(rendered)
    (_, ply), = rendered.expected_alerts
    board = chess.Board(rendered.start_fen)
    for move in rendered.moves[:ply]:
        board.push(move)
    mover = board.piece_at(rendered.moves[ply].from_square)
    before = squares_of(board.board_fen())
    strays = [p for p in placements
              if any(sq not in before and piece == mover.symbol()
                     and sq != rendered.moves[ply].to_square
                     for sq, piece in squares_of(p).items())]
    assert strays, "the illegal move's piece was never shown where it was put"
    assert guesses, "the illegal square's piece should be logged as a best reading"


@pytest.mark.slow
@pytest.mark.parametrize("style", [CLOCK, NO_CLOCK], ids=["clock", "no-clock"])
def test_whole_games(style: RenderStyle) -> None:
    for index, game in enumerate(corpus()[::16]):
        check(render_game(game, seed=index, style=style), f"game {index * 16}")


# ---------------------------------------------------------------- the game ahead of the board


def pieces(model: AppPosition) -> str:
    return model.board_fen()


def test_a_computers_move_is_read_when_made_on_the_board_not_before() -> None:
    """Against a computer its move is the game's as soon as chosen; the board shows it
    only once the person has made it. The app reads the board: the old position until
    the piece is lifted, the computer's capture once made, whichever order the hands use."""
    before = chess.Board("rnbqkb1r/pppppppp/5n2/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 1 2")
    after = before.copy()
    after.push_san("Nxe4")
    for order in ((chess.F6, chess.E4), (chess.E4, chess.F6)):
        model = AppPosition(before.fen())
        occupied = before.occupied
        model.update(after.fen(), occupied)  # announced, not yet made
        assert pieces(model) == before.board_fen()
        for square in order:  # both lifted: the knight and the pawn it takes
            occupied &= ~chess.BB_SQUARES[square]
            update = model.update(after.fen(), occupied)
            assert not update.guesses
        occupied |= chess.BB_E4
        model.update(after.fen(), occupied)
        assert pieces(model) == after.board_fen()


def test_a_takeback_is_read_as_the_board_shows_it() -> None:
    """A takeback (against a computer, casual) sets the game back; until the pieces are
    moved back the app reads the board as it stands, then the earlier position."""
    board = chess.Board()
    board.push_san("e4")
    model = AppPosition(board.fen())
    occupied = board.occupied
    back = chess.Board()
    model.update(back.fen(), occupied)
    assert pieces(model) == board.board_fen()
    occupied &= ~chess.BB_E4
    model.update(back.fen(), occupied)
    occupied |= chess.BB_E2
    model.update(back.fen(), occupied)
    assert pieces(model) == back.board_fen()


def test_a_piece_from_off_the_board_is_a_guess_said_as_such() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    model = AppPosition(board.fen())
    update = model.update(board.fen(), board.occupied | chess.BB_D4)
    (guess,) = update.guesses
    assert guess.square == chess.D4 and "off the board" in guess.text()
    assert model.piece_at(chess.D4) is not None
