from __future__ import annotations

import chess

from board_ctl.core.debounce import Debouncer, SettledChange


def test_bounce_settles_once_at_the_final_state() -> None:
    deb = Debouncer(chess.BB_E2, settle=0.08)
    for t, occupied in [(1.000, False), (1.002, True), (1.004, False)]:
        deb.toggle(t, chess.E2, occupied)
    assert deb.advance(1.05) == []
    assert deb.advance(1.084) == [SettledChange(1.004, chess.E2, False)]
    assert deb.settled == 0


def test_slide_blip_never_settles() -> None:
    deb = Debouncer(0, settle=0.08)
    deb.toggle(1.0, chess.E3, True)
    deb.toggle(1.07, chess.E3, False)
    assert deb.advance(5.0) == [] and deb.settled == 0


def test_a_real_change_is_delayed_by_the_settle_time_only() -> None:
    deb = Debouncer(0, settle=0.08)
    deb.toggle(2.0, chess.E4, True)
    assert deb.next_deadline() == 2.08
    assert deb.advance(2.0799) == []
    assert deb.advance(2.08) == [SettledChange(2.0, chess.E4, True)]


def test_flush_and_reset() -> None:
    deb = Debouncer(chess.BB_E2, settle=0.08)
    deb.toggle(1.0, chess.E2, False)
    deb.toggle(1.01, chess.E4, True)
    assert [c.square for c in deb.flush()] == [chess.E2, chess.E4]
    changed = deb.reset(chess.BB_E2 | chess.BB_D2)
    assert {c.square for c in changed} == {chess.E4, chess.D2, chess.E2}
    assert deb.raw == deb.settled == chess.BB_E2 | chess.BB_D2
