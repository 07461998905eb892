"""FIDE 7.4 at the press: pieces still displaced when a player presses the clock.

The press completes the legal move he made; the displaced pieces are no part of it and no
illegal move, whoever displaced them (7.4.3 leaves any penalty to the arbiter). The
`position-mismatch` alert stays until they are back, through the turns that follow, and a
displaced piece is never read as a move of the player who finds it so.

Hand-made scripts for each shape of the case, then the simulator's
`knocked-over-the-press` violation over real games (every game in test_corpus.py, slow).
"""

from __future__ import annotations

import chess

from board_ctl.core import events as ev
from board_ctl.core.effects import Alert, AlertCleared, MoveMade, Penalty
from board_ctl.core.profiles import PROFILES
from board_ctl.core.referee import Referee
from board_ctl.simulate import RenderStyle
from board_ctl.simulate.violations import NoEligiblePly, render_violation
from corpus import corpus, replay_rendered

S = chess.parse_square
OPENING = [ev.Lifted(1, S("e2")), ev.Placed(1.5, S("e4")), ev.ClockPressed(2, chess.WHITE),
           ev.Lifted(3, S("e7")), ev.Placed(3.5, S("e5")), ev.ClockPressed(4, chess.BLACK)]


def play(events: list[ev.Event], fen: str = chess.STARTING_FEN):  # type: ignore[no-untyped-def]
    referee = Referee(fen, PROFILES["fide"])
    effects = [e for event in events for e in referee.feed(event)] + referee.finish()
    moves = [e.move.uci() for e in effects if isinstance(e, MoveMade)]
    alerts = [(e.code, e.t) for e in effects if isinstance(e, Alert)]
    cleared = [(e.code, e.t) for e in effects if isinstance(e, AlertCleared)]
    penalties = [e for e in effects if isinstance(e, Penalty)]
    return moves, alerts, cleared, penalties


def test_a_piece_knocked_off_stays_an_alert_through_both_players_moves() -> None:
    moves, alerts, cleared, penalties = play(OPENING + [
        ev.Lifted(5, S("a7")),  # Black's pawn knocked off in White's time
        ev.Lifted(8, S("g1")), ev.Placed(8.5, S("f3")), ev.ClockPressed(9, chess.WHITE),
        ev.Lifted(10, S("b8")), ev.Placed(10.5, S("c6")), ev.ClockPressed(11, chess.BLACK),
        ev.Placed(13, S("a7")),  # put back
        ev.Lifted(15, S("f1")), ev.Placed(15.5, S("c4")), ev.ClockPressed(16, chess.WHITE)])
    assert moves == ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]
    assert alerts == [("position-mismatch", 6.5)] and penalties == []
    assert cleared == [("position-mismatch", 13.0)]  # when it is back, not before


def test_the_mover_pressing_with_his_own_piece_knocked_off() -> None:
    moves, alerts, cleared, penalties = play(OPENING + [
        ev.Lifted(5, S("g1")), ev.Lifted(5.2, S("b2")),  # his hand knocks b2 off
        ev.Placed(5.6, S("f3")), ev.ClockPressed(6, chess.WHITE),
        ev.Placed(8, S("b2")),
        ev.Lifted(10, S("b8")), ev.Placed(10.5, S("c6")), ev.ClockPressed(11, chess.BLACK)])
    assert moves == ["e2e4", "e7e5", "g1f3", "b8c6"]
    assert [code for code, _ in alerts] == ["position-mismatch"] and penalties == []
    assert cleared == [("position-mismatch", 8.0)]


def test_a_piece_knocked_onto_a_square_it_could_move_to_is_no_move_of_its_owner() -> None:
    # Black's h7 pawn knocked onto h6 in White's time: on Black's turn it stands where
    # h7-h6 would put it, but Black never touched it: his move is Nc6 (no move-changed).
    moves, alerts, _, penalties = play(OPENING + [
        ev.Lifted(5, S("h7")), ev.Placed(5.2, S("h6")),
        ev.Lifted(8, S("g1")), ev.Placed(8.5, S("f3")), ev.ClockPressed(9, chess.WHITE),
        ev.Lifted(12, S("h6")), ev.Placed(12.4, S("h7")),  # put back in Black's time
        ev.Lifted(14, S("b8")), ev.Placed(14.5, S("c6")), ev.ClockPressed(15, chess.BLACK)])
    assert moves == ["e2e4", "e7e5", "g1f3", "b8c6"]
    assert [code for code, _ in alerts] == ["position-mismatch"] and penalties == []


def test_a_capture_nobody_saw_land_with_a_piece_displaced() -> None:
    # White's knight takes on d4 by a push-off swap (no event on d4) while Black's a7 pawn
    # is off the board: the press completes the capture.
    fen = "rnbqkbnr/pppp1ppp/8/8/3pP3/5N2/PPP2PPP/RNBQKB1R w KQkq - 0 1"
    moves, alerts, _, penalties = play([
        ev.Lifted(1, S("a7")),  # Black's pawn knocked off
        ev.Lifted(3, S("f3")), ev.ClockPressed(4, chess.WHITE)], fen)
    assert moves == ["f3d4"]  # (Nxd4, the knight's one capture, pushed off unseen)
    assert [code for code, _ in alerts] == ["position-mismatch"] and penalties == []


def test_an_illegal_placement_with_a_piece_displaced_is_still_illegal() -> None:
    moves, alerts, _, penalties = play(OPENING + [
        ev.Lifted(5, S("a7")),  # displaced
        ev.Lifted(8, S("g1")), ev.Placed(8.5, S("g4")),  # no knight goes there
        ev.ClockPressed(9, chess.WHITE)])
    assert moves == ["e2e4", "e7e5"]
    assert "illegal-move" in [code for code, _ in alerts] and len(penalties) == 1


def test_the_knocked_over_the_press_violation_in_real_games() -> None:
    checked = 0
    for seed, game in enumerate(corpus()[::29]):
        try:
            rendered = render_violation(game, "knocked-over-the-press", seed=seed,
                                        style=RenderStyle(use_clock=True))
        except NoEligiblePly:
            continue
        checked += 1
        replayed = replay_rendered(rendered)
        assert replayed.moves == rendered.moves, (seed, replayed.first_divergence())
        assert replayed.alerts == ["position-mismatch"], (seed, replayed.alerts)
    assert checked >= 8
