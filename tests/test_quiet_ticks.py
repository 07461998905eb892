"""A quiet board's Ticks stay behind the events still on their way (linkboard.QuietTicks).

The host polls the link every 0.1 s and sends the referee a Tick when nothing came. An
event that then arrives stamped earlier than a Tick already sent is read at the Tick's
time (the referee's time only goes forward): the sensors' durations shrink. A serial
board's events come within milliseconds; an emulator starved of CPU sends them late, by
amounts that jump. The Ticks learn how much the delay jumps and lag that much more."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from board_ctl.core import events as ev
from board_ctl.service import linkboard
from board_ctl.service.linkboard import MAX_TICK_LAG, TICK_LAG, QuietTicks

POLL = 0.1


def overtaken(board_times: list[float], delays: list[float]) -> int:
    """How many events arrive stamped earlier than a Tick already sent, when event i
    happens at board_times[i] and reaches the host delays[i] later (in order: a link)."""
    ticks = QuietTicks()
    arrivals, last = [], 0.0
    for t, delay in zip(board_times, delays):
        last = max(last, t + delay)
        arrivals.append(last)
    host, i, count = 0.0, 0, 0
    while i < len(board_times):
        if arrivals[i] <= host + POLL:  # read_events returns what came
            host = arrivals[i]
            batch = []
            while i < len(board_times) and arrivals[i] <= host:
                batch.append(ev.Lifted(board_times[i], 12))
                i += 1
            count += sum(1 for e in batch if e.t < ticks.sent)
            ticks.heard(batch, host)
        else:  # a quiet poll: a Tick
            host += POLL
            tick = ticks.tick(host)
            assert tick >= ticks.sent - 1e-12
    return count


def game_times(rng: random.Random, n: int) -> list[float]:
    times, t = [], 1.0
    for _ in range(n):
        t += rng.choice((rng.uniform(0.003, 0.05), rng.uniform(0.2, 1.5)))
        times.append(t)
    return times


def test_a_serial_board_is_never_overtaken_and_its_ticks_lag_50_ms() -> None:
    rng = random.Random(1)
    times = game_times(rng, 200)
    delays = [rng.uniform(0.001, 0.02) for _ in times]  # USB serial: milliseconds
    assert overtaken(times, delays) == 0
    ticks = QuietTicks()
    ticks.heard([ev.Lifted(5.0, 12)], 100.0)
    assert ticks.tick(100.5) == pytest.approx(5.5 - TICK_LAG)


@pytest.mark.parametrize("seed", range(8))
def test_a_starved_emulator_is_overtaken_a_few_times_not_at_every_stall(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stalls of up to 0.4 s on a third of the events, over a game's 25 s of play: the
    lag learns them within a few (11 to 21 overtaken with the lag fixed at 50 ms)."""
    rng = random.Random(seed)
    times = game_times(rng, 60)
    delays = [rng.uniform(0.0, 0.4) if rng.random() < 0.33 else rng.uniform(0.0, 0.02)
              for _ in times]
    learned = overtaken(times, delays)
    monkeypatch.setattr(linkboard, "MAX_TICK_LAG", TICK_LAG)  # the lag fixed, as it was
    fixed = overtaken(times, delays)
    assert learned <= 4 and fixed >= 10, (learned, fixed)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.003, 2.0), st.floats(0.0, MAX_TICK_LAG / 2)),
                min_size=1, max_size=60))
def test_overtaken_events_are_few_whatever_the_delays(steps: list[tuple[float, float]]) -> None:
    """Each overtaken event at least doubles the lag: within the lag's memory, at most
    1 + log2(MAX_TICK_LAG / TICK_LAG) of them, for delays the lag can reach."""
    times, t = [], 1.0
    for gap, _ in steps:
        t += gap
        times.append(t)
    delays = [delay for _, delay in steps]
    if t - 1.0 > linkboard.LATE_MEMORY - 5:
        return
    assert overtaken(times, delays) <= 6
