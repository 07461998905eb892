"""An external clock that reports its own times with each press (DGT-style): the game's
[%clk] and flags come from its display when that is plausible; an impossible jump is
reported as `clock-fault` and the board keeps its own time.

Scripts start at t = 1.0 with 0.4 s between tokens (tests/script.py), so White's first
press below comes at t = 2.2 and Black's at t = 3.4.
"""

from __future__ import annotations

import io

import chess
import chess.pgn

from board_ctl.core import events as ev
from board_ctl.core.clock import ChessClock
from board_ctl.core.profiles import PROFILES
from board_ctl.core.timecontrol import TimeControl
from board_ctl.replay import replay_log
from board_ctl.sensorlog import dumps, event_to_json, read_sensor_log, start_to_json, StartInfo
from tests.script import events, play

E4_E5 = "-e2 +e4 Cw/{w1}/{b1} -e7 +e5 Cb/{w2}/{b2}"


def clocks(outcome) -> list[float | None]:
    return [m.clock for m in outcome.record.moves]


def test_the_clocks_display_is_the_record() -> None:
    # The lever clock would give 300 - 2.2 + 2 = 299.8 and 300 - 1.2 + 2 = 300.8; the
    # external clock measured a little differently (its own oscillator, its own latency).
    out = play(E4_E5.format(w1=299.6, b1=300, w2=299.6, b2=300.5), time_control="300+2")
    assert out.sans == ["e4", "e5"]
    assert clocks(out) == [299.6, 300.5]
    assert out.alerts == []
    game = chess.pgn.read_game(io.StringIO(out.record.pgn_text()))
    assert [node.clock() for node in game.mainline()] == [299.6, 300.5]


def test_without_the_times_the_lever_clock_keeps_time() -> None:
    out = play("-e2 +e4 Cw -e7 +e5 Cb", time_control="300+2")
    assert clocks(out) == [299.8, 300.8]


def test_an_impossible_jump_is_a_clock_fault_and_the_boards_time_stands() -> None:
    # White's time rises by a minute at its press: no increment explains it.
    out = play(E4_E5.format(w1=359.8, b1=300, w2=299.6, b2=300.5), time_control="300+2")
    assert out.sans == ["e4", "e5"]
    assert clocks(out)[0] == 299.8  # computed, not the glitch
    fault = out.alert("clock-fault")
    assert fault["side"] is None and "white's time rose" in fault["text"]
    # The next reading agrees with the last good one (the start): trusted again, cleared.
    assert clocks(out)[1] == 300.5
    assert [line["code"] for line in out.lines("clear")] == ["clock-fault"]


def test_a_clock_set_to_another_control_is_reported_until_it_proves_consistent() -> None:
    # The clock runs 3 minutes while the game is 5: every reading is "too fast" against
    # the start, until three consistent readings show the clock really is there.
    script = ("-e2 +e4 Cw/179.8/180 -e7 +e5 Cb/179.8/178.8 "
              "-g1 +f3 Cw/178.6/178.8 -b8 +c6 Cb/178.6/177.6")
    out = play(script, time_control="300")
    assert out.alerts == ["clock-fault"]
    assert clocks(out) == [297.8, 298.8, 178.6, 177.6]
    assert [line["code"] for line in out.lines("clear")] == ["clock-fault"]


def test_an_untimed_game_takes_its_clock_from_the_display_and_flags() -> None:
    # No time control is configured: the clock's display is all there is. Black has
    # 2 s left after White's press and never presses: his flag falls 2 s later.
    out = play("-e2 +e4 Cw/60/2 -e7 ~5 T", time_control=None)
    assert clocks(out) == [60.0]
    assert out.result == ("1-0", "time-forfeit")
    assert out.alert("flag")["t"] == 2.2 + 2


def test_a_penalty_the_arbiter_set_on_the_clock_is_no_fault() -> None:
    # Black presses without moving (7.5.3): +2 min to White, set on the clock by hand.
    script = "-e2 +e4 Cw/299.8/300 ~1 Cb/299.8/299 -e7 +e5 Cb/419.8/299.8"
    out = play(script, time_control="300+2")
    assert out.sans == ["e4", "e5"]
    assert "clock-no-move" in out.alerts and "clock-fault" not in out.alerts
    assert clocks(out) == [299.8, 299.8]


def test_after_a_reconnection_the_next_reading_is_trusted() -> None:
    # The link was down (the board's snapshot follows a reconnection) while the clock
    # ran on: its jump is not a fault.
    evs = events("-e2 +e4 Cw/299.8/300")
    evs.append(ev.Snapshot(evs[-1].t + 0.5, chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/"
                                                        "RNBQKBNR b KQkq - 0 1").occupied))
    evs += events("-e7 +e5 Cb/299.8/250", t=evs[-1].t)
    from board_ctl.replay import replay_events
    record = replay_events(StartInfo(time_control="300+2"), evs, PROFILES["fide"])
    assert [m.san for m in record.moves] == ["e4", "e5"]
    assert [m.clock for m in record.moves] == [299.8, 250.0]
    assert not [line for line in record.report if line["kind"] == "alert"]


def test_the_times_travel_in_the_sensor_log_and_replay_identically() -> None:
    evs = events(E4_E5.format(w1=299.6, b1=300, w2=299.6, b2=300.5))
    start = StartInfo(time_control="300+2")
    text = "\n".join(dumps(o) for o in [start_to_json(start)] + [event_to_json(e) for e in evs])
    assert '"ev": "clock", "side": "white", "white": 299.6, "black": 300.0' in text
    log = read_sensor_log(io.StringIO(text))
    assert log.errors == []
    assert [event_to_json(e) for e in log.events] == [event_to_json(e) for e in evs]
    record = replay_log(log, PROFILES["fide"])
    assert [m.clock for m in record.moves] == [299.6, 300.5]


def test_set_times_keeps_the_running_turn_going() -> None:
    clock = ChessClock(TimeControl.parse("60+0"))
    clock.start(0.0)
    clock.press(chess.WHITE, 5.0)  # Black's clock runs from 5.0
    clock.set_times(50.0, 58.0, 7.0)  # at 7.0 the display says Black has 58
    assert clock.remaining(chess.BLACK, 7.0) == 58.0
    assert clock.remaining(chess.BLACK, 10.0) == 55.0
    assert clock.remaining(chess.WHITE, 10.0) == 50.0
    assert clock.turn_elapsed(10.0) == 5.0  # the move's time is still the board's
    restored = ChessClock.from_snapshot(clock.snapshot())
    assert restored.remaining(chess.BLACK, 10.0) == 55.0


def test_set_times_makes_an_untimed_clock_run_out() -> None:
    clock = ChessClock(None)
    clock.start(0.0)
    assert clock.flag_time() is None
    clock.set_times(10.0, 3.0, 1.0)
    assert clock.flag_time() == 11.0
    result = clock.press(chess.WHITE, 4.0)
    assert result is not None and result.remaining == 7.0
    assert clock.flag_time() == 7.0


def test_a_reconnection_keeps_the_count_of_presses_for_the_period() -> None:
    # 2 moves in 60 s, then 60 s more: White's second press adds the next period. A
    # reconnection after White's first press must not make that look like a gain.
    evs = events("-e2 +e4 Cw/57.8/60 -e7 +e5 Cb/57.8/58.8 -g1 +f3 Cw/116.6/58.8 "
                 "-b8 +c6 Cb/116.6/117.6")
    after_e4 = chess.Board()
    after_e4.push_san("e4")
    evs.insert(3, ev.Snapshot(2.5, after_e4.occupied))
    from board_ctl.replay import replay_events
    record = replay_events(StartInfo(time_control="2/60:60"), evs, PROFILES["fide"])
    assert [m.san for m in record.moves] == ["e4", "e5", "Nf3", "Nc6"]
    assert [m.clock for m in record.moves] == [57.8, 58.8, 116.6, 117.6]
    assert not [line for line in record.report if line["kind"] == "alert"]


def test_a_clock_started_before_the_game_is_no_fault() -> None:
    # White's clock was started 3 s before the board saw the game begin.
    out = play(E4_E5.format(w1=296.8, b1=300, w2=296.8, b2=300.8), time_control="300+2")
    assert out.alerts == []
    assert clocks(out) == [296.8, 300.8]


def test_after_one_glitch_the_next_good_reading_is_used() -> None:
    # White's reading jumps a minute (rejected: the board's 299.8 stands); Black's next
    # reading agrees with the board's own times, so it is the clock's again.
    script = "-e2 +e4 Cw/359.8/300 -e7 ~3 +e5 Cb/299.8/296.6"
    out = play(script, time_control="300+2")
    assert out.alerts == ["clock-fault"]
    assert clocks(out) == [299.8, 296.6]
    assert [line["code"] for line in out.lines("clear")] == ["clock-fault"]


def test_a_reading_no_clock_can_show_is_a_clock_fault_not_a_crash() -> None:
    """1e308 s once overflowed to a traceback when turned into milliseconds."""
    for absurd in ("1e308", "3600000", "1e20"):
        out = play(E4_E5.format(w1=absurd, b1=300, w2=299.6, b2=300.5), time_control="300+2")
        assert out.sans == ["e4", "e5"]
        assert clocks(out) == [299.8, 300.5]  # the board's own time, then the good reading
        assert "more than a clock shows" in out.alert("clock-fault")["text"]
    # Untimed: the display is all there is, and this one is refused.
    out = play(E4_E5.format(w1="1e308", b1="1e308", w2=299.6, b2=300.5))
    assert out.sans == ["e4", "e5"] and out.alerts[0] == "clock-fault"


def test_a_log_with_an_absurd_reading_replays_with_a_clock_fault() -> None:
    lines = [dumps(start_to_json(StartInfo(time_control="300+2")))] + [
        dumps(event_to_json(event)) for event in events("-e2 +e4 Cw -e7 +e5 Cb")]
    lines[3] = lines[3].replace('"side": "white"', '"side": "white", "white": 1e308, '
                                '"black": 300')
    log = read_sensor_log(lines)
    assert not log.errors
    record = replay_log(log, PROFILES["fide"])
    assert [m.san for m in record.moves] == ["e4", "e5"]
    assert [line["code"] for line in record.report if line["kind"] == "alert"] == ["clock-fault"]
