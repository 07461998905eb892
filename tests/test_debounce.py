"""Debounce, in the core's whole microseconds."""

from __future__ import annotations

import chess
from hypothesis import given
from hypothesis import strategies as st

from board_ctl.core.debounce import Debouncer, SettledChange

MS = 1000  # us


def test_bounce_settles_once_at_the_final_state() -> None:
    deb = Debouncer(chess.BB_E2, settle=80 * MS)
    for t, occupied in [(1_000_000, False), (1_002_000, True), (1_004_000, False)]:
        deb.toggle(t, chess.E2, occupied)
    assert deb.advance(1_050_000) == []
    assert deb.advance(1_084_000) == [SettledChange(1_004_000, chess.E2, False)]
    assert deb.settled == 0


def test_slide_blip_never_settles() -> None:
    deb = Debouncer(0, settle=80 * MS)
    deb.toggle(1_000_000, chess.E3, True)
    deb.toggle(1_070_000, chess.E3, False)
    assert deb.advance(5_000_000) == [] and deb.settled == 0


def test_a_real_change_is_delayed_by_the_settle_time_only() -> None:
    deb = Debouncer(0, settle=80 * MS)
    deb.toggle(2_000_000, chess.E4, True)
    assert deb.next_deadline() == 2_080_000
    assert deb.advance(2_079_999) == []
    assert deb.advance(2_080_000) == [SettledChange(2_000_000, chess.E4, True)]


def test_flush_and_reset() -> None:
    deb = Debouncer(chess.BB_E2, settle=80 * MS)
    deb.toggle(1_000_000, chess.E2, False)
    deb.toggle(1_010_000, chess.E4, True)
    assert [c.square for c in deb.flush()] == [chess.E2, chess.E4]
    changed = deb.reset(chess.BB_E2 | chess.BB_D2)
    assert {c.square for c in changed} == {chess.E4, chess.D2, chess.E2}
    assert deb.raw == deb.settled == chess.BB_E2 | chess.BB_D2


@given(start=st.integers(min_value=0, max_value=10**18), settle=st.integers(1, 10**6))
def test_a_change_settles_exactly_at_its_deadline_at_any_magnitude(start: int, settle: int) -> None:
    """The old float debouncer never settled at Unix-epoch times: (t + 0.1) - t < 0.1."""
    deb = Debouncer(0, settle=settle)
    deb.toggle(start, chess.E4, True)
    deadline = deb.next_deadline()
    assert deadline == start + settle
    assert deb.advance(deadline - 1) == []
    assert deb.advance(deadline) == [SettledChange(start, chess.E4, True)]
    assert deb.next_deadline() is None


@given(st.lists(st.tuples(st.integers(0, 3), st.booleans(), st.integers(0, 150 * MS)),
                max_size=60))
def test_the_kept_deadline_and_undone_changes_match_a_plain_model(steps) -> None:
    """The debouncer keeps its next deadline instead of looking it up, and its toggle
    says when it undid a change still settling: both held to a plain model (every
    pending change's time kept, the deadline their earliest plus the settle time)."""
    squares = [chess.E2, chess.E4, chess.D7, chess.H8]
    start = chess.BB_E2 | chess.BB_D7
    deb = Debouncer(start, settle=80 * MS)
    raw = settled = start
    pending: dict[int, int] = {}
    t = 1_000_000
    for index, occupied, gap in steps:
        t += gap
        square, bit = squares[index], chess.BB_SQUARES[squares[index]]
        for change in deb.advance(t):  # (settle what is due first, as the referee does)
            assert pending.pop(change.square) == change.t
            settled ^= chess.BB_SQUARES[change.square]
        assert deb.settled == settled
        undone = bool(raw & bit) != occupied and bool(settled & bit) == occupied
        assert deb.toggle(t, square, occupied) == undone
        if bool(raw & bit) != occupied:
            raw ^= bit
            if bool(settled & bit) == occupied:
                pending.pop(square, None)
            else:
                pending[square] = t
        assert deb.raw == raw
        assert deb.next_deadline() == (min(pending.values()) + 80 * MS if pending else None)
