"""A compact way to write sensor-event sequences by hand, for table tests.

Tokens, separated by spaces, each `gap` seconds after the one before:
  -e2 lift e2     +e4 place e4     Cw / Cb clock press     =n promotion selector
  Cw/5391.5/5400  a press with the external clock's display after it (white/black s)
  Rw / Rb resign  Ow / Ob draw offer  Aw / Ab accept  Xw / Xb claim
  @0.02 the next token comes 0.02 s after the previous one (instead of `gap`)
  ~3 wait 3 s (nothing happens)      T  a tick: time passes (as a live service's timer)
"""

from __future__ import annotations

from dataclasses import dataclass

import chess

from board_ctl.core import events as ev
from board_ctl.core.profiles import PROFILES
from board_ctl.record import GameRecord
from board_ctl.replay import replay_events
from board_ctl.sensorlog import PROMOTION_PIECES, StartInfo

SIDE = {"w": chess.WHITE, "b": chess.BLACK}
BUTTONS = {"R": ev.Resigned, "O": ev.DrawOffered, "A": ev.DrawAccepted, "X": ev.DrawClaimed}


def events(script: str, gap: float = 0.4, t: float = 1.0) -> list[ev.Event]:
    out: list[ev.Event] = []
    next_gap = None
    for token in script.split():
        if token.startswith("@"):
            next_gap = float(token[1:])
            continue
        if token.startswith("~"):
            t += float(token[1:])
            continue
        t += next_gap if next_gap is not None else gap
        next_gap = None
        head, rest = token[0], token[1:]
        if head in "-+":
            square = chess.parse_square(rest)
            out.append(ev.Lifted(t, square) if head == "-" else ev.Placed(t, square))
        elif head == "T":
            out.append(ev.Tick(t))
        elif head == "C":
            side, *shown = rest.split("/")
            times = (float(shown[0]), float(shown[1])) if shown else None
            out.append(ev.ClockPressed(t, SIDE[side], times))
        elif head == "=":
            out.append(ev.PromotionChosen(t, PROMOTION_PIECES[rest]))
        elif head in BUTTONS:
            out.append(BUTTONS[head](t, SIDE[rest]))
        else:
            raise ValueError(f"bad token {token!r}")
    return out


@dataclass
class Outcome:
    record: GameRecord

    @property
    def sans(self) -> list[str]:
        return [m.san for m in self.record.moves]

    @property
    def alerts(self) -> list[str]:
        return [line["code"] for line in self.record.report if line["kind"] == "alert"]

    def alert(self, code: str) -> dict:
        return next(line for line in self.record.report
                    if line["kind"] == "alert" and line["code"] == code)

    @property
    def result(self) -> tuple[str, str] | None:
        r = self.record.result
        return (r.result, r.termination) if r else None

    def lines(self, kind: str) -> list[dict]:
        return [line for line in self.record.report if line["kind"] == kind]


def play(script: str, fen: str = chess.STARTING_FEN, profile: str = "fide",
         gap: float = 0.4, time_control: str | None = None) -> Outcome:
    start = StartInfo(fen=fen, time_control=time_control)
    return Outcome(replay_events(start, events(script, gap), PROFILES[profile]))
