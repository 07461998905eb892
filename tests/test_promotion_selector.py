"""The promotion selector counts when set any time before the move is completed: before
the lift, with the pawn in hand, after it landed, and even just after the clock press
(within the press's grace, until the opponent starts his move). Without a clock the move
is completed when the opponent starts, so the selector counts until then; but a setting
made seconds after the new piece came to rest, when the opponent has a pawn to promote,
is his early choice for his own promotion.

Each case is built event by event at exact times around the landing, the press and the
opponent's first lift, for both colours and every piece.
"""

from __future__ import annotations

import chess
import pytest

from board_ctl.core import events as ev
from board_ctl.core.effects import MoveMade
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import CLOCK_GRACE, Referee
from board_ctl.record import GameRecord
from board_ctl.replay import replay_events
from board_ctl.sensorlog import StartInfo

# (fen, the pawn's move, the opponent's reply (a king move legal after any promotion))
SIDES = {
    "white": ("4k3/1P5p/8/8/8/8/7P/4K3 w - - 0 1", (chess.B7, chess.B8), (chess.E8, chess.F7)),
    "black": ("4k3/7p/8/8/8/8/1p5P/4K3 b - - 0 1", (chess.B2, chess.B1), (chess.E1, chess.F2)),
}
PIECES = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
LIFT, LANDED, PRESS = 1.0, 1.6, 2.1  # the pawn landed 0.5 s before the press


def replay(colour: str, selector_at: float | None, piece: chess.PieceType, *,
           use_clock: bool = True, reply_lift: float | None = None) -> GameRecord:
    fen, (origin, target), (k_from, k_to) = SIDES[colour]
    mover = chess.Board(fen).turn
    timeline: list[ev.Event] = [ev.Lifted(LIFT, origin), ev.Placed(LANDED, target)]
    if use_clock:
        timeline.append(ev.ClockPressed(PRESS, mover))
    reply = reply_lift if reply_lift is not None else (PRESS + 1.0 if use_clock else 4.0)
    timeline += [ev.Lifted(reply, k_from), ev.Placed(reply + 0.4, k_to)]
    if use_clock:
        timeline.append(ev.ClockPressed(reply + 0.8, not mover))
    if selector_at is not None:
        timeline.append(ev.PromotionChosen(selector_at, piece))
    timeline.sort(key=lambda event: event.t)  # (stable: a selector at the press comes after)
    return replay_events(StartInfo(fen=fen), timeline, PROFILES["fide"])


def promoted(record: GameRecord) -> chess.PieceType | None:
    assert len(record.moves) == 2, record.report  # the promotion and the reply
    return record.moves[0].move.promotion


# Around the press: well before it, just before, at it, and throughout its grace.
BEFORE_COMPLETION = [LIFT - 0.5, LIFT + 0.2, LANDED + 0.01, PRESS - 0.45, PRESS - 0.1,
                     PRESS - 0.01, PRESS, PRESS + 0.001, PRESS + 0.01, PRESS + 0.05,
                     PRESS + 0.1, PRESS + 0.2, PRESS + CLOCK_GRACE - 0.01]


@pytest.mark.parametrize("colour", sorted(SIDES))
@pytest.mark.parametrize("at", BEFORE_COMPLETION,
                         ids=[f"{at - PRESS:+.3f}" for at in BEFORE_COMPLETION])
def test_with_a_clock_the_selector_counts_until_the_press_grace_ends(
        colour: str, at: float) -> None:
    for piece in PIECES:
        record = replay(colour, at, piece)
        assert promoted(record) == piece, (colour, at, piece)
        assert not [line for line in record.report if line["kind"] == "alert"]


@pytest.mark.parametrize("colour", sorted(SIDES))
@pytest.mark.parametrize("after", [CLOCK_GRACE + 0.01, 0.6, 0.95])
def test_a_selector_after_the_grace_is_too_late(colour: str, after: float) -> None:
    record = replay(colour, PRESS + after, chess.KNIGHT)
    assert promoted(record) == chess.QUEEN


@pytest.mark.parametrize("colour", sorted(SIDES))
def test_the_opponent_starting_ends_the_grace_at_once(colour: str) -> None:
    # He lifts his king 0.1 s after the press: the move was complete; a selector after
    # that lift is not the promoting side's.
    record = replay(colour, PRESS + 0.15, chess.KNIGHT, reply_lift=PRESS + 0.1)
    assert promoted(record) == chess.QUEEN
    record = replay(colour, PRESS + 0.05, chess.KNIGHT, reply_lift=PRESS + 0.1)
    assert promoted(record) == chess.KNIGHT


def test_a_selector_in_the_grace_completes_the_move_at_once() -> None:
    fen, (origin, target), _ = SIDES["white"]
    referee = Referee(fen)
    for event in (ev.Lifted(LIFT, origin), ev.Placed(LANDED, target)):
        referee.feed(event)
    assert not any(isinstance(e, MoveMade) for e in referee.feed(
        ev.ClockPressed(PRESS, chess.WHITE)))
    made = [e for e in referee.feed(ev.PromotionChosen(PRESS + 0.05, chess.ROOK))
            if isinstance(e, MoveMade)]
    assert [m.move.promotion for m in made] == [chess.ROOK]  # at the selector, not later
    assert made[0].t == LANDED  # the move's time is when it stood, as always


NO_CLOCK_REPLY = 4.0
WITHOUT_CLOCK = [LIFT - 0.5, LIFT + 0.2, LANDED + 0.01, LANDED + 0.5, NO_CLOCK_REPLY - 1.0,
                 NO_CLOCK_REPLY - 0.05, NO_CLOCK_REPLY - 0.001]


@pytest.mark.parametrize("colour", sorted(SIDES))
@pytest.mark.parametrize("at", WITHOUT_CLOCK)
def test_without_a_clock_the_selector_counts_until_the_opponent_starts(
        colour: str, at: float) -> None:
    for piece in PIECES:
        record = replay(colour, at, piece, use_clock=False)
        assert promoted(record) == piece, (colour, at, piece)
        assert not [line for line in record.report if line["kind"] == "alert"]


@pytest.mark.parametrize("colour", sorted(SIDES))
@pytest.mark.parametrize("after", [0.0, 0.03, 0.5])
def test_without_a_clock_a_selector_after_the_opponent_started_is_not_the_movers(
        colour: str, after: float) -> None:
    record = replay(colour, NO_CLOCK_REPLY + after, chess.KNIGHT, use_clock=False)
    assert promoted(record) == chess.QUEEN


# Both sides can promote: Black's g2 pawn now, White's b7 pawn in reply.
BOTH_PROMOTE = "7k/1P6/8/8/8/K7/6p1/8 b - - 0 1"
BLACK_PROMOTES = {"pawn first": "-g2 @0.5 +g1", "piece first": "+g1 @0.9 -g2"}
WHITE_PROMOTES = {"pawn first": "-b7 @0.5 +b8", "piece first": "+b8 @0.9 -b7",
                  "pawn put down, replaced": "-b7 @0.5 +b8 @0.8 -b8 @0.9 +b8"}


@pytest.mark.parametrize("black", sorted(BLACK_PROMOTES))
@pytest.mark.parametrize("white", sorted(WHITE_PROMOTES))
@pytest.mark.parametrize("set_after", [3.2, 5.0, 12.0])
def test_without_a_clock_the_opponents_early_choice_is_his(black: str, white: str,
                                                          set_after: float) -> None:
    # (promotion-piece-first, corpus game 52, --seed 80808: g1=Q read as g1=N, White's
    # knight given to Black's move) White sets the selector for his own promotion,
    # seconds after Black's new piece came to rest, before his hand starts.
    from script import play

    out = play(f"{BLACK_PROMOTES[black]} ~{set_after - 0.4} =n @0.3 {WHITE_PROMOTES[white]} "
               f"~3 -h8 @0.5 +g8 ~2", BOTH_PROMOTE)
    assert out.sans == ["g1=Q", "b8=N", "Kg8"]
    assert out.alerts == []


@pytest.mark.parametrize("black", sorted(BLACK_PROMOTES))
@pytest.mark.parametrize("set_after", [0.05, 1.0, 2.5])
def test_without_a_clock_the_movers_choice_just_after_is_his(black: str,
                                                             set_after: float) -> None:
    # Set as the piece comes to rest or moments after: the mover telling the board which
    # piece he put down, though the opponent could promote too.
    from script import play

    out = play(f"{BLACK_PROMOTES[black]} @{set_after} =r ~4 -a3 @0.5 +a4 ~2", BOTH_PROMOTE)
    assert out.sans == ["g1=R", "Ka4"]


@pytest.mark.parametrize("colour", sorted(SIDES))
def test_without_a_clock_a_late_choice_is_the_movers_when_the_opponent_cannot_promote(
        colour: str) -> None:
    # No promotion of his to choose for: the selector set long after is the mover's.
    record = replay(colour, LANDED + 6.0, chess.ROOK, use_clock=False, reply_lift=LANDED + 9.0)
    assert promoted(record) == chess.ROOK
