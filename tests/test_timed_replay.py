"""Replays with a time control: the clocks come from the log's times, exactly."""

from __future__ import annotations

import io

import chess.pgn
import pytest

from script import play


def clocks(out) -> list[float]:  # type: ignore[no-untyped-def]
    return [line["clock"] for line in out.lines("move")]


def test_fischer_increment_exact_clk_values() -> None:
    # t: e2 lifted 1.4, e4 placed 1.8, White presses 2.2; Black 2.6 / 3.0 / 3.4.
    out = play("-e2 +e4 Cw -e7 +e5 Cb", time_control="300+5")
    assert clocks(out) == [300 - 2.2 + 5, 300 - 1.2 + 5]
    game = chess.pgn.read_game(io.StringIO(out.record.pgn_text()))
    assert game is not None and game.headers["TimeControl"] == "300+5"
    first = game.next()
    assert first is not None and first.clock() == pytest.approx(302.8)
    assert first.emt() == pytest.approx(2.2)


def test_simple_delay_and_bronstein() -> None:
    assert clocks(play("-e2 +e4 Cw -e7 +e5 Cb", time_control="300d2")) == [299.8, 300.0]
    # Bronstein gives back what the move used, up to the delay: 2 of 2.2 s, 2 of 11.2 s.
    assert clocks(play("-e2 +e4 Cw -e7 +e5 ~10 Cb", time_control="300b2")) == [299.8, 290.8]


def test_flag_fall_loses() -> None:
    out = play("-e2 +e4 Cw ~20 -e7 +e5 Cb", time_control="10")
    assert out.alerts == ["flag"]
    assert out.alert("flag")["side"] == "black"
    assert out.result == ("1-0", "time-forfeit")
    assert out.lines("result")[0]["t"] == pytest.approx(2.2 + 10)


def test_flag_against_a_side_that_cannot_mate_is_a_draw() -> None:
    out = play("-e8 +d7 Cb ~30 T", fen="4k3/8/8/8/8/8/4P3/4K3 b - - 0 1", time_control="20")
    assert out.result == ("1/2-1/2", "time-forfeit")  # White flags; Black has a bare king


def test_a_move_placed_but_not_pressed_does_not_save_the_flag() -> None:
    out = play("-e2 +e4 ~20 Cw", time_control="10")
    assert out.result == ("0-1", "time-forfeit")


def test_penalty_is_applied_to_the_opponents_clock() -> None:
    out = play("-g1 +g3 Cw -g3 +g1 -g1 +f3 Cw -e7 +e5 Cb", time_control="300")
    white, black = clocks(out)
    assert black == pytest.approx(300 + 120 - (out.lines("move")[1]["t"] + 0.4 - 4.2))
    assert white == pytest.approx(300 - 4.2)


def test_multi_period_time_added_at_the_control() -> None:
    cycle = "-g1 +f3 Cw -g8 +f6 Cb -f3 +g1 Cw -f6 +g8 Cb "
    out = play(cycle, time_control="2/300:60")
    white = [line["clock"] for line in out.lines("move")][0::2]
    assert white[0] == pytest.approx(300 - 2.2)
    assert white[1] == pytest.approx(300 - 2.2 - 1.2 + 60)  # the 2nd move reaches the control


def test_untimed_games_still_record_each_moves_time() -> None:
    out = play("-e2 +e4 ~1 Cw")
    move = out.lines("move")[0]
    assert "clock" not in move and move["elapsed"] == pytest.approx(3.2)
    assert "[%clk" not in out.record.pgn_text() and "[%emt 0:00:03.2]" in out.record.pgn_text()


def test_time_control_from_the_start_line_and_bad_ones() -> None:
    from board_ctl.core.timecontrol import TimeControlError

    with pytest.raises(TimeControlError):
        play("-e2 +e4 Cw", time_control="ten minutes")
