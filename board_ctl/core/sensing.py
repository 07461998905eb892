"""Reading the board: raw toggles through debounce and sensor health into the settled
occupancy, and the settled occupancy through the reading of the turn (`reading.py`) into
the turn's record: a move waiting, on its way, answered by the opponent, or the board
unexplained (after 1.5 s a position mismatch, `rules/displaced.py`). A full scan after a
reconnection is reconciled here too.

A part of the referee: it holds the game state it shares with the other parts, the
reading, and the parts it hands a move to (`completion.py`) or a remote side's board to
(`remoteplay.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from board_ctl.core import inference as infer
from board_ctl.core.debounce import SettledChange
from board_ctl.core.inference import Answer, Context
from board_ctl.core.rules import Finding
from board_ctl.core.squares import named_tuple, squares
from board_ctl.core.state import GameState

if TYPE_CHECKING:
    from board_ctl.core.completion import Completion
    from board_ctl.core.reading import TurnReading
    from board_ctl.core.remoteplay import RemotePlay


class Sensing:
    def __init__(self, game: GameState, reading: TurnReading) -> None:
        self.game = game
        self.reading = reading
        # (the shared objects it uses, never replaced: kept, as they are asked of often)
        self.out, self.press, self.debouncer = game.out, game.press, game.debouncer
        self.health, self.displaced, self.illegal = game.health, game.displaced, game.illegal
        self.remote, self.remote_on = game.remote, game.remote_on
        self.completion: Completion
        self.remote_play: RemotePlay

    def wire(self, completion: Completion, remote_play: RemotePlay) -> None:
        """The parts it hands to: a move to complete, a remote side's board."""
        self.completion, self.remote_play = completion, remote_play

    # ------------------------------------------------------------------ reading the board

    def sensor(self, t: int, square: chess.Square, placed: bool) -> None:
        game = self.game
        bit = chess.BB_SQUARES[square]
        if game.faulty & bit:
            return  # not believed: neither a touch nor evidence of a capture
        failing = self.health.toggled(t, square)
        if failing is not None:
            self.sensor_fault(t, square, failing)
            return
        if self.remote_on and self.remote_play.raw(t, square, placed):
            return  # the board lags a remote side's move: nothing is judged
        if game.turn.mirror is not None and not game.turn.mirror.squares & bit:
            # Play goes on (the opponent's reply begun, most often) before the board told
            # the readings of the move apart: the flagged one is recorded, uncertain.
            self.completion.close_mirror(t)
            if game.result is not None:
                return
        press = self.press
        press.last_raw = t
        if not placed and press.decision is not None and press.waiting & bit:
            # The opponent lifts a piece that stood still through the press: his move has
            # begun, so the pressed move is judged as it stands, before this lift.
            self.completion.decide_press(t)
            if game.result is not None:
                return
        turn = game.turn
        events = turn.events_on.get(square)
        if events is None:
            turn.events_on[square] = [(t, placed)]
        else:
            events.append((t, placed))
        if turn.displaced:
            turn.displaced &= ~bit  # (handled in this turn: read as it is from now on)
        if turn.asking and turn.mirror is None:  # (the LEDs asked to check the last move:
            # play has gone on)
            turn.asking = ()
            self.out.dirty = True
        if placed:
            # (a placement that undid a change settling: a lift that proved a blip)
            if (self.debouncer.toggle(t, square, True) and game.result is None
                    and turn.match is None and turn.ambiguous is None):
                self.explain(t)  # what settled meanwhile stands
            if turn.waiting_reply and game.result is None:
                self.explain(t)  # the reply's capture may just have been seen landing
            lifted_raw = turn.lifted_raw
            if square in lifted_raw:
                if turn.ambiguous is not None:
                    self.completion.resolve_ambiguity_by_touch(square)
                lifted_raw.discard(square)
        else:
            self.debouncer.toggle(t, square, False)
            if turn.waiting_reply and game.result is None:
                self.explain(t)  # the reply's capture may just have been seen landing
            turn.lifted_raw.add(square)

    def settled(self, change: SettledChange) -> None:
        game = self.game
        if game.result is not None:
            if game.moved_on is not None:  # (the move that ended the game, moved on?)
                self.completion.after_the_end(change)
            return
        t, square, occupied = change
        bit = chess.BB_SQUARES[square]
        sensed = game.sensed = game.sensed | bit if occupied else game.sensed & ~bit
        if game.faulty & bit:
            return  # (a change pending when the sensor was found faulty: not believed)
        failing = self.health.settled(t, square)
        if failing is not None:
            self.sensor_fault(t, square, failing)
            self.explain(t)
            return
        game.occupied = self.read() if game.faulty else sensed
        remote_on, out = self.remote_on, self.out
        if remote_on or out.alerts and out.restoring:
            # (a frame is a function of the game state, the alerts and, only while the
            # board is being restored or a remote side's move made, of the occupancy)
            out.dirty = True
        if remote_on and self.remote_play.settled(t):
            return
        turn = game.turn
        if not occupied and turn.position.occupied & bit:
            turn.touch(t, square)
        game.changing = square
        try:
            self.explain(t)
        finally:
            game.changing = None
        if remote_on:
            self.remote_play.observe(t)  # (without a clock, a released move completes)
        if self.press.decision is not None:
            turn = game.turn
            match = turn.match
            if (game.result is None and match is not None and turn.ambiguous is None
                    and infer.placed(turn, match)
                    and not match.promoting):  # (a promotion's selector may yet come)
                self.completion.complete_match(t)  # the press waited for this: the piece landed

    def snapshot(self, t: int, occupied: chess.Bitboard) -> None:
        """A full scan, after a reconnection: the board as it is, all at once, no touches."""
        game = self.game
        if not self.debouncer.reset(occupied):
            return
        game.sensed = occupied
        game.occupied = self.read()
        self.out.dirty = True
        if self.remote_on:
            self.remote_play.scanned(t)
            if self.remote_play.settled(t):
                return
        position, turn = game.turn.position, game.turn
        # (a move seen only as a lift is no explanation: a capture's bare lift looks like it)
        if not (game.occupied == position.occupied or position.full(game.occupied)
                or position.partial(game.occupied) or turn.ambiguous
                or any(infer.placed(turn, m) for m in turn.seen)):
            # (against a remote side only the person's own move: the other is its to choose)
            unseen = infer.moves_unseen(turn, game.occupied, pairs=self.remote.side is None)
            for shape in unseen or ():  # the one fit, taken with a note in the record
                self.out.note(t, f"{game.board.san(shape.move)} was made while the board "
                                 "was not connected: taken from its scan")
                self.completion.push(infer.with_promotion(game.turn, shape, [shape]), t)
            if unseen:
                game.from_scan = True  # a guess from occupancy alone: no penalty rests on it
        self.explain(t)
        if self.remote_on:
            self.remote_play.observe(t)  # (without a clock, a move standing there completes)
        # Events were lost: until the board shows the game again, nothing seen since the
        # scan is proof of a player's irregularity.
        position = game.turn.position
        game.after_outage = not (game.occupied == position.occupied
                                 or position.full(game.occupied))

    def sensor_fault(self, t: int, square: chess.Square, why: str) -> None:
        """A sensor not to be believed any more; the game goes on without it."""
        game = self.game
        game.faulty |= chess.BB_SQUARES[square]
        self.health.forget(square)
        game.turn.forget(square)
        self.out.raise_(t, Finding(
            "suspect-sensor", None, squares(game.faulty), f"the sensor of "
            f"{chess.square_name(square)} {why}: it is ignored from now on; check its reed "
            "switch after the game"))
        game.occupied = self.read()
        self.out.dirty = True

    def read(self, deciding: bool = False) -> chess.Bitboard:
        game = self.game
        return infer.read_faulty(game.turn, game.sensed, game.faulty, deciding)

    def context(self, t: int) -> Context:
        game = self.game
        debouncer, occupied, displaced = self.debouncer, game.occupied, game.turn.displaced
        if displaced:  # (pieces displaced before the turn, untouched: not a move of it)
            occupied = (occupied & ~displaced) | (game.turn.position.occupied & displaced)
        return named_tuple(Context, (t, occupied, debouncer.settle, game.clock_in_use,
                                     self.press.at is not None,
                                     debouncer.settled & ~debouncer.raw, game.changing))

    def explain(self, t: int) -> None:
        game = self.game
        if self.remote_on and self.remote.busy(game.board):
            self.remote_play.wait(t)  # a remote side's turn, or its move being made: not judged
            return
        turn = game.turn
        if turn.mirror is not None:  # (a move's readings held open: only they are looked at)
            self.completion.mirror_seen(t)
            return
        turn.crossing = None  # (read anew)
        was_ambiguous = turn.ambiguous
        explained, agrees, answer, then_explained = self.reading.explain(turn, self.context(t))
        if turn.ambiguous is not was_ambiguous:
            self.out.dirty = True  # (the candidates blink)
        if agrees:
            game.after_outage = False  # the board and the game agree again
        if answer is not None:
            self.reply_begun(answer, t)
            if then_explained:
                self.explained(t)
        elif explained:
            displaced = self.displaced
            if displaced.since is None and not displaced.lifted and not self.out.alerts:
                turn.made = None  # (self.explained, its common case: nothing to clear)
            else:
                self.explained(t)
        else:
            self._unexplained(t)

    def opponent_started(self, t: int) -> bool:
        """If the board shows the opponent answering a move, that move is complete."""
        turn = self.game.turn
        was_ambiguous = turn.ambiguous
        found = self.reading.answer(turn, self.context(t))
        if isinstance(found, Answer):
            self.reply_begun(found, t)
            return True
        if turn.ambiguous is not was_ambiguous:
            self.out.dirty = True  # (the candidates blink)
        if found:
            self.explained(t)
        return found

    def reply_begun(self, answer: Answer, t: int) -> None:
        """The opponent began his reply at `answer.cutoff`: the move is complete, and what
        happened from then on is his (touches, raw events, a selector set)."""
        game = self.game
        carried = game.turn.split_at(answer.cutoff)
        # (his press still to come: the clock has not been switched to the opponent)
        unpressed = game.clock_in_use and game.game_clock.running_side != (not game.board.turn)
        if game.clock_in_use:
            mine = infer.exchange_choices(carried, answer.fitting[0].move, answer.cutoff)
            if mine:  # (the mover's promotion choice, made as he exchanged the pawn)
                carried.selections = [s for s in carried.selections if s not in mine]
                game.turn.selections += mine
        else:
            late = infer.late_choices(game.turn, answer.fitting)
            if late:  # (the opponent's choice made early: his, like what follows the cutoff)
                game.turn.selections = [s for s in game.turn.selections if s not in late]
                carried.selections[:0] = late
        self.completion.commit(answer.fitting, answer.match.since, guess=answer.guess,
                               uncertain=answer.others)
        if game.result is None:
            turn = game.turn
            turn.adopt(carried, turn.position.occupied & ~game.occupied, t,
                       self.debouncer.settle)
            if unpressed and turn.touched:
                # Before the mover's press his hand may still be setting his piece
                # straight: a lift of the piece he just moved is no touch of his
                # opponent's (the sensors cannot tell whose hand it was).
                moved = answer.fitting[0].filled
                turn.touched = [(when, sq) for when, sq in turn.touched
                                if not moved & chess.BB_SQUARES[sq]]
            self.explain(t)

    def explained(self, t: int) -> None:
        game = self.game
        game.turn.made = None
        displaced, out = self.displaced, self.out
        if displaced.since is not None or displaced.lifted:
            if displaced.held is not None:  # (the board shows how the move was read)
                self.release_mismatch(t, infer.reference_occupancy(game.turn))
            if self._still_displaced():
                displaced.unexplained(t, 0)  # the mismatch stands until they are back
            else:
                accounted = 0
                if displaced.lifted:  # (no touch out of turn: the victim of the move shown,
                    # the pieces the mover's hand knocked over)
                    turn = game.turn
                    position = turn.position
                    away = (position.occupied & ~game.occupied
                            & position.board.occupied_co[position.board.turn])
                    for shape in position.moves_from(away):  # (his pieces gone: captures?)
                        if shape.captured is not None:
                            accounted |= chess.BB_SQUARES[shape.captured]
                    first = self.reading.first_lifted(turn)
                    if first is not None:
                        accounted |= infer.knocked_by_hand(turn, first)
                self.completion.apply(t, displaced.explained(
                    game.turn.board, game.occupied, "position-mismatch" in out.alerts,
                    accounted))
        if "illegal-move" in out.alerts and (self.illegal.at_once or
                                             game.occupied == game.turn.position.occupied):
            out.clear(t, "illegal-move")  # (or the position is reinstated)
        if "declared-move" in out.alerts and game.occupied == game.turn.position.occupied:
            out.clear(t, "declared-move")  # (the position is reinstated)

    def _still_displaced(self) -> bool:
        """Whether pieces found displaced are still away, though the board reads as the
        game or a move under way: those displaced before the turn, or those the open
        mismatch alert asks to put back (7.4: it clears when they are). (A piece of the
        side to move lifted before his turn began, as in blitz, is his move under way.)"""
        turn = self.game.turn
        board = turn.position.board
        away = turn.displaced & ~board.occupied_co[board.turn]
        alert = self.out.alerts.get("position-mismatch")
        if alert is not None:
            for square in alert.squares:
                away |= chess.BB_SQUARES[square]
        return bool(away and away & (self.game.occupied ^ infer.reference_occupancy(turn)))

    def _unexplained(self, t: int, stop: bool = False) -> None:
        """The board is no legal move, none on its way and no reply: the reading of the
        turn (`TurnReading`) says what it is, the cheapest first. A slid piece crossing a
        square (a move on its way; `stop`: the square held past CROSSING_HELD, it was
        not); a legal move made with pieces displaced around it (7.4: the mismatch alert
        if they stay so); the mover's pieces in hand, a move attempt judged at the press;
        or pieces displaced (the opponent's lifted out of turn, unless the mover's hand
        knocked them: `explained`)."""
        game = self.game
        turn = game.turn
        position = turn.position
        occupied = game.occupied
        debouncer = self.debouncer
        if (not stop and not self.illegal.at_once  # (casual flags any illegal placement)
                and self.reading.on_its_way(turn, occupied, debouncer.settled & ~debouncer.raw)):
            self.explained(t)  # a slid piece crossing a square, or closing the next one
            turn.crossing = t + infer.CROSSING_HELD_US
            return
        emptied = position.occupied & ~occupied
        own = position.board.occupied_co[position.board.turn]
        if emptied & own:
            verdict = self.reading.made(turn, occupied)
            made = verdict.move
            if made is not None:  # the move is made: the rest is displaced (7.4)
                turn.made = made
                # (knocked off, not touched: 4.2.2, an accident is no touch)
                turn.knocked |= emptied & ~made.vacated
                if verdict.positions_differ(position.occupied):
                    self.displaced.hold(t, occupied)  # (which pieces are displaced? later)
                    return
                self.release_mismatch(t, made.after(position.occupied))
                self.displaced.unexplained(t, 0)  # (knocked by the mover: no wrong side)
                return
        if infer.in_hand(position, occupied):
            # The mover's pieces in hand, put down or not: a move attempt, perhaps illegal,
            # judged at the clock press and not hinted at before it (12.6).
            self.explained(t)
            filled = occupied & ~position.occupied
            if filled and self.illegal.at_once and "illegal-move" not in self.out.alerts:
                self.out.raise_(t, self.illegal.placement(
                    position.board.turn, position.occupied ^ occupied))
            return
        self.release_mismatch(t, infer.reference_occupancy(turn))
        self.displaced.unexplained(t, emptied & ~own & ~turn.knocked_before)

    def crossing_over(self, when: int) -> None:
        """A square read as crossed by a slid piece is still held: it was a stop (the
        board read again where it waited for the reply to an unseen capture)."""
        turn = self.game.turn
        turn.crossing = None
        if self.game.result is None:
            if turn.waiting_reply:  # (a reply read as slid on may have stopped: made)
                self.explain(when)
                return
            self._unexplained(when, stop=True)

    def knock_over(self, when: int) -> None:
        """A piece lifted beside the mover's hand, read as knocked over by it, is away too
        long for that: the board is read again (the opponent's reply begun, perhaps)."""
        game = self.game
        game.turn.knock_excused = None
        if game.result is None and not game.clock_in_use:
            self.opponent_started(when)

    def release_mismatch(self, t: int, reference: chess.Bitboard) -> None:
        """The move the board differed around is decided: the mismatch alert held back
        while it was read two ways is judged against it (`reference`: what it leaves)."""
        if self.displaced.held is not None:
            self.completion.apply(t, self.displaced.release(
                t, reference, "position-mismatch" in self.out.alerts))

    def mismatch(self, when: int) -> None:
        reference = infer.reference_occupancy(self.game.turn)
        self.out.raise_(when, self.displaced.mismatch(reference, self.game.occupied))
