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
    # The older Laws of the seed handbooks (`classic`, docs/rules.md):
    # the king moved into check ("送王"): counted per player, this many lose the game
    king_exposures_to_lose: int | None = None
    # a wrong draw claim adds this to the claimant's used time (10.13 (2)): taken from his
    # clock, and he loses if that empties it; the opponent then gets nothing
    claimant_penalty_seconds: int = 0
    perpetual_check: bool = False  # a claim of perpetual check ("長將和") is judged
    # draw offers only on one's own turn (10.7-10.8), and none again after a refused one
    # until the opponent has offered in turn (000, "提議和棋")
    offers_checked: bool = False
    agreement_needs_moves: bool = True  # FIDE 5.2.3: each side must have moved
    # a claimant who declared his move must play it (10.10 (1), 10.13 (2))
    declared_move_binds: bool = False
    rules_tag: str | None = None  # the PGN's [Rules "..."] (None: no tag)


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
    # The older edition of the Laws printed in the seed handbooks, as clubs and children's
    # classes that teach from them still play (docs/rules.md, "The classic profile").
    "classic": Profile(
        "classic",
        penalty_seconds=0,
        illegal_moves_to_lose=None,
        king_exposures_to_lose=3,
        claimant_penalty_seconds=300,
        perpetual_check=True,
        offers_checked=True,
        agreement_needs_moves=False,
        declared_move_binds=True,
        rules_tag="classic",
    ),
}


def profile_named(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(
            f"unknown profile {name!r}; choose one of {', '.join(PROFILES)}"
        ) from None
