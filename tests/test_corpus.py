"""Real games rendered as human-like sensor logs by the independent simulator, replayed.

Every clean game must come out exact, with its result and with no alert at all; every
scripted violation must raise its code and leave the game record exact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import chess
import pytest

from board_ctl.simulate import NoEligiblePly, RenderStyle, render_game, render_violation
from corpus import corpus, has_move, replay_rendered

pytestmark = pytest.mark.slow  # the whole corpus: minutes; CI runs it, -m "not slow" skips it

CLEAN_STYLES = {
    "clock": RenderStyle(),
    "no-clock": RenderStyle(use_clock=False),
    "fast-swaps": RenderStyle(capture_styles=(0.0, 0.0, 0.5, 0.5)),
    "fast-swaps-no-clock": RenderStyle(use_clock=False, capture_styles=(0.0, 0.0, 0.5, 0.5)),
    "from-fen-no-bounce": RenderStyle(start_ply=12, bounce=False, slides=False),
}


@pytest.mark.parametrize("name", sorted(CLEAN_STYLES))
def test_clean_games_are_exact_with_no_alert(name: str) -> None:
    style = CLEAN_STYLES[name]
    failures = []
    checked = 0
    for seed, game in enumerate(corpus()):
        if style.start_ply and style.start_ply >= len(list(game.mainline_moves())):
            continue
        replayed = replay_rendered(render_game(game, seed=seed, style=style))
        checked += 1
        rendered = replayed.rendered
        if replayed.moves != rendered.moves or replayed.alerts or replayed.result != rendered.result:
            failures.append((seed, replayed.first_divergence(), replayed.alerts[:3],
                             replayed.result, rendered.result))
    assert checked > 300
    assert failures == [], f"{len(failures)} of {checked} games wrong: {failures[:5]}"


def inexact_games(style: RenderStyle, has: Callable[[chess.Board, chess.Move], bool]
                  ) -> tuple[list[tuple[int, int, list[str]]], int]:
    """The corpus's games with a move `has` accepts, rendered in `style` and replayed:
    (seed, first divergence, alerts) of those not exact or not silent, and how many."""
    failures, checked = [], 0
    for seed, game in enumerate(corpus()):
        if not has_move(game, has):
            continue
        replayed = replay_rendered(render_game(game, seed=seed, style=style))
        checked += 1
        rendered = replayed.rendered
        if replayed.moves != rendered.moves or replayed.alerts or replayed.result != rendered.result:
            failures.append((seed, replayed.first_divergence(), replayed.alerts[:3]))
    return failures, checked


@pytest.mark.parametrize("use_clock", [True, False], ids=["clock", "no-clock"])
def test_promotion_selector_just_after_the_press_counts(use_clock: bool) -> None:
    """README: the selector counts when set any time before the move is completed, even
    just after the press (without a clock: after the placement, before the reply)."""
    style = RenderStyle(use_clock=use_clock, promote_timings=(0.0, 0.0, 0.0, 1.0),
                        queen_default_prob=0.0)
    failures, checked = inexact_games(
        style, lambda board, move: move.promotion not in (None, chess.QUEEN))
    assert checked >= 40
    assert failures == [], f"{len(failures)} of {checked} games wrong: {failures[:5]}"


# Behaviours found by rendering real games in ways the corpus first lacked (issue 9 §5),
# each rendered in every game that has the move concerned, with and without a clock.
BEHAVIOURS = {
    # every capture: the victim lifted, set down a moment on a square it could move to,
    # then taken off; the capturing piece lands after (once read as a reply: a phantom)
    "victim-set-down": (RenderStyle(capture_styles=(0, 0, 0, 0, 1)),
                        lambda board, move: board.is_capture(move)),
    # every promotion: the new piece on the square before the pawn is lifted (4.6)
    "promotion-piece-first": (RenderStyle(promotion_styles=(0, 0, 1)),
                              lambda board, move: move.promotion is not None),
    # every selector set 10-90 ms after lifting the pawn, while the lift settles
    "selector-after-lift": (RenderStyle(promote_timings=(0, 0, 0, 0, 1),
                                        queen_default_prob=0.0),
                            lambda board, move: move.promotion is not None),
}


@pytest.mark.parametrize("use_clock", [True, False], ids=["clock", "no-clock"])
@pytest.mark.parametrize("name", sorted(BEHAVIOURS))
def test_behaviours_real_players_have_are_exact_with_no_alert(name: str, use_clock: bool) -> None:
    base, has = BEHAVIOURS[name]
    style = dataclasses.replace(base, use_clock=use_clock)
    failures, checked = inexact_games(style, has)
    assert checked >= 60
    assert failures == [], f"{len(failures)} of {checked} games wrong: {failures[:5]}"


VIOLATIONS = ["touch-move", "touch-move-enemy", "illegal-move", "move-changed",
              "position-mismatch", "clock-no-move", "knocked-during-move",
              "knocked-over-the-press"]


# A press defines illegal-move and clock-no-move; without a clock, a knocked-over piece of
# the side that just moved is that side moving on, so those are staged with a clock only.
CASES = [(code, True) for code in VIOLATIONS] + [
    (code, False) for code in VIOLATIONS
    if code not in ("illegal-move", "clock-no-move", "position-mismatch", "knocked-during-move",
                    "knocked-over-the-press")]


@pytest.mark.parametrize("code, use_clock", CASES,
                         ids=[f"{c}-{'clock' if u else 'no-clock'}" for c, u in CASES])
def test_scripted_violation_raises_its_code_and_keeps_the_record(code: str, use_clock: bool) -> None:
    games = corpus() if use_clock else corpus()[::3]
    failures, checked = [], 0
    for seed, game in enumerate(games):
        try:
            rendered = render_violation(game, code, seed=seed, style=RenderStyle(use_clock=use_clock))
        except NoEligiblePly:
            continue
        checked += 1
        replayed = replay_rendered(rendered)
        expected = [alert for alert, _ in rendered.expected_alerts]
        if replayed.moves == rendered.moves and replayed.alerts == expected:
            continue
        failures.append((seed, replayed.first_divergence(), expected, replayed.alerts[:4]))
    assert checked > 90
    assert failures == [], f"{len(failures)} of {checked} wrong: {failures[:5]}"


@pytest.mark.parametrize("profile", ["rapid", "casual"])
def test_clean_games_in_the_other_profiles(profile: str) -> None:
    failures = []
    games = corpus()[::4]
    for seed, game in enumerate(games):
        style = RenderStyle(use_clock=seed % 2 == 0)
        replayed = replay_rendered(render_game(game, seed=seed, style=style), profile)
        rendered = replayed.rendered
        if profile == "casual" and replayed.record.result is not None and \
                replayed.record.result.termination in ("threefold-repetition", "fifty-moves"):
            # Casual play ends a repeated or fifty-move position by itself, where the real
            # game (played without that rule) went on: the record must be the game so far.
            assert replayed.moves == rendered.moves[: len(replayed.moves)] and not replayed.alerts
            continue
        if replayed.moves != rendered.moves or replayed.alerts or replayed.result != rendered.result:
            failures.append((seed, replayed.first_divergence(), replayed.alerts[:3]))
    assert failures == [], failures[:5]


# ---------------------------------------------------------------- the older Laws (classic)


@pytest.mark.parametrize("use_clock", [True, False], ids=["clock", "no-clock"])
def test_clean_games_under_the_older_laws(use_clock: bool) -> None:
    """Every game of the corpus, its log's start line naming the classic profile: exact,
    with its result and no alert (the claim at a repetition's end upheld as before)."""
    from board_ctl.simulate.classic import render_classic_clean

    failures = []
    for seed, game in enumerate(corpus()):
        rendered = render_classic_clean(game, seed=seed, style=RenderStyle(use_clock=use_clock))
        replayed = replay_rendered(rendered, "classic")
        if replayed.moves != rendered.moves or replayed.alerts or replayed.result != rendered.result:
            failures.append((seed, replayed.first_divergence(), replayed.alerts[:3]))
    assert failures == [], f"{len(failures)} games wrong: {failures[:5]}"


CLASSIC_CASES = [("king-into-check", True), ("king-into-check-thrice", True),
                 ("wrong-claim", True), ("wrong-claim", False), ("offer-out-of-turn", True),
                 ("offer-repeated", True), ("offer-repeated", False)]


@pytest.mark.parametrize("code, use_clock", CLASSIC_CASES,
                         ids=[f"{c}-{'clock' if u else 'no-clock'}" for c, u in CLASSIC_CASES])
def test_infractions_under_the_older_laws_raise_their_alerts(code: str, use_clock: bool) -> None:
    """Each infraction the older Laws judge their own way, staged in every game that
    allows it: its alerts, and the record exact (up to the loss, for the third king moved
    into check); a wrong claim costs the claimant five minutes of his clock."""
    from board_ctl.simulate.classic import render_classic

    failures, checked = [], 0
    for seed, game in enumerate(corpus() if use_clock else corpus()[::3]):
        try:
            rendered = render_classic(game, code, seed=seed, style=RenderStyle(use_clock=use_clock))
        except NoEligiblePly:
            continue
        checked += 1
        replayed = replay_rendered(rendered, "classic")
        expected = [alert for alert, _ in rendered.expected_alerts]
        penalties = [line for line in replayed.record.report if line["kind"] == "penalty"]
        wanted_penalties = 1 if code == "wrong-claim" else 0
        if (replayed.moves != rendered.moves or replayed.alerts != expected
                or replayed.result != rendered.result or len(penalties) != wanted_penalties
                or any(p["seconds"] != -300 for p in penalties)):
            failures.append((seed, replayed.first_divergence(), expected, replayed.alerts[:6],
                             replayed.result, rendered.result))
    assert checked >= (30 if code == "king-into-check-thrice" else 90)
    assert failures == [], f"{len(failures)} of {checked} wrong: {failures[:5]}"
