"""Reading the board: raw toggles through debounce and sensor health into the settled
occupancy, and the settled occupancy through inference (`inference.py`) into the turn's
record: a move waiting, on its way, answered by the opponent, or the board unexplained
(after 1.5 s a position mismatch, `rules/displaced.py`). A full scan after a reconnection
is reconciled here too.
"""

from __future__ import annotations

import chess

from board_ctl.core import inference as infer
from board_ctl.core.debounce import SettledChange
from board_ctl.core.inference import Answer, Context
from board_ctl.core.rules import Finding
from board_ctl.core.squares import named_tuple, squares
from board_ctl.core.state import GameState



class Sensing(GameState):
    # ------------------------------------------------------------------ reading the board

    def _sensor(self, t: int, square: chess.Square, placed: bool) -> None:
        bit = chess.BB_SQUARES[square]
        if self.faulty & bit:
            return  # not believed: neither a touch nor evidence of a capture
        failing = self.health.toggled(t, square)
        if failing is not None:
            self._sensor_fault(t, square, failing)
            return
        if self._remote_on and self._remote_raw(t, square, placed):
            return  # the board lags a remote side's move: nothing is judged
        press = self.press
        press.last_raw = t
        if not placed and press.decision is not None and press.waiting & bit:
            # The opponent lifts a piece that stood still through the press: his move has
            # begun, so the pressed move is judged as it stands, before this lift.
            self._decide_press(t)
            if self.result is not None:
                return
        turn = self.turn
        events = turn.events_on.get(square)
        if events is None:
            turn.events_on[square] = [(t, placed)]
        else:
            events.append((t, placed))
        if turn.displaced:
            turn.displaced &= ~bit  # (handled in this turn: read as it is from now on)
        if placed:
            # (a placement that undid a change settling: a lift that proved a blip)
            if (self.debouncer.toggle(t, square, True) and self.result is None
                    and turn.match is None and turn.ambiguous is None):
                self._explain(t)  # what settled meanwhile stands
            if turn.waiting_reply and self.result is None:
                self._explain(t)  # the reply's capture may just have been seen landing
            lifted_raw = turn.lifted_raw
            if square in lifted_raw:
                if turn.ambiguous is not None:
                    self._resolve_ambiguity_by_touch(square)
                lifted_raw.discard(square)
        else:
            self.debouncer.toggle(t, square, False)
            if turn.waiting_reply and self.result is None:
                self._explain(t)  # the reply's capture may just have been seen landing
            turn.lifted_raw.add(square)

    def _settled(self, change: SettledChange) -> None:
        if self.result is not None:
            return
        t, square, occupied = change
        bit = chess.BB_SQUARES[square]
        sensed = self.sensed = self.sensed | bit if occupied else self.sensed & ~bit
        if self.faulty & bit:
            return  # (a change pending when the sensor was found faulty: not believed)
        failing = self.health.settled(t, square)
        if failing is not None:
            self._sensor_fault(t, square, failing)
            self._explain(t)
            return
        self.occupied = self._read() if self.faulty else sensed
        remote_on, out = self._remote_on, self.out
        if remote_on or out.alerts and out.restoring:
            # (a frame is a function of the game state, the alerts and, only while the
            # board is being restored or a remote side's move made, of the occupancy)
            out.dirty = True
        if remote_on and self._remote_settled(t):
            return
        turn = self.turn
        if not occupied and turn.position.occupied & bit:
            turn.touch(t, square)
        self._changing = square
        try:
            self._explain(t)
        finally:
            self._changing = None
        if remote_on:
            self._remote_observe(t)  # (without a clock, a released move completes)
        if self.press.decision is not None:
            turn = self.turn
            match = turn.match
            if (self.result is None and match is not None and turn.ambiguous is None
                    and infer.placed(turn, match)
                    and not match.promoting):  # (a promotion's selector may yet come)
                self._complete_match(t)  # the press waited for this: the piece has landed

    def _snapshot(self, t: int, occupied: chess.Bitboard) -> None:
        """A full scan, after a reconnection: the board as it is, all at once, no touches."""
        if not self.debouncer.reset(occupied):
            return
        self.sensed = occupied
        self.occupied = self._read()
        self.out.dirty = True
        if self._remote_on:
            self._remote_scanned(t)
            if self._remote_settled(t):
                return
        position, turn = self.turn.position, self.turn
        # (a move seen only as a lift is no explanation: a capture's bare lift looks like it)
        if not (self.occupied == position.occupied or position.full(self.occupied)
                or position.partial(self.occupied) or turn.ambiguous
                or any(infer.placed(turn, m) for m in turn.seen)):
            # (against a remote side only the person's own move: the other is its to choose)
            unseen = infer.moves_unseen(turn, self.occupied, pairs=self.remote.side is None)
            for shape in unseen or ():  # the one fit, taken with a note in the record
                self.out.note(t, f"{self.board.san(shape.move)} was made while the board "
                                 "was not connected: taken from its scan")
                self._push(infer.with_promotion(self.turn, shape, [shape]), t)
            if unseen:
                self._from_scan = True  # a guess from occupancy alone: no penalty rests on it
        self._explain(t)
        if self._remote_on:
            self._remote_observe(t)  # (without a clock, a move standing there completes)
        # Events were lost: until the board shows the game again, nothing seen since the
        # scan is proof of a player's irregularity.
        position = self.turn.position
        self._after_outage = not (self.occupied == position.occupied
                                  or position.full(self.occupied))

    def _sensor_fault(self, t: int, square: chess.Square, why: str) -> None:
        """A sensor not to be believed any more; the game goes on without it."""
        self.faulty |= chess.BB_SQUARES[square]
        self.health.forget(square)
        self.turn.forget(square)
        self.out.raise_(t, Finding(
            "suspect-sensor", None, squares(self.faulty), f"the sensor of "
            f"{chess.square_name(square)} {why}: it is ignored from now on; check its reed "
            "switch after the game"))
        self.occupied = self._read()
        self.out.dirty = True

    def _read(self, deciding: bool = False) -> chess.Bitboard:
        return infer.read_faulty(self.turn, self.sensed, self.faulty, deciding)

    def _context(self, t: int) -> Context:
        debouncer, occupied, displaced = self.debouncer, self.occupied, self.turn.displaced
        if displaced:  # (pieces displaced before the turn, untouched: not a move of it)
            occupied = (occupied & ~displaced) | (self.turn.position.occupied & displaced)
        return named_tuple(Context, (t, occupied, debouncer.settle, self._clock_in_use,
                                     self.press.at is not None,
                                     debouncer.settled & ~debouncer.raw, self._changing))

    def _explain(self, t: int) -> None:
        if self._remote_on and self.remote.busy(self.board):
            self._remote_wait(t)  # a remote side's turn, or its move being made: not judged
            return
        turn = self.turn
        was_ambiguous = turn.ambiguous
        explained, agrees, answer, then_explained = infer.explain(turn, self._context(t))
        if turn.ambiguous is not was_ambiguous:
            self.out.dirty = True  # (the candidates blink)
        if agrees:
            self._after_outage = False  # the board and the game agree again
        if answer is not None:
            self._reply_begun(answer, t)
            if then_explained:
                self._explained(t)
        elif explained:
            displaced = self.displaced
            if displaced.since is None and not displaced.lifted and not self.out.alerts:
                turn.made = None  # (self._explained, its common case: nothing to clear)
            else:
                self._explained(t)
        else:
            self._unexplained(t)

    def _opponent_started(self, t: int) -> bool:
        """If the board shows the opponent answering a move, that move is complete."""
        turn = self.turn
        was_ambiguous = turn.ambiguous
        found = infer.answer(turn, self._context(t))
        if isinstance(found, Answer):
            self._reply_begun(found, t)
            return True
        if turn.ambiguous is not was_ambiguous:
            self.out.dirty = True  # (the candidates blink)
        if found:
            self._explained(t)
        return found

    def _reply_begun(self, answer: Answer, t: int) -> None:
        """The opponent began his reply at `answer.cutoff`: the move is complete, and what
        happened from then on is his (touches, raw events, a selector set)."""
        carried = self.turn.split_at(answer.cutoff)
        self._commit(answer.fitting, answer.match.since)
        if self.result is None:
            turn = self.turn
            turn.adopt(carried, turn.position.occupied & ~self.occupied, t,
                       self.debouncer.settle)
            self._explain(t)

    def _explained(self, t: int) -> None:
        self.turn.made = None
        displaced = self.displaced
        if displaced.since is not None or displaced.lifted:
            if self._still_displaced():
                displaced.unexplained(t, 0)  # the mismatch stands until they are back
            else:
                self._apply(t, displaced.explained(self.turn.board, self.occupied,
                                                   "position-mismatch" in self.out.alerts))
        if "illegal-move" in self.out.alerts and (self.illegal.at_once or
                                                  self.occupied == self.turn.position.occupied):
            self.out.clear(t, "illegal-move")  # (or the position is reinstated)
        if "declared-move" in self.out.alerts and self.occupied == self.turn.position.occupied:
            self.out.clear(t, "declared-move")  # (the position is reinstated)

    def _still_displaced(self) -> bool:
        """Whether pieces found displaced are still away, though the board reads as the
        game or a move under way: those displaced before the turn, or those the open
        mismatch alert asks to put back (7.4: it clears when they are)."""
        turn = self.turn
        away = turn.displaced
        alert = self.out.alerts.get("position-mismatch")
        if alert is not None:
            for square in alert.squares:
                away |= chess.BB_SQUARES[square]
        return bool(away and away & (self.occupied ^ infer.reference_occupancy(turn)))

    def _unexplained(self, t: int) -> None:
        position = self.turn.position
        emptied = position.occupied & ~self.occupied
        theirs = emptied & ~position.board.occupied_co[position.board.turn]
        if infer.in_hand(position, self.occupied):
            made = infer.arrived_with_others(self.turn, self.occupied)
            if made is not None:  # the move is made: the rest is displaced (7.4)
                self.turn.made = made
                # (knocked off, not touched: 4.2.2, an accident is no touch)
                self.turn.knocked |= emptied & ~made.vacated
                self.displaced.unexplained(t, 0)  # (knocked by the mover: no wrong side)
                return
            # The mover's pieces in hand, put down or not: a move attempt, perhaps illegal,
            # judged at the clock press and not hinted at before it (12.6).
            self._explained(t)
            filled = self.occupied & ~position.occupied
            if filled and self.illegal.at_once and "illegal-move" not in self.out.alerts:
                self.out.raise_(t, self.illegal.placement(
                    position.board.turn, position.occupied ^ self.occupied))
            return
        self.displaced.unexplained(t, theirs)

    def _mismatch(self, when: int) -> None:
        reference = infer.reference_occupancy(self.turn)
        self.out.raise_(when, self.displaced.mismatch(reference, self.occupied))
