"""The referee against a remote side (a computer): its moves are recorded as chosen and
shown on the LEDs; the person makes them with a person's hands; nothing he does with
the pieces while the board lags the game is judged; his own moves are judged as over
the board, completed by release when there is no clock."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.core.effects import (
    Alert,
    Blink,
    Colour,
    Effect,
    GameOver,
    LedFrame,
    MoveMade,
    Remote,
    SquareLight,
    TakenBack,
)
from board_ctl.core.profiles import PROFILES
from board_ctl.core.inference import RELEASED_AFTER
from board_ctl.core.referee import Referee
from board_ctl.core.rules.endings import GAME_END_HOLD
from board_ctl.core.rules.remote import (
    PROMOTION_HOLD,
    PROMOTION_RELEASE,
    REMOTE_HOLD,
    move_lights,
)
from board_ctl.core.timecontrol import TimeControl
from board_ctl.replay import replay_events
from board_ctl.sensorlog import StartInfo
from firmware_bridge.player import Person, Script
from remotekit import Played, play, random_move

sq = chess.parse_square
M = chess.Move.from_uci


class Table:
    """A referee fed by hand, its effects kept."""

    def __init__(self, fen: str = chess.STARTING_FEN, remote: chess.Color = chess.BLACK,
                 profile: str = "fide", time_control: str | None = None) -> None:
        tc = TimeControl.parse(time_control) if time_control else None
        self.referee = Referee(fen, PROFILES[profile], time_control=tc, remote=remote)
        self.effects: list[Effect] = []
        self.events: list[ev.Event] = []
        self.start = StartInfo(fen=chess.Board(fen).fen(), remote=remote,
                               time_control=time_control)
        self.t = 0.0
        self.feed(ev.Tick(0.0))

    def feed(self, event: ev.Event) -> list[Effect]:
        self.events.append(event)
        out = self.referee.feed(event)
        self.effects += out
        return out

    def at(self, dt: float) -> float:
        self.t = round(self.t + dt, 6)
        return self.t

    def lift(self, name: str, dt: float = 0.4) -> None:
        self.feed(ev.Lifted(self.at(dt), sq(name)))

    def place(self, name: str, dt: float = 0.4) -> None:
        self.feed(ev.Placed(self.at(dt), sq(name)))

    def move(self, uci: str, dt: float = 0.4) -> None:
        self.lift(uci[:2], dt)
        self.place(uci[2:4], dt)

    def wait(self, dt: float) -> None:
        self.feed(ev.Tick(self.at(dt)))

    def computer(self, uci: str, dt: float = 0.5) -> None:
        self.feed(ev.OpponentMoved(self.at(dt), M(uci)))

    @property
    def moves(self) -> list[str]:
        return [e.move.uci() for e in self.effects if isinstance(e, MoveMade)]

    @property
    def alerts(self) -> list[str]:
        return [e.code for e in self.effects if isinstance(e, Alert)]

    @property
    def frame(self) -> LedFrame:
        return next(e for e in reversed(self.effects) if isinstance(e, LedFrame))

    def lit(self) -> dict[str, tuple[Colour, Blink]]:
        return {chess.square_name(s.square): (s.colour, s.blink) for s in self.frame.squares}


def opening(table: Table) -> None:
    """1. e4 (released: no clock) and the computer's 1... e5 announced."""
    table.move("e2e4")
    table.wait(RELEASED_AFTER + 0.2)
    table.computer("e7e5")


def test_the_computers_move_is_recorded_when_chosen_and_shown_until_made() -> None:
    table = Table()
    table.move("e2e4")
    table.wait(0.5)
    assert table.moves == []  # not yet released
    table.wait(RELEASED_AFTER)
    assert table.moves == ["e2e4"]
    assert table.frame.status.remote == Remote.THINKING and table.lit() == {}
    table.computer("e7e5")
    assert table.moves == ["e2e4", "e7e5"]  # recorded at once: the computer chose it
    assert table.lit() == {"e7": (Colour.BLUE, Blink.STEADY), "e5": (Colour.GREEN, Blink.STEADY)}
    assert table.frame.status.remote == Remote.SHOWN and table.frame.status.white_to_move
    table.move("e7e5")
    table.wait(0.2)
    assert table.lit() == {} and table.frame.status.remote == Remote.NONE
    table.move("g1f3")
    table.wait(RELEASED_AFTER + 0.2)
    assert table.moves == ["e2e4", "e7e5", "g1f3"] and table.alerts == []


def test_the_clock_stops_for_the_computer_when_it_announces() -> None:
    table = Table(time_control="300+2")
    table.move("e2e4")
    table.feed(ev.ClockPressed(table.at(0.5), chess.WHITE))
    table.computer("e7e5", dt=4.0)  # it thought 4 s
    announced = table.t
    made = [e for e in table.effects if isinstance(e, MoveMade)]
    assert made[-1].elapsed == pytest.approx(4.0) and made[-1].clock == pytest.approx(298.0)
    clock = table.referee.clock
    assert clock.turn == chess.WHITE  # the person's clock runs from the announcement
    table.move("e7e5", dt=2.0)
    table.wait(0.3)
    table.move("g1f3", dt=1.0)
    table.wait(RELEASED_AFTER + 0.5)
    assert table.moves == ["e2e4", "e7e5"]  # with a clock, his press completes his move
    table.feed(ev.ClockPressed(table.at(0.2), chess.WHITE))
    made = [e for e in table.effects if isinstance(e, MoveMade)]
    assert made[-1].move == M("g1f3") and made[-1].elapsed == pytest.approx(table.t - announced)


@pytest.mark.parametrize("fen, uci, expected", [
    # a capture: the victim's square, red
    ("rnbqkbnr/ppp2ppp/8/3pp3/4P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 1 3", "d5e4",
     {"d5": (Colour.BLUE, Blink.STEADY), "e4": (Colour.RED, Blink.STEADY)}),
    # en passant: the pawn taken is red, its destination green
    ("rnbqkbnr/ppp1pppp/8/8/2Pp4/4P3/PP1P1PPP/RNBQKBNR b KQkq c3 0 3", "d4c3",
     {"d4": (Colour.BLUE, Blink.STEADY), "c3": (Colour.GREEN, Blink.STEADY),
      "c4": (Colour.RED, Blink.STEADY)}),
    # castling: the king steady, the rook blinking
    ("r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 6 8", "e8c8",
     {"e8": (Colour.BLUE, Blink.STEADY), "c8": (Colour.GREEN, Blink.STEADY),
      "a8": (Colour.BLUE, Blink.SLOW), "d8": (Colour.GREEN, Blink.SLOW)}),
])
def test_what_the_squares_show(fen: str, uci: str, expected: dict[str, object]) -> None:
    board = chess.Board(fen)
    lights = move_lights(board, M(uci))
    assert {chess.square_name(s.square): (s.colour, s.blink) for s in lights} == expected
    table = Table(fen, remote=board.turn)
    table.computer(uci)
    assert table.lit() == expected


def test_a_promotion_shows_its_piece_on_the_status_leds() -> None:
    fen = "8/2P5/8/8/8/6k1/1p6/4K3 b - - 0 1"
    table = Table(fen, remote=chess.BLACK)
    table.computer("b2b1n")
    status = table.frame.status
    assert status.remote == Remote.SHOWN and status.promotion == chess.KNIGHT
    # the pawn put down, then replaced by a knight after a pause: all of it the computer's
    table.move("b2b1")
    table.wait(0.8)
    table.lift("b1")
    table.place("b1", dt=1.0)
    table.wait(PROMOTION_HOLD + 0.2)
    assert table.frame.status.remote == Remote.NONE
    table.move("c7c8", dt=0.5)
    table.feed(ev.PromotionChosen(table.at(0.2), chess.ROOK))
    table.wait(PROMOTION_RELEASE + 0.2)
    assert table.moves == ["b2b1n", "c7c8r"] and table.alerts == []


def test_without_a_clock_a_promotion_waits_for_its_piece() -> None:
    # the pawn put down, left a moment, replaced by a rook, the selector set after: a rook
    # (a promotion completes 3 s after the last change, not the 1 s of a release)
    table = Table("8/1P5k/8/8/8/8/8/K7 w - - 0 1", remote=chess.BLACK)
    table.move("b7b8")
    table.wait(1.6)
    assert table.moves == []
    table.lift("b8", dt=0.2)
    table.place("b8", dt=1.2)
    table.feed(ev.PromotionChosen(table.at(0.4), chess.ROOK))
    table.wait(PROMOTION_RELEASE)
    assert table.moves == ["b7b8r"] and table.alerts == []


def test_without_a_clock_a_promotion_chosen_first_still_waits_for_the_pawns_swap() -> None:
    # the selector set first, the pawn put down, left 1.5 s, then replaced by the knight:
    # one move, no piece lifted out of turn
    table = Table("8/1P5k/8/8/8/8/8/K7 w - - 0 1", remote=chess.BLACK)
    table.feed(ev.PromotionChosen(table.at(0.5), chess.KNIGHT))
    table.move("b7b8")
    table.wait(1.5)
    assert table.moves == []
    table.lift("b8")
    table.place("b8", dt=1.2)
    table.wait(PROMOTION_RELEASE - 0.2)
    assert table.moves == []
    table.wait(0.4)
    assert table.moves == ["b7b8n"] and table.alerts == []


def test_a_wrong_execution_is_shown_as_what_to_put_where_then_corrected() -> None:
    table = Table()
    opening(table)
    table.move("e7e6")  # one square short
    table.wait(0.3)
    lit = table.lit()
    assert lit["e6"] == (Colour.RED, Blink.SLOW)  # the extra piece
    assert lit["e7"] == (Colour.BLUE, Blink.STEADY) and lit["e5"] == (Colour.GREEN, Blink.STEADY)
    assert table.frame.guidance == ((sq("e6"), sq("e5")),)
    table.wait(5.0)  # however long it takes: no alert against him
    table.move("e6e5")
    table.wait(0.3)
    assert table.lit() == {} and table.alerts == []
    assert table.moves == ["e2e4", "e7e5"]


def test_moving_another_computer_piece_is_never_recorded_for_it() -> None:
    table = Table()
    opening(table)
    table.move("d7d5")  # a legal move for Black, but not the one it chose
    table.wait(3.0)
    assert table.moves == ["e2e4", "e7e5"]
    lit = table.lit()
    assert lit["d5"] == (Colour.RED, Blink.SLOW) and lit["d7"] == (Colour.GREEN, Blink.SLOW)
    table.move("d5d7")
    table.move("e7e5")
    table.wait(0.3)
    table.move("d2d4")
    table.wait(RELEASED_AFTER + 0.2)
    assert table.moves == ["e2e4", "e7e5", "d2d4"] and table.alerts == []


def test_pieces_handled_while_the_computer_thinks_are_guided_back_without_alert() -> None:
    table = Table()
    table.move("e2e4")
    table.wait(RELEASED_AFTER + 0.2)
    table.move("d2d4")  # he goes on playing on the computer's turn
    table.wait(2.0)
    lit = table.lit()
    assert lit == {"d2": (Colour.GREEN, Blink.SLOW), "d4": (Colour.RED, Blink.SLOW)}
    assert table.frame.status.remote == Remote.THINKING
    table.lift("e7")  # and touches its pieces
    table.place("e7")
    table.move("d4d2")
    table.wait(2.0)
    assert table.lit() == {} and table.alerts == [] and table.moves == ["e2e4"]


def test_touching_the_computers_pieces_on_his_turn_is_no_touch_move() -> None:
    table = Table()
    opening(table)
    table.move("e7e5")
    table.wait(0.3)
    table.lift("e5")  # adjusts the computer's pawn
    table.place("e5", dt=0.3)
    table.move("g1f3")
    table.wait(RELEASED_AFTER + 0.2)
    assert table.alerts == [] and table.moves[-1] == "g1f3"


def test_his_own_touched_piece_must_still_move() -> None:
    table = Table()
    opening(table)
    table.move("e7e5")
    table.wait(0.3)
    table.lift("d2")  # touches his own pawn, puts it back, moves another piece
    table.place("d2")
    table.move("g1f3")
    table.wait(RELEASED_AFTER + 0.2)
    assert "touch-move" in table.alerts


def test_his_turn_begins_with_a_lift_of_his_own_before_the_hold() -> None:
    # a capture swapped in one motion: the square never looked empty; his own piece
    # lifted at once ends the computer's move, and his move is judged from that lift
    fen = "rnbqkbnr/ppp2ppp/8/3pp3/4P3/2N5/PPPP1PPP/R1BQKBNR b KQkq - 1 3"
    table = Table(fen)
    table.computer("d5e4")
    table.lift("d5")
    table.wait(0.2)  # pushed off: no event on e4
    table.move("c3e4", dt=0.1)  # he recaptures at once
    table.wait(RELEASED_AFTER + 0.5)
    assert table.moves == ["d5e4", "c3e4"] and table.alerts == []


def test_a_press_while_the_board_lags_or_without_a_move_is_no_offence() -> None:
    table = Table(time_control="300+2")
    table.move("e2e4")
    table.feed(ev.ClockPressed(table.at(0.3), chess.WHITE))
    table.computer("e7e5")
    table.move("e7e5")
    table.feed(ev.ClockPressed(table.at(0.3), chess.WHITE))  # habit: he presses
    table.wait(1.0)
    table.feed(ev.ClockPressed(table.at(0.3), chess.WHITE))
    table.wait(1.0)
    assert table.alerts == [] and table.moves == ["e2e4", "e7e5"]
    assert table.referee.clock.turn == chess.WHITE


def test_the_computers_mate_ends_the_game_at_once_and_stays_lit() -> None:
    fen = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq g3 0 2"
    table = Table(fen)
    table.computer("d8h4")
    over = [e for e in table.effects if isinstance(e, GameOver)]
    assert over and over[0].result == "0-1" and over[0].termination == "checkmate"
    lit = table.lit()
    assert lit["d8"] == (Colour.BLUE, Blink.STEADY) and lit["h4"] == (Colour.GREEN, Blink.STEADY)
    assert lit["e1"] == (Colour.RED, Blink.STEADY)  # the losing king


def test_his_mating_capture_left_standing_ends_the_game() -> None:
    # With a clock, nobody presses after a mate. His queen on d4 could take on d5, e4, f2
    # or b2 (the victim lifted first): only Qxf2 mates, and the piece seen landing on f2
    # says that is the capture made (found by tests/test_remote.py's whole games).
    fen = "rnbk3r/3p1Q1p/p1p5/2bP3n/Pp1qP3/5BP1/NRP2P1P/2B2KNR w - - 1 22"
    table = Table(fen, remote=chess.WHITE, time_control="900+5")
    table.computer("g3g4")
    table.move("g3g4")
    table.wait(3.0)
    table.lift("f2", dt=3.2)
    table.lift("d4", dt=1.0)
    table.place("f2", dt=1.4)
    table.wait(GAME_END_HOLD + 0.5)
    assert table.moves == ["g3g4", "d4f2"] and table.alerts == []
    over = [e for e in table.effects if isinstance(e, GameOver)]
    assert [(o.result, o.termination) for o in over] == [("0-1", "checkmate")]


def test_a_move_it_did_not_choose_or_out_of_turn_is_ignored() -> None:
    table = Table()
    table.computer("e7e5")  # White to move: not its turn
    table.move("e2e4")
    table.wait(RELEASED_AFTER + 0.2)
    table.computer("e7e4")  # not a legal move
    assert table.moves == ["e2e4"]
    table.computer("c7c5")
    assert table.moves == ["e2e4", "c7c5"]


def test_takeback_in_casual_undoes_the_last_full_move_and_guides_the_pieces() -> None:
    table = Table(profile="casual")
    opening(table)
    table.move("e7e5")
    table.wait(0.3)
    table.move("g1f3")
    table.wait(RELEASED_AFTER + 0.2)
    table.computer("b8c6")
    table.move("b8c6")
    table.wait(0.3)
    table.feed(ev.TakebackAsked(table.at(0.5)))
    assert [e.plies for e in table.effects if isinstance(e, TakenBack)] == [2]
    assert table.referee.board.fen() == chess.Board(
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2").fen()
    lit = table.lit()
    assert set(lit) == {"c6", "b8", "f3", "g1"} and lit["g1"] == (Colour.GREEN, Blink.SLOW)
    table.move("c6b8")
    table.move("f3g1")
    table.wait(REMOTE_HOLD + 0.2)
    assert table.lit() == {}
    table.move("f1c4")
    table.wait(RELEASED_AFTER + 0.2)
    assert table.moves[-1] == "f1c4" and table.alerts == []
    # the sensor log replays to the same record: the takeback is in it
    record = replay_events(table.start, table.events, PROFILES["casual"])
    assert [m.move.uci() for m in record.moves] == ["e2e4", "e7e5", "f1c4"]
    assert "taken back: Nf3 Nc6" in record.pgn_text()


def test_takeback_and_hint_are_for_casual_only() -> None:
    table = Table(profile="fide")
    opening(table)
    table.move("e7e5")
    table.wait(0.3)
    table.feed(ev.TakebackAsked(table.at(0.5)))
    table.feed(ev.HintAsked(table.at(0.5)))
    assert table.referee.board.ply() == 2 and not table.referee.remote.hint_wanted


def test_a_hint_is_lit_until_the_board_changes() -> None:
    table = Table(profile="casual")
    opening(table)
    table.move("e7e5")
    table.wait(0.3)
    table.feed(ev.HintAsked(table.at(0.5)))
    assert table.referee.remote.hint_wanted
    table.feed(ev.HintGiven(table.at(0.5), M("g1f3")))
    assert table.lit() == {"g1": (Colour.BLUE, Blink.SLOW), "f3": (Colour.GREEN, Blink.SLOW)}
    assert table.frame.status.remote == Remote.HINT
    table.lift("g1")
    table.wait(0.2)
    assert table.lit() == {}


# ---------------------------------------------------------------- whole games


def check(played: Played, profile: str = "fide") -> None:
    """The record is exactly the moves chosen, nothing was alerted, and the sensor log
    replays to the same record."""
    moves = [m.move for m in played.record.moves]
    assert moves == played.chosen, played.person.log
    assert played.alerts == [], played.alerts
    again = replay_events(played.start, played.events, PROFILES[profile])
    assert again.pgn_text() == played.record.pgn_text()


def whole_game(seed: int, remote: bool, use_clock: bool) -> None:
    person = Person(seed=seed, use_clock=use_clock)
    played = play(person, remote=remote, seed=seed, max_plies=60,
                  time_control="900+5" if use_clock else None)
    check(played)
    assert len(played.chosen) >= 10 or played.result is not None


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), remote=st.booleans(), use_clock=st.booleans())
def test_any_game_made_by_human_hands_records_exactly_the_moves_chosen(
        seed: int, remote: bool, use_clock: bool) -> None:
    whole_game(seed, remote, use_clock)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), remote=st.booleans(), use_clock=st.booleans())
def test_many_games_made_by_human_hands(seed: int, remote: bool, use_clock: bool) -> None:
    whole_game(seed, remote, use_clock)


# Positions where the computer must castle, take en passant, promote (its only good
# move, or its only legal one): made by the person with every style of the hands.
SPECIAL = [
    # castling: both sides, either style of the hands
    ("r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 6 8", ["e8g8", "e8c8"]),
    ("r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 6 8", ["e1g1", "e1c1"]),
    # en passant
    ("rnbqkbnr/ppp1pppp/8/8/2Pp4/4P3/PP1P1PPP/RNBQKBNR b KQkq c3 0 3", ["d4c3"]),
    ("rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3", ["d5e6"]),
    # promotions, quiet and capturing, to every piece
    ("3r4/2P5/8/8/8/6k1/1p6/4K2R b K - 0 1", ["b2b1q", "b2b1n", "b2b1r", "b2b1b"]),
    ("3r4/2P5/8/8/8/6k1/8/4K2R w K - 0 1", ["c7d8q", "c7c8n", "c7d8r", "c7c8b"]),
]


@pytest.mark.parametrize("fen, firsts", SPECIAL)
@pytest.mark.parametrize("use_clock", [False, True])
def test_the_computer_castles_takes_en_passant_and_promotes(
        fen: str, firsts: list[str], use_clock: bool) -> None:
    board = chess.Board(fen)
    styles = set()
    for seed, first in enumerate(firsts * 4):  # each move, several renderings
        def computer(position: chess.Board, rng: random.Random) -> chess.Move:
            if position.fen() == board.fen():
                return M(first)
            return random_move(position, rng)
        person = Person(fen, seed=seed, use_clock=use_clock)
        played = play(person, remote=board.turn, seed=seed, fen=fen, computer=computer,
                      max_plies=6, time_control="900+5" if use_clock else None)
        assert played.chosen[0] == M(first)
        check(played)
        made = next(line for line in person.log if line.startswith("made the computer's"))
        styles.add(made.rsplit("(", 1)[1].split(":")[0 if "promotion" in made else -1])
    if board.is_castling(M(firsts[0])):
        assert styles == {"one-hand)", "both-lifted)"}  # both styles of the hands


# ---------------------------------------------------------------- the person's buttons


@pytest.mark.parametrize("seed", range(4))
def test_a_wrong_execution_read_back_from_the_leds_is_corrected(seed: int) -> None:
    person = Person(seed=seed, script=Script.parse("mistake@1,mistake@3,mistake@5"))
    played = play(person, remote=chess.BLACK, seed=seed, max_plies=12)
    check(played)
    wrong = [line for line in person.log if " instead of " in line]
    fixed = [line for line in person.log if line.startswith("corrected")]
    assert wrong and len(fixed) == len(wrong)
    # what he read: the extra piece blinking red, the destination still lit
    for line in wrong:
        at = line.split(" on ")[1].split()[0]
        assert any(s.square == sq(at) and s.colour == Colour.RED and s.blink == Blink.SLOW
                   for frame in played.frames for s in frame.squares)


def test_the_hint_is_lit_and_played() -> None:
    person = Person(seed=5, script=Script.parse("hint@2,hint@4"))
    played = play(person, remote=chess.BLACK, seed=5, profile="casual", max_plies=10)
    check(played, "casual")
    hinted = [e.move for e in played.events if isinstance(e, ev.HintGiven)]
    lines = [line for line in person.log if line.startswith("played the hint")]
    assert len(hinted) == 2 and len(lines) == 2
    for move in hinted:
        assert move in played.chosen  # he played what was lit


def test_a_takeback_is_made_on_the_board_and_the_game_goes_on() -> None:
    person = Person(seed=7, script=Script.parse("takeback@3"))
    played = play(person, remote=chess.BLACK, seed=7, profile="casual", max_plies=12)
    check(played, "casual")
    assert sum(isinstance(e, ev.TakebackAsked) for e in played.events) == 1
    assert "taken back:" in played.record.pgn_text()
    assert len(played.chosen) >= 12


@pytest.mark.parametrize("accept", [True, False])
def test_a_draw_offer_is_accepted_or_declined_by_moving(accept: bool) -> None:
    person = Person(seed=2, script=Script.parse("offer@3"))
    played = play(person, remote=chess.BLACK, seed=2, accept_draw=accept, max_plies=12)
    check(played)
    if accept:
        assert played.result is not None and played.result.termination == "agreement"
        assert len(played.chosen) == 5
    else:
        assert played.result is None and len(played.chosen) >= 12


def test_resigning() -> None:
    person = Person(seed=3, script=Script.parse("resign@4"))
    played = play(person, remote=chess.WHITE, seed=3)
    check(played)
    assert played.result is not None and (played.result.result, played.result.termination) \
        == ("1-0", "resignation")


# ---------------------------------------------------------------- the link down


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("use_clock", [False, True])
def test_moves_made_while_the_link_was_down_are_read_from_the_scan(
        seed: int, use_clock: bool) -> None:
    """The link goes down just as the computer's move is announced (a yanked cable, the
    service killed and restarted). The person makes that move and then, as he would, his
    own, or begins it, or stops short: each outage lasts a different time. The scan when
    the link is back must show the game going on, and record exactly the moves chosen."""
    rng = random.Random(seed)
    remote = chess.BLACK if seed % 2 else chess.WHITE
    outages = {n: rng.choice([0.5, 1.5, 3.0, 5.0, 8.0, 12.0]) for n in (1, 3, 5, 7)}
    person = Person(seed=seed, use_clock=use_clock, plays_on_after=rng.choice([1.0, 2.5, 4.0]))
    played = play(person, remote=remote, seed=seed, max_plies=24, outages=outages,
                  time_control="900+5" if use_clock else None)
    moves = [m.move for m in played.record.moves]
    assert moves == played.chosen, played.person.log
    assert played.alerts == [], played.alerts
    assert len(played.chosen) >= 16 or played.result is not None
    assert any(line.startswith("played on") for line in person.log)  # the case in point
    scans = [e for e in played.events if isinstance(e, ev.Snapshot)]
    assert len(scans) == sum(n <= len(played.chosen) // 2 for n in outages)
    again = replay_events(played.start, played.events, PROFILES["fide"])
    assert again.pgn_text() == played.record.pgn_text()


# ---------------------------------------------------------------- the service killed


@pytest.mark.slow  # (every event committed to a journal on disk, as the service does)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("after, away", [(0.0, 5.0), (1.2, 15.0), (2.4, 30.0), (4.0, 1.0)])
def test_a_service_killed_against_the_computer_resumes_exactly(
        tmp_path: Path, seed: int, after: float, away: float) -> None:
    """kill -9 of the service `after` s after the computer's 4th move is announced; the
    board (the person) plays on while it is away, its events lost; `away` s later the
    game is resumed from the journal as `board-ctl run` resumes it (the LEDs at start-up,
    then the board's scan). The record is exactly the moves chosen, with no alert.
    (A deterministic model of tests/test_opponent_e2e.py's kill, in simulated time.)"""
    person = Person(seed=seed)
    played = play(person, remote=chess.BLACK, seed=seed, max_plies=24,
                  restarts={4: (after, away)}, journal=tmp_path)
    moves = [m.move for m in played.record.moves]
    assert moves == played.chosen, played.person.log
    assert played.alerts == [], played.alerts
    assert len(moves) >= 12 or played.result is not None


def test_a_person_who_resigned_does_not_play_on_while_the_result_is_not_shown_yet() -> None:
    """Under load the result's LEDs may come seconds after the resignation, after other
    frames: he waits for them, he does not make his next move."""
    person = Person(seed=3, script=Script.parse("resign@1"))
    referee = Referee(chess.STARTING_FEN, PROFILES["fide"], remote=chess.BLACK)
    made: list[ev.Event] = []
    for effect in referee.feed(ev.Tick(0.0)):
        if isinstance(effect, LedFrame):
            made += person.frame(effect, 0.0)
    t = 0.0
    while t < 60.0 and not any(isinstance(e, ev.Resigned) for e in made):
        t += 0.1
        made += person.step(t)
    assert any(isinstance(e, ev.Resigned) for e in made), person.log
    # the frames go on (the clock, the same position), the result not among them
    for effect in referee.feed(ev.Tick(t)):
        if isinstance(effect, LedFrame):
            made += person.frame(effect, t)
    while t < 70.0:
        t += 0.1
        made += person.step(t)
    assert not any(isinstance(e, (ev.Lifted, ev.Placed)) for e in made), person.log
