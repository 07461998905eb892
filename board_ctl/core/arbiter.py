"""What the arbiter orders from outside the board (the arbiter station over MQTT): a
result decided or corrected, both clocks set (FIDE 6.10), the game's tags. The referee
dispatches the events here; each becomes effects the record and the journal keep, so a
replay of the game's log or journal reaches the same game."""

from __future__ import annotations

from typing import TYPE_CHECKING

from board_ctl.core import events as ev
from board_ctl.core.effects import GameOver, TagsChanged
from board_ctl.core.timebase import seconds

if TYPE_CHECKING:
    from board_ctl.core.referee import Referee

ADJUDICATION = "adjudication"  # the termination of a result the arbiter gave


def _who(by: str) -> str:
    return f" ({by})" if by else ""


def _hms(seconds: float) -> str:
    whole = int(seconds)
    frac = seconds - whole
    text = f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    return text + (f"{frac:.3f}"[1:].rstrip("0") if frac else "")


def decide(referee: Referee, order: ev.ArbiterResult, t: int) -> None:
    """The game ends with the arbiter's result; a result already given is replaced.
    `t`: the order's time in the core's microseconds."""
    because = f": {order.reason}" if order.reason else ""
    game = referee.game
    current = game.result
    if current is None:
        referee.out.note(t, f"result {order.result} given by the arbiter{_who(order.by)}"
                            f"{because}")
        referee.completion.game_over(t, order.result, ADJUDICATION)
        return
    if current.result == order.result:
        return  # the result stands (said again, or confirmed): nothing changes
    referee.out.note(t, f"result corrected by the arbiter{_who(order.by)} from "
                        f"{current.result} to {order.result}{because}")
    game.result = GameOver(seconds(t), order.result, ADJUDICATION)
    referee.out.add(game.result)
    referee.out.dirty = True


def set_clocks(referee: Referee, order: ev.ClocksSet, t: int) -> None:
    """Both clocks show the arbiter's times from now; the turn goes on (FIDE 6.10). An
    external clock's next reading is taken as it is: the arbiter set that clock too."""
    if referee.result is not None:
        return
    referee.game_clock.set_by_arbiter(order.white, order.black, t)
    referee.out.note(t, f"clocks set by the arbiter{_who(order.by)}: White "
                        f"{_hms(order.white)}, Black {_hms(order.black)} (FIDE 6.10)")


def tags_changed(order: ev.TagsSet, t: int) -> TagsChanged:
    return TagsChanged(seconds(t), order.tags)
