"""The referee's output: the open alerts, the effects of the event being handled, and the
LED frame that goes with them (sent only when what the LEDs show has changed)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import chess

from board_ctl.core.effects import (Alert, AlertCleared, Buzzer, Effect, GameOver, LedFrame,
                                    Note)
from board_ctl.core.leds import LedView, led_frame, nothing_lit
from board_ctl.core.rules import Finding
from board_ctl.core.timebase import US_PER_S, seconds

_RESTORING = ("illegal-move", "position-mismatch", "declared-move")  # the LEDs show the board
_WHITE_QUIET, _BLACK_QUIET = (nothing_lit(0.0, side).status for side in (chess.WHITE, chess.BLACK))


class Outbox:
    def __init__(self) -> None:
        self.alerts: dict[str, Alert] = {}  # open alerts by code
        self.effects: list[Effect] = []
        self.dirty = True  # something the LEDs show may have changed
        self._signature: Hashable = None
        self._last_frame: LedFrame | None = None
        self._framed = 0  # effects already shown by a frame

    def raise_(self, t: int, finding: Finding) -> None:
        alert = Alert(seconds(t), finding.code, finding.side, finding.squares, finding.text)
        self.alerts[finding.code] = alert
        self.effects.append(alert)

    def clear(self, t: int, code: str) -> None:
        if self.alerts.pop(code, None) is not None:
            self.effects.append(AlertCleared(seconds(t), code))

    def clear_all(self, t: int) -> None:
        for code in list(self.alerts):
            self.clear(t, code)

    def note(self, t: int, text: str) -> None:
        self.effects.append(Note(seconds(t), text))

    def add(self, effect: Effect) -> None:
        self.effects.append(effect)

    @property
    def restoring(self) -> bool:
        """Whether the LEDs show the board itself (what to put back): an illegal move or a
        position mismatch is open. Only then does a frame depend on the occupancy."""
        alerts = self.alerts
        return bool(alerts) and any(code in alerts for code in _RESTORING)

    @property
    def unframed(self) -> bool:
        """Whether anything happened that the last frame does not show."""
        return self.dirty or len(self.effects) != self._framed

    def frame(self, t: int, state: Hashable, boards: tuple[chess.Bitboard, chess.Bitboard],
              view: Callable[[], LedView]) -> None:
        """A LED frame at `t` when what the LEDs show has changed since the last one; its
        buzzer sounds for the alerts and results since then.

        The frame is a pure function of the game `state` (moves, result, candidates...),
        the open alerts, the sound of the new effects and, while the players must restore
        the position, the `boards` (what the sensors show, what the game needs): the work
        is skipped while that signature is unchanged."""
        new = self._new_effects()
        if new is None:
            return  # (nothing new)
        sound = _sounds(new)
        alerts = self.alerts
        shown: tuple[tuple[str, tuple[chess.Square, ...]], ...] = tuple(
            (a.code, a.squares) for a in alerts.values()) if alerts else ()
        signature = (state, shown, boards if alerts and self.restoring else None, sound)
        if signature == self._signature:
            return
        self._signature = signature
        frame = led_frame(seconds(t), view(), new)
        last = self._last_frame
        if last is None or (frame.squares, frame.status, frame.guidance, frame.buzzer) != (
                last.squares, last.status, last.guidance, last.buzzer):
            self._show(frame)

    def quiet_frame(self, t: int, side: chess.Color) -> None:
        """`frame` for a board that lights nothing (no alert, result, candidate, must-move,
        faulty sensor or remote side: most of a game), `side` to move: built directly and
        compared with the last frame, without a signature."""
        effects, framed = self.effects, self._framed  # (self._new_effects, inline)
        if not self.dirty and len(effects) == framed:
            return  # (nothing new)
        self.dirty = False
        self._framed = len(effects)
        self._signature = None  # (the next full frame is worked out anew)
        new = effects[framed:]
        if _sounds(new):
            frame = nothing_lit(seconds(t), side, new)
        else:  # (nothing_lit's frame, built directly: silent, the side to move shown)
            frame = LedFrame(t / US_PER_S, (), _WHITE_QUIET if side else _BLACK_QUIET,
                             Buzzer.SILENT, ())
        last = self._last_frame
        if (last is not None and not last.squares and not last.guidance
                and frame.buzzer == last.buzzer
                and (frame.status is last.status
                     or last.status is not _WHITE_QUIET and last.status is not _BLACK_QUIET
                     and frame.status == last.status)):
            return  # (the same as the last frame: compared without tuples; the two quiet
            # statuses differ, and are shared)
        self._show(frame)

    def _new_effects(self) -> list[Effect] | None:
        """The effects since the last frame, marked framed; None when nothing happened
        since (then no frame is due)."""
        effects = self.effects
        framed = self._framed
        if not self.dirty and len(effects) == framed:
            return None
        self.dirty = False
        self._framed = len(effects)
        return effects[framed:]

    def _show(self, frame: LedFrame) -> None:
        self.effects.append(frame)
        self._framed = len(self.effects)
        self._last_frame = frame

    def drain(self) -> list[Effect]:
        """The effects since the last drain, frames included."""
        out, self.effects = self.effects, []
        self._framed = 0
        return out


def _sounds(effects: list[Effect]) -> bool:
    """Whether these effects sound the buzzer: an alert, a result."""
    for effect in effects:  # (a loop, not any() over a generator: most frames have none)
        if isinstance(effect, (Alert, GameOver)):
            return True
    return False
