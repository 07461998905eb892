"""What a protocol's session hands back to its port after a request: bytes for the app,
the squares it asks to light, and clock commands for the terminal view."""

from __future__ import annotations

from dataclasses import dataclass, field

import chess


@dataclass(frozen=True, slots=True)
class Lights:
    """The squares an app asks to light (an empty set: all off)."""

    squares: frozenset[chess.Square]
    blink: bool = False


@dataclass
class Output:
    data: bytearray = field(default_factory=bytearray)
    lights: Lights | None = None  # None: no change
    notes: list[str] = field(default_factory=list)  # what the app asked, for the view

    def extend(self, other: Output) -> None:
        self.data += other.data
        if other.lights is not None:
            self.lights = other.lights
        self.notes += other.notes
