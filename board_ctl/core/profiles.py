"""Rule profiles (docs/rules.md): which rules the referee enforces, and how."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    touch_move: bool = True  # FIDE 4.3-4.5, rook-first castling 4.4.2
    move_changed: bool = True  # FIDE 4.7 warning (heuristic)
    illegal_at_once: bool = False  # casual: flag an illegal placement without waiting
    penalty_seconds: int = 120  # 7.5.5 / 9.5.3: time added to the opponent's clock
    illegal_moves_to_lose: int | None = 2  # 7.5.5: the second completed illegal move loses
    clock_without_move_is_illegal: bool = True  # 7.5.3
    auto_claimable_draws: bool = False  # casual: threefold and fifty moves end the game
    takebacks: bool = False  # against a computer: the takeback button takes back a move
    hints: bool = False  # against a computer: the hint button lights its suggestion


PROFILES: dict[str, Profile] = {
    "fide": Profile("fide"),
    "rapid": Profile("rapid", penalty_seconds=60),
    "blitz": Profile("blitz", penalty_seconds=60),
    "casual": Profile(
        "casual",
        touch_move=False,
        move_changed=False,
        illegal_at_once=True,
        penalty_seconds=0,
        illegal_moves_to_lose=None,
        clock_without_move_is_illegal=False,
        auto_claimable_draws=True,
        takebacks=True,
        hints=True,
    ),
}


def profile_named(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}"
        ) from None
