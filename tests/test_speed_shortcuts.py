"""The referee's shortcuts for speed change nothing it does.

- The commonest completion without a clock is read in one step
  (`inference.reply_to_the_move_standing`): replayed with that step turned off, so that
  `explain` takes the long way every time, real games give the very same effects, LED
  frames and their times included.
- A position counts en passant possible only with a pawn of the mover's beside the en
  passant square (`Position.en_passant`; python-chess keeps the square after every
  double step): when it says no, no legal move empties a square of the opponent's.
- The clock goes over for a move with no clock's times reported (every move without a
  clock, most with one) in one step (`Completion._switch_clock`): replayed with the long
  way (`GameClock.switch`, the times checked) in its place, real games give the very same
  effects.
- Each move's new position is told whether it is in check by the move's SAN (`+`, `#`),
  not by asking python-chess again: it is what python-chess says.
- A new turn takes over the opponent's reply begun (`Turn.adopt`) in one step when it is
  one piece lifted: the same touches and events as the long way (`Turn._adopt`).
- A LED frame that lights nothing is built directly (`Outbox.quiet_frame`): it is
  `nothing_lit`'s frame, shown exactly when it differs from the last one shown.
- The watch on a game ended by a move left standing (`MovedOn`) copies the board with its
  last move only, not the whole game: it reads the same as from a copy of everything.
"""

from __future__ import annotations

import itertools

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core import inference
from board_ctl.core.completion import Completion
from board_ctl.core.gameclock import Switched
from board_ctl.core.position import Position
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.core.rules.completed import MovedOn
from board_ctl.core.shapes import shape_of
from board_ctl.core.turn import Carried, Turn
from board_ctl.core.effects import Alert, GameOver, LedFrame, MoveMade, Note
from board_ctl.core.leds import SquareLight, nothing_lit
from board_ctl.core.outbox import Outbox
from board_ctl.core.timebase import seconds
from board_ctl.sensorlog import read_sensor_log
from board_ctl.simulate import RenderStyle, render_game
from corpus import corpus

SLOPPY = RenderStyle(use_clock=False, bounce_pairs=(0, 6), slide_prob=0.9, idle_lift_prob=0.2,
                     capture_styles=(1, 1, 1, 1, 1), promotion_styles=(1, 1))


def effects(text: str, release_completes: bool = False) -> list[str]:
    log = read_sensor_log(text.splitlines())
    referee = Referee(log.start.fen, PROFILES["fide"], release_completes=release_completes)
    out = [repr(effect) for event in log.events for effect in referee.feed(event)]
    return out + [repr(effect) for effect in referee.finish()]


def renderings(games: slice) -> list[tuple[str, bool]]:
    logs = []
    for i, game in enumerate(corpus()[games]):
        for style in (RenderStyle(use_clock=False), SLOPPY):
            logs.append((render_game(game, seed=i, style=style).jsonl(), False))
        logs.append((render_game(game, seed=i + 1, style=RenderStyle(use_clock=False)).jsonl(),
                     True))  # (an online game's rule: a released move completes)
    return logs


def check_one_step_completion(games: slice, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = renderings(games)
    taken = itertools.count()
    one_step = inference.reply_to_the_move_standing

    def counted(turn, ctx):  # type: ignore[no-untyped-def]
        found = one_step(turn, ctx)
        if found is not None:
            next(taken)
        return found

    monkeypatch.setattr(inference, "reply_to_the_move_standing", counted)
    fast = [effects(text, release) for text, release in logs]
    steps = next(taken)
    monkeypatch.setattr(inference, "reply_to_the_move_standing", lambda turn, ctx: None)
    slow = [effects(text, release) for text, release in logs]
    assert steps > 20 * len(logs)  # (the step was taken: most moves complete so)
    for (text, _), a, b in zip(logs, fast, slow):
        assert a == b, next((x, y) for x, y in zip(a, b) if x != y)


def test_the_one_step_completion_reads_as_the_long_way(monkeypatch: pytest.MonkeyPatch) -> None:
    check_one_step_completion(slice(0, 317, 106), monkeypatch)


@pytest.mark.slow
def test_the_one_step_completion_reads_as_the_long_way_in_many_games(
        monkeypatch: pytest.MonkeyPatch) -> None:
    check_one_step_completion(slice(1, 317, 9), monkeypatch)


SPECIAL = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2",  # no pawn beside
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # one beside
    "4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 2",
    "4k3/8/8/8/2Pp4/8/8/4K3 b - c3 0 1",
    "8/8/8/KPp4r/8/8/8/4k3 w - c6 0 2",  # beside, but the capture would expose the king
]


def check_en_passant(board: chess.Board) -> None:
    position = Position(board.copy(stack=False))
    theirs = board.occupied_co[not board.turn]
    empties_theirs = any(shape_of(board, move).vacated & theirs for move in board.legal_moves)
    if empties_theirs:
        assert position.en_passant, board.fen()
    if any(board.is_en_passant(move) for move in board.legal_moves):
        assert position.en_passant, board.fen()
    if not position.en_passant:
        assert not empties_theirs, board.fen()


def test_en_passant_is_counted_possible_only_beside_a_pawn() -> None:
    for fen in SPECIAL:
        check_en_passant(chess.Board(fen))
    assert not Position(chess.Board(SPECIAL[0])).en_passant
    assert Position(chess.Board(SPECIAL[1])).en_passant
    for game in corpus()[::7]:
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            if board.ep_square is not None:
                check_en_passant(board)


def test_the_moved_on_watch_reads_as_from_the_whole_game() -> None:
    """Every ply of real games (castling, promotions, checks and mates among them), the
    board sensed as it stands and with the moved piece in hand: the watch holds what the
    position before the last move, copied with all its history, says."""
    checked = 0
    for game in corpus()[::40]:
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            before = board.copy()  # (the long way: the whole game)
            last = before.pop()
            for sensed in (board.occupied, board.occupied & ~chess.BB_SQUARES[last.to_square]):
                watch = MovedOn(board, sensed)
                targets = () if before.is_castling(last) else {
                    m.to_square for m in before.legal_moves if m.from_square == last.from_square
                    and not sensed & chess.BB_SQUARES[m.to_square]}
                assert (watch.mover, watch.san, watch.to_square, watch.in_hand, watch.moved_on) == (
                    before.turn, before.san(last), last.to_square,
                    sensed & ~chess.BB_SQUARES[last.to_square],
                    {watch.in_hand | chess.BB_SQUARES[s]: s for s in targets}), board.fen()
                checked += 1
            assert len(board.move_stack) == len(before.move_stack) + 1  # (left as it was)
    assert checked > 1000


def switch_clock_the_long_way(self: Completion, mover: chess.Color, t: int) -> Switched:
    """`Completion._switch_clock` with no step skipped: every move through
    `GameClock.switch`, its fault and trust looked at."""
    press, game_clock = self.press, self.game_clock
    at = press.at if press.at is not None else t
    if game_clock.now > at:
        at = game_clock.now
    reported, press.reported = press.reported, None
    if reported is not None and reported[0] != press.at:
        reported = None
    return self._checked_switch(mover, at, reported)


def test_the_clock_switch_without_times_reads_as_the_long_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    logs = renderings(slice(2, 317, 79)) + [
        (render_game(game, seed=i).jsonl(), False)  # (with clock presses)
        for i, game in enumerate(corpus()[5:317:79])]
    fast = [effects(text, release) for text, release in logs]
    monkeypatch.setattr(Completion, "_switch_clock", switch_clock_the_long_way)
    slow = [effects(text, release) for text, release in logs]
    for a, b in zip(fast, slow):
        assert a == b, next((x, y) for x, y in zip(a, b) if x != y)
    assert sum(e.startswith("MoveMade") for log in fast for e in log) > 300


def test_each_moves_position_is_told_in_check_as_python_chess_says() -> None:
    """Real games rendered, with and without a clock: after every event the turn's
    position, where it knows whether it is in check, knows it right."""
    told = 0
    for i, game in enumerate(corpus()[3:317:53]):
        for style in (RenderStyle(), RenderStyle(use_clock=False)):
            log = read_sensor_log(render_game(game, seed=i, style=style).jsonl().splitlines())
            referee = Referee(log.start.fen, PROFILES["fide"])
            for event in log.events:
                referee.feed(event)
                position = referee.game.turn.position
                if position._in_check is not None:
                    assert position._in_check == position.board.is_check(), position.board.fen()
                    told += position._in_check
    assert told > 20  # (positions in check were among them)



SQUARES_NEAR = st.sampled_from([chess.E2, chess.E4, chess.D7, chess.D5, chess.G1, chess.H2])
RAW = st.lists(st.tuples(st.integers(0, 400_000), st.booleans()), min_size=1,
               max_size=4).map(sorted)
WHEN = st.integers(0, 400_000)
SELECTIONS = st.lists(st.tuples(WHEN, st.sampled_from([2, 5])), max_size=1)


RARELY = st.sampled_from([False, False, False, True])  # (each way off the common case)


@pytest.mark.slow  # (over 1 s: the fast subset stays under 90 s)
@settings(max_examples=400, deadline=None)
@given(data=st.data(), square=SQUARES_NEAR, after_e4=st.booleans())
def test_a_reply_begun_is_adopted_as_the_long_way(data: st.DataObject, square: chess.Square,
                                                 after_e4: bool) -> None:
    """Records carried over: one piece lifted (its square's events, its touch; occupied or
    not), and all near it: another square's events or touch, pieces held, selector
    settings, a turn that saw events already."""
    events = {square: data.draw(RAW)}
    touched = [(data.draw(WHEN), square)]
    more = data.draw(st.sampled_from(["none", "none", "more", "others"]))
    if more != "none":  # (other squares' events too, or only theirs)
        others = data.draw(st.dictionaries(SQUARES_NEAR, RAW, min_size=1, max_size=2))
        events = {**events, **others} if more == "more" else others
    if data.draw(RARELY):
        touched = data.draw(st.lists(st.tuples(WHEN, SQUARES_NEAR), max_size=2))
    held = data.draw(st.sampled_from([0, chess.BB_SQUARES[square]]))
    if data.draw(RARELY):
        for lifted in data.draw(st.sets(SQUARES_NEAR, max_size=2)):
            held |= chess.BB_SQUARES[lifted]
    selections = data.draw(SELECTIONS) if data.draw(RARELY) else []
    own_selections = data.draw(SELECTIONS) if data.draw(RARELY) else []
    had_events = data.draw(RARELY)
    board = chess.Board()
    if after_e4:
        board.push_san("e4")
    turns = []
    for _ in range(2):
        turn = Turn(Position(board), 1_000_000)
        turn.selections = list(own_selections)
        if had_events:
            turn.events_on = {chess.A7: [(500_000, False)]}
        carried = Carried({sq: list(seen) for sq, seen in events.items()}, list(touched),
                          list(selections))
        turns.append((turn, carried))
    (fast, carried_fast), (slow, carried_slow) = turns
    fast.adopt(carried_fast, held, 450_000, 100_000)
    slow._adopt(carried_slow, held, 450_000, 100_000)
    assert (fast.touched, fast.events_on, fast.selections) == (
        slow.touched, slow.events_on, slow.selections)


EFFECTS = st.lists(st.sampled_from([
    MoveMade(1.0, 1, chess.Move(12, 28), "e4", None, 1.0),
    Note(1.0, "a note"),
    Alert(1.0, "touch-move", chess.WHITE, (12,), "touched"),
    GameOver(1.0, "1-0", "checkmate"),
]), max_size=3)


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 10**9), st.booleans(), EFFECTS, st.booleans(),
                                st.booleans()), min_size=1, max_size=8))
def test_a_frame_lighting_nothing_is_nothing_lits(
        steps: list[tuple[int, bool, list, bool, bool]]) -> None:
    """Any run of frames, effects (silent, chirping, sounding the result) and frames of
    another kind shown between (squares lit) or not (dirty only)."""
    out = Outbox()
    last: LedFrame | None = None
    for t, side, new, dirty, lit_before in steps:
        if lit_before:  # (a frame of another kind shown meanwhile: squares lit)
            lit = LedFrame(seconds(t), (SquareLight(12, 1, 0),), nothing_lit(0, side).status)
            out._show(lit)  # (as Outbox.frame shows one)
            last = lit
        out.effects += new
        out.dirty = dirty
        before = len(out.effects)
        out.quiet_frame(t, side)
        shown = out.effects[before:]
        if not new and not dirty:
            assert not shown
            continue
        expected = nothing_lit(seconds(t), side, new)
        differs = last is None or (expected.squares, expected.status, expected.guidance,
                                   expected.buzzer) != (last.squares, last.status,
                                                        last.guidance, last.buzzer)
        assert shown == ([expected] if differs else [])
        if differs:
            last = expected
