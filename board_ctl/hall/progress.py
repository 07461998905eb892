"""What the broker has acknowledged, kept on disk: the publisher's place in the journals.

`(game, line)`: every message of the journal lines up to `line` of `game`, and of every
earlier game, was acknowledged by the broker (QoS 1 PUBACK). A restarted service goes on
from there, so nothing the broker never had is lost; what it had may be sent again, and
subscribers drop it by (game, ply) or (game, seq). Written atomically (a new file renamed
over the old); a lost or unreadable file only means more is sent again.
"""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True, order=True)
class Place:
    game: str  # game ids sort in time order (archive.ID_FORMAT)
    line: int


class ProgressFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> Place | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return Place(str(data["game"]), int(data["line"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s unreadable (%s): publishing again from the current game",
                        self.path, exc)
            return None

    def save(self, place: Place) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        tmp.write_text(json.dumps({"game": place.game, "line": place.line}), encoding="utf-8")
        os.replace(tmp, self.path)


class AckWindow:
    """Journal lines in the order they were read, each waiting for the broker's
    acknowledgement of its message (or needing none); the place up to which all are done."""

    def __init__(self, done: Place | None) -> None:
        self.done = done
        self._lines: deque[tuple[Place, int | None]] = deque()  # (place, mid or None)
        self._pending: set[int] = set()  # messages sent and not acknowledged
        self._acked: set[int] = set()

    @property
    def waiting(self) -> int:
        return len(self._pending)

    def add(self, place: Place, mid: int | None) -> None:
        self._lines.append((place, mid))
        if mid is not None:
            self._pending.add(mid)
        else:
            self._advance()

    def ack(self, mid: int) -> bool:
        """The broker acknowledged `mid`; True when the done place moved."""
        if mid not in self._pending:
            return False  # not a journal line's message (a state, a reply)
        self._pending.discard(mid)
        self._acked.add(mid)
        return self._advance()

    def _advance(self) -> bool:
        moved = False
        while self._lines:
            place, mid = self._lines[0]
            if mid is not None:
                if mid not in self._acked:
                    break
                self._acked.discard(mid)
            self._lines.popleft()
            if self.done is None or place > self.done:
                self.done = place
                moved = True
        return moved

    def reset(self) -> None:
        """A new connection: what the old one had not acknowledged is sent again."""
        self._lines.clear()
        self._pending.clear()
        self._acked.clear()


class AckHistory:
    """Where the acknowledgements had reached, and when: so that a reconnection to a
    broker that kept the board's session sends again only what the broker may have lost
    (what it acknowledged after its last save to disk), not the whole game.

    Keeps every move of the done place within `span` s of the newest, and the last one
    before that (the place as it was `span` s ago)."""

    def __init__(self, span: float, start: float, done: Place | None) -> None:
        self.span = span
        self._marks: deque[tuple[float, Place | None]] = deque([(start, done)])

    def note(self, when: float, done: Place | None) -> None:
        self._marks.append((when, done))
        horizon = when - self.span
        while len(self._marks) > 1 and self._marks[1][0] <= horizon:
            self._marks.popleft()

    @property
    def floor(self) -> Place | None:
        """The oldest place kept: `at` never answers an older one (but may answer None)."""
        return self._marks[0][1]

    def at(self, when: float) -> Place | None:
        """The done place as it was at `when`; None if `when` is older than what is kept
        (before this process started: not known)."""
        found = None
        for t, place in self._marks:
            if t > when:
                break
            found = place
        return found
