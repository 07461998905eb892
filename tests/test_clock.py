"""ChessClock, ExternalClock and flag_result: exact times, delays, periods, persistence."""

from __future__ import annotations

import json
from typing import Any

import chess
import chess.pgn
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core.clock import (
    ChessClock,
    ClockError,
    ClockReading,
    ExternalClock,
    PressResult,
    flag_result,
    to_ms,
)
from board_ctl.core.timecontrol import TimeControl
from board_ctl.errors import BoardCtlError

W, B = chess.WHITE, chess.BLACK


def clk(seconds: float | None) -> str:
    """The [%clk] python-chess writes for ``seconds``."""
    node = chess.pgn.Game()
    node.set_clock(seconds)
    return node.comment


def emt(seconds: float) -> str:
    node = chess.pgn.Game()
    node.set_emt(seconds)
    return node.comment


def started(tc: str | None, t: float = 0.0, side: chess.Color = W) -> ChessClock:
    clock = ChessClock(TimeControl.parse(tc) if tc is not None else None, start_side=side)
    clock.start(t)
    return clock


def play(clock: ChessClock, presses: list[float], first: chess.Color = W) -> list[PressResult]:
    """Alternate presses at the given times, starting with ``first``."""
    out = []
    side = first
    for t in presses:
        result = clock.press(side, t)
        assert result is not None
        out.append(result)
        side = not side
    return out


# ---------------------------------------------------------------------- Fischer, exact [%clk]


def test_fischer_5400_30_exact_clk_and_emt_after_each_press() -> None:
    clock = started("5400+30")
    results = play(clock, [12.3, 20.0, 100.05, 100.1, 3700.001])
    assert [clk(r.remaining) for r in results] == [
        "[%clk 1:30:17.7]",  # 5400 - 12.3 + 30
        "[%clk 1:30:22.3]",  # 5400 - 7.7 + 30
        "[%clk 1:29:27.65]",  # 5417.7 - 80.05 + 30
        "[%clk 1:30:52.25]",  # 5422.3 - 0.05 + 30
        "[%clk 0:29:57.749]",  # 5367.65 - 3599.901 + 30
    ]
    assert [emt(r.elapsed) for r in results] == [
        "[%emt 0:00:12.3]",
        "[%emt 0:00:07.7]",
        "[%emt 0:01:20.05]",
        "[%emt 0:00:00.05]",
        "[%emt 0:59:59.901]",
    ]
    assert clock.moves_made(W) == 3 and clock.moves_made(B) == 2


def test_float_noise_does_not_reach_the_results() -> None:
    clock = started("60+1")
    remaining, elapsed = clock.press(W, 0.1 + 0.2) or (None, 0.0)  # 0.30000000000000004
    assert (remaining, elapsed) == (60.7, 0.3)
    assert clock.remaining(B, 0.3 + 0.1 + 0.2) == 59.7


def test_running_side_decreases_and_the_other_is_still() -> None:
    clock = started("300+2")
    assert clock.remaining(W, 0.0) == 300.0
    assert clock.remaining(W, 12.5) == 287.5
    assert clock.remaining(B, 12.5) == 300.0
    assert clock.turn_elapsed(12.5) == 12.5
    assert clock.remaining(W, 400.0) == 0.0  # never below zero


# ---------------------------------------------------------------------- delays


@pytest.mark.parametrize("tc, used, during, after", [
    # simple delay: the first 5 s of a turn are free, the display waits
    ("300d5", 3.0, [(2.0, 300.0), (4.999, 300.0)], 300.0),
    ("300d5", 8.0, [(5.0, 300.0), (7.0, 298.0)], 297.0),
    # Bronstein: the display runs, min(5, used) comes back at the press
    ("300b5", 3.0, [(2.0, 298.0)], 300.0),
    ("300b5", 8.0, [(7.0, 293.0)], 297.0),
    ("300b5", 5.0, [(5.0, 295.0)], 300.0),
])
def test_delays(tc: str, used: float, during: list[tuple[float, float]], after: float) -> None:
    clock = started(tc, t=10.0)
    for at, shown in during:
        assert clock.remaining(W, 10.0 + at) == shown
    result = clock.press(W, 10.0 + used)
    assert result == PressResult(after, used)


def test_flag_time_with_delays() -> None:
    simple = started("300d5", t=10.0)
    assert simple.flag_time() == 315.0  # remaining + the free delay
    bronstein = started("300b5", t=10.0)
    assert bronstein.flag_time() == 310.0  # Bronstein gives time back only at a press


# ---------------------------------------------------------------------- periods


def test_multi_period_time_added_at_the_fortieth_press() -> None:
    clock = started("40/5400+30:1800+30")
    t = 0.0
    for move in range(1, 41):
        t += 60.0
        white = clock.press(W, t)
        t += 30.0
        black = clock.press(B, t)
        assert white is not None and black is not None
        if move == 39:
            assert white.remaining == 5400 - 39 * 60 + 39 * 30
            assert clock.remaining(W, t) == 5400 - 39 * 60 + 39 * 30
        if move == 40:
            # 40 moves of 60 s with +30 each, then the second period's 30 minutes at the press
            assert white.remaining == 5400 - 40 * 60 + 40 * 30 + 1800
            assert clk(white.remaining) == "[%clk 1:40:00]"
            assert black.remaining == 5400 + 1800
    t += 100.0
    move41 = clock.press(W, t)
    assert move41 is not None and move41.remaining == 5400 - 40 * 60 + 40 * 30 + 1800 - 100 + 30
    assert clock.moves_made(W) == 41


def test_each_period_has_its_own_bonus() -> None:
    clock = started("2/100+1:50d5")
    remaining = [r.remaining for r in play(clock, [10, 20, 30, 40, 48, 56])]
    # W: 100-10+1=91, 91-10+1+50=132 (period 2 added at move 2), 132-8+5 (simple delay d5)=129
    assert remaining == [91, 91, 132, 132, 129, 129]


def test_repeating_last_period() -> None:
    clock = started("2/60")
    assert [r.remaining for r in play(clock, [1, 2, 3, 4, 5, 6, 7, 8])] == [
        59, 59, 118, 118, 117, 117, 176, 176,
    ]


# ---------------------------------------------------------------------- sandclock


def test_sandclock_time_used_flows_to_the_opponent() -> None:
    clock = started("*180")
    assert clock.remaining(B, 10.0) == 190.0  # live: the other bulb fills
    assert clock.press(W, 10.0) == PressResult(170.0, 10.0)
    assert clock.remaining(B, 10.0) == 190.0
    assert clock.press(B, 40.0) == PressResult(160.0, 30.0)
    assert clock.remaining(W, 40.0) == 200.0
    assert clock.flag_time() == 240.0
    assert clock.remaining(B, 300.0) == 360.0  # the sand stops when a bulb is empty
    assert clock.flag_fell_at(W, 300.0) == 240.0


# ---------------------------------------------------------------------- penalties


def test_penalty_adds_two_minutes_to_the_opponent() -> None:
    clock = started("300+2")
    assert clock.add_time(B, 120, 5.0) == 420.0  # White's illegal move: +2 min to Black
    assert clock.remaining(W, 5.0) == 295.0
    assert clock.add_time(W, 60, 6.0) == 354.0  # to the running side: the display moves by 60
    assert clock.flag_time() == 360.0
    assert clock.press(W, 10.0) == PressResult(352.0, 10.0)


def test_negative_adjustment_never_goes_below_zero_and_flags_the_running_side() -> None:
    clock = started("300")
    assert clock.add_time(W, -300, 100.0) == 0.0  # seed-legacy: +5 min to the claimant's used time
    assert clock.flag_time() == 100.0
    assert clock.flag_fell_at(W, 100.0) == 100.0
    assert clock.add_time(B, -400, 100.0) == 0.0


def test_untimed_clock_counts_moves_and_move_times_but_never_flags() -> None:
    for clock in (started(None), started("-"), started("?")):
        assert clock.flag_time() is None
        assert clock.remaining(W, 10**6) is None
        assert clock.add_time(B, 120, 10**6) is None
        assert clock.press(W, 10**6 + 1.5) == PressResult(None, 10**6 + 1.5)
        assert clock.moves_made(W) == 1
        assert clock.flag_fell_at(B, 10**7) is None


# ---------------------------------------------------------------------- pause, flags, misuse


def test_pause_and_resume_charge_nobody() -> None:
    clock = started("5400+30")
    clock.pause(10.0)
    assert clock.flag_time() is None
    assert clock.remaining(W, 5000.0) == 5390.0
    assert clock.press(W, 5000.0) is None  # both clocks stopped
    clock.resume(5000.0)
    assert clock.remaining(W, 5005.0) == 5385.0
    assert clock.flag_time() == 5000.0 + 5390.0
    assert clock.press(W, 5005.0) == PressResult(5415.0, 15.0)  # emt excludes the pause


def test_resume_may_start_a_new_time_base_after_a_reboot() -> None:
    clock = started("300d5")
    clock.press(W, 100.0)
    clock.pause(103.0)  # Black had used 3 s of its 5 s delay
    clock.resume(0.5)  # the new boot's monotonic clock
    assert clock.remaining(B, 2.5) == 300.0
    assert clock.remaining(B, 3.5) == 299.0
    assert clock.press(B, 3.5) == PressResult(299.0, 6.0)


def test_flag_time_is_exact_and_the_flag_falls_at_it() -> None:
    clock = started("180+2")
    clock.press(W, 1.234)
    assert clock.flag_time() == 181.234
    assert clock.flag_fell_at(B, 181.233) is None
    assert clock.flag_fell_at(B, 181.234) == 181.234
    assert clock.remaining(B, 181.234) == 0.0
    # Playing on (casual): the press records the overrun; increments do not undo it.
    assert clock.press(B, 200.0) == PressResult(2.0, 198.766)
    assert clock.flag_fell_at(B, 200.0) == 181.234
    assert clock.flag_fell_at(W, 200.0) is None


def test_ignored_presses_and_misuse() -> None:
    clock = ChessClock(TimeControl.parse("300"))
    assert clock.press(W, 0.0) is None  # not started
    clock.start(1.0)
    assert clock.press(B, 2.0) is None  # not Black's turn
    assert clock.turn == W and clock.running
    with pytest.raises(ClockError, match="already started"):
        clock.start(3.0)
    with pytest.raises(ClockError, match="time went backwards"):
        clock.press(W, 1.5)
    with pytest.raises(ClockError, match="finite"):
        clock.remaining(W, float("nan"))
    assert isinstance(ClockError("x"), BoardCtlError) and isinstance(ClockError("x"), ValueError)


def test_black_to_move_first() -> None:
    clock = started("60", t=0.0, side=B)
    assert clock.press(W, 1.0) is None
    assert clock.press(B, 2.0) == PressResult(58.0, 2.0)
    assert clock.moves_made(B) == 1 and clock.turn == W


# ---------------------------------------------------------------------- snapshots


SCRIPT: list[tuple[str, Any]] = [
    ("press", (W, 12.3)), ("press", (B, 20.0)), ("add", (W, 120, 25.0)), ("pause", 30.0),
    ("resume", 90.0), ("press", (W, 95.5)), ("press", (B, 140.25)), ("press", (W, 141.0)),
    ("press", (B, 145.0)), ("press", (W, 150.0)),
]


def run(clock: ChessClock, steps: list[tuple[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for action, args in steps:
        if action == "press":
            out.append(clock.press(*args))
        elif action == "add":
            out.append(clock.add_time(*args))
        elif action == "pause":
            clock.pause(args)
        else:
            clock.resume(args)
        out.append(clock.flag_time())
    return out


@pytest.mark.parametrize("tc", ["2/100+1:50b5", "300d3", "*120", "-"])
@pytest.mark.parametrize("cut", range(len(SCRIPT) + 1))
def test_snapshot_restore_mid_game_equals_uninterrupted(tc: str, cut: int) -> None:
    whole = started(tc)
    expected = run(whole, SCRIPT)
    first = started(tc)
    before = run(first, SCRIPT[:cut])
    restored = ChessClock.from_snapshot(json.loads(json.dumps(first.snapshot())))
    assert restored.snapshot() == first.snapshot()
    assert before + run(restored, SCRIPT[cut:]) == expected
    assert restored.snapshot() == whole.snapshot()


def test_power_cut_recipe_charges_nobody_for_the_outage() -> None:
    clock = started("5400+30")
    clock.press(W, 10.0)
    clock.observe(25.0)  # journal heartbeat: Black has used 15 s
    saved = json.dumps(clock.snapshot())
    restored = ChessClock.from_snapshot(json.loads(saved))
    assert restored.now == 25.0
    restored.pause(restored.now or 0.0)
    restored.resume(3.0)  # after the reboot
    assert restored.remaining(B, 3.0) == 5385.0
    assert restored.press(B, 5.0) == PressResult(5413.0, 17.0)


@pytest.mark.parametrize("change, message", [
    ({"format": 2}, "format 2"),
    ({"time_control": "40/"}, "bad clock snapshot: TimeControl"),
    ({"turn": "red"}, "side 'red'"),
    ({"remaining_ms": {"white": 1.5, "black": 0}}, "whole milliseconds"),
    ({"moves": {"white": 1}}, "expected {'white'"),
    ({"paused": 1}, "true or false"),
    ({"run_since_ms": None}, "run_since_ms must be set exactly while running"),
])
def test_bad_snapshots_are_rejected(change: dict[str, Any], message: str) -> None:
    data = started("300").snapshot() | change
    with pytest.raises(ClockError, match=message):
        ChessClock.from_snapshot(data)


def test_snapshot_missing_a_key_is_rejected() -> None:
    data = started("300").snapshot()
    with pytest.raises(ClockError, match="lacks 'now_ms'"):
        ChessClock.from_snapshot({k: v for k, v in data.items() if k != "now_ms"})


# ---------------------------------------------------------------------- properties


def total_ms(clock: ChessClock, t_ms: int) -> int:
    white, black = clock.remaining(W, t_ms / 1000), clock.remaining(B, t_ms / 1000)
    assert white is not None and black is not None
    return to_ms(white) + to_ms(black)


turn_times_ms = st.lists(st.integers(0, 600_000), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(turn_times_ms, st.integers(0, 60))
def test_fischer_conserves_time(turns: list[int], increment: int) -> None:
    base = 100_000  # large enough that no flag falls
    clock = started(f"{base}+{increment}")
    t = 0
    for index, used in enumerate(turns):
        t += used
        clock.press(W if index % 2 == 0 else B, t / 1000)
    assert total_ms(clock, t) + t == 2 * base * 1000 + len(turns) * increment * 1000


@settings(max_examples=60, deadline=None)
@given(turn_times_ms, st.integers(1, 30), st.booleans())
def test_delays_charge_exactly_the_time_beyond_or_minus_the_delay(
    turns: list[int], delay: int, bronstein: bool
) -> None:
    base = 100_000
    clock = started(f"{base}{'b' if bronstein else 'd'}{delay}")
    t = 0
    for index, used in enumerate(turns):
        t += used
        clock.press(W if index % 2 == 0 else B, t / 1000)
    total = total_ms(clock, t)
    if bronstein:
        charged = sum(used - min(used, delay * 1000) for used in turns)
    else:
        charged = sum(max(used - delay * 1000, 0) for used in turns)
    assert total == 2 * base * 1000 - charged


@settings(max_examples=40, deadline=None)
@given(turn_times_ms)
def test_sandclock_conserves_the_sand(turns: list[int]) -> None:
    clock = started("*60")
    t = 0
    for index, used in enumerate(turns):
        t += used
        clock.press(W if index % 2 == 0 else B, t / 1000)
        assert total_ms(clock, t) == 120_000


@settings(max_examples=40, deadline=None)
@given(turn_times_ms, st.data())
def test_snapshot_anywhere_equals_uninterrupted(turns: list[int], data: st.DataObject) -> None:
    steps: list[tuple[str, Any]] = []
    t = 0
    for index, used in enumerate(turns):
        t += used
        steps.append(("press", (W if index % 2 == 0 else B, t / 1000)))
    cut = data.draw(st.integers(0, len(steps)))
    tc = data.draw(st.sampled_from(["40/5400+30:1800+30", "60d2", "30b3", "*45"]))
    whole = started(tc)
    expected = run(whole, steps)
    first = started(tc)
    before = run(first, steps[:cut])
    restored = ChessClock.from_snapshot(json.loads(json.dumps(first.snapshot())))
    assert before + run(restored, steps[cut:]) == expected


@given(st.integers(0, 100 * 3600 * 1000))
def test_clk_values_round_trip_through_python_chess(ms: int) -> None:
    node = chess.pgn.Game()
    node.set_clock(ms / 1000)
    clock = node.clock()
    assert clock is not None and round(clock * 1000) == ms
    hours, minutes, seconds = node.comment.removeprefix("[%clk ").removesuffix("]").split(":")
    assert (int(hours) * 3600 + int(minutes) * 60) * 1000 + round(float(seconds) * 1000) == ms


# ---------------------------------------------------------------------- external clock


def r(white: float, black: float, running: str = "w") -> ClockReading:
    return ClockReading(white, black, "w" in running, "b" in running)


ACCEPTED = ("first", "ok", "resync")


@pytest.mark.parametrize("tc, steps", [
    # After a first reading (White running, 300/300 or 60/60, at t = 0):
    # (reading, received at, expected code); running "" = both stopped.
    ("300+2", [(r(299, 300), 1.0, "ok"), (r(290, 300), 10.2, "ok")]),
    ("300+2", [(r(-1, 300), 1.0, "invalid"), (r(299, 300), 1.0, "ok")]),
    ("300+2", [(r(299, 299, "wb"), 1.0, "both-running")]),
    ("300+2", [(r(299, 300), -1.0, "stale")]),
    ("300+2", [(r(270, 300), 1.0, "too-fast")]),
    ("300+2", [(r(299, 298, "b"), 2.0, "too-fast")]),  # 1 + 2 > 2 + 0.5
    ("300+2", [(r(300, 295), 1.0, "stopped-changed")]),
    ("300+2", [(r(330, 300), 1.0, "gain-without-press")]),
    # White presses: +2 increment fine, +30 impossible
    ("300+2", [(r(301, 300, "b"), 1.0, "ok")]),
    ("300+2", [(r(330, 300, "b"), 1.0, "gain-too-large")]),
    ("300b5", [(r(300, 300, "b"), 3.0, "ok")]),
    # sandclock: the running side's loss shows up on the other side, no more
    ("*60", [(r(50, 70), 10.0, "ok"), (r(40, 90), 20.0, "gain-too-large")]),
    # unknown setting: a press may add anything, but nothing rises without one
    ("?", [(r(900, 300, "b"), 1.0, "ok"), (r(900, 400, "b"), 2.0, "gain-without-press")]),
    # arbiter stopped both clocks: nobody's time may fall
    ("300", [(r(299, 300, ""), 1.0, "ok"), (r(297, 300, ""), 5.0, "stopped-changed")]),
])
def test_external_clock_readings(tc: str, steps: list[tuple[ClockReading, float, str]]) -> None:
    external = ExternalClock(TimeControl.parse(tc), tolerance=0.5)
    first = r(60, 60) if tc == "*60" else r(300, 300)
    assert external.check(first, 0.0).code == "first"
    last_good = first
    for reading, t, code in steps:
        check = external.check(reading, t)
        assert (check.code, check.accepted) == (code, code in ACCEPTED), check.reason
        if check.accepted:
            last_good = reading
        assert check.last_good == last_good == external.last_good


def test_external_clock_explains_rejections() -> None:
    external = ExternalClock(TimeControl.parse("300+2"))
    external.check(r(300, 300), 0.0)
    check = external.check(r(270, 300), 1.0)
    assert check.reason == "white's time fell 30.0 s in 1.0 s"
    assert check.last_good == r(300, 300)


def test_external_clock_accepts_announced_penalties_once() -> None:
    external = ExternalClock(TimeControl.parse("300"), tolerance=0.5)
    external.check(r(300, 300), 0.0)
    external.allow_added_time(B, 120)
    assert external.check(r(299, 420), 1.0).code == "ok"
    assert external.check(r(298, 540), 2.0).code == "gain-without-press"


def test_external_clock_allows_the_next_period_at_the_completing_press() -> None:
    external = ExternalClock(TimeControl.parse("2/100+1:50+1"), tolerance=0.5)
    readings = [
        (r(100, 100, "w"), 0.0, "first"),
        (r(91, 100, "b"), 10.0, "ok"),  # White's move 1
        (r(91, 91, "w"), 19.0, "ok"),
        (r(132, 91, "b"), 29.0, "ok"),  # White's move 2 completes period 1: +50 +1
        (r(132, 132, "w"), 39.0, "ok"),
        (r(173, 132, "b"), 49.0, "gain-too-large"),  # move 3: only +1 possible now
    ]
    for reading, t, code in readings:
        assert external.check(reading, t).code == code
    assert external.presses(W) == 2 and external.presses(B) == 2


def test_external_clock_resynchronises_after_consistent_readings() -> None:
    external = ExternalClock(TimeControl.parse("300"), tolerance=0.5, resync_after=3)
    external.check(r(300, 300), 0.0)
    assert external.check(r(600, 300), 1.0).code == "gain-without-press"  # set by hand
    assert external.check(r(599, 300), 2.0).code == "gain-without-press"
    resync = external.check(r(598, 300), 3.0)
    assert (resync.code, resync.accepted, external.last_good) == ("resync", True, r(598, 300))
    assert "3 consistent readings" in resync.reason
    assert external.check(r(597, 300), 4.0).code == "ok"


def test_glitch_between_good_readings_does_not_resync() -> None:
    external = ExternalClock(TimeControl.parse("300"), tolerance=0.5, resync_after=2)
    external.check(r(300, 300), 0.0)
    assert external.check(r(0, 300), 1.0).code == "too-fast"
    # inconsistent with the glitch before it: no run of consistent readings
    assert external.check(r(600, 300), 2.0).code == "gain-without-press"
    assert external.check(r(297, 300), 3.0).code == "ok"


# ---------------------------------------------------------------------- flag result


@pytest.mark.parametrize("fen, flagged, result", [
    (chess.STARTING_FEN, W, "0-1"),
    (chess.STARTING_FEN, B, "1-0"),
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", W, "1/2-1/2"),  # Black has a lone king
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", B, "1-0"),
    ("4k3/8/8/8/8/8/5n2/4K3 w - - 0 1", W, "1/2-1/2"),  # K+N cannot mate a lone king
    ("4k3/8/8/8/8/8/4Pn2/4K3 w - - 0 1", W, "0-1"),  # ... but can with White's pawn in the way
    ("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", B, "1/2-1/2"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", W, "1/2-1/2"),
])
def test_flag_result(fen: str, flagged: chess.Color, result: str) -> None:
    assert flag_result(chess.Board(fen), flagged) == (result, "time-forfeit")
