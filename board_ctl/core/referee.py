"""The referee: raw board events in; moves, alerts, LED frames and the result out.

The orchestrator. Each event goes through debounce and sensor health (`debounce.py`,
`sensorhealth.py`), then inference (`inference.py`: what the settled board shows, read
against the turn's record, `turn.py`), then the rules (`rules/`: touch-move, the
completed move, illegal moves, displaced pieces, draws, game ends) and the clock
(`gameclock.py`). The referee owns the game state (`state.py`: the python-chess board,
the turn, the result), fires the timers in time order (`timers.py`) and collects the
effects (`outbox.py`). Its work is in three parts, one class each: this file (events,
timers, what the rules ask, effects), `sensing.py` (reading the board) and
`completion.py` (completing moves at a press). `README.md` maps each law to its file.

Time inside is whole microseconds (`timebase.py`); events and effects carry seconds.
"""

from __future__ import annotations

import chess

from board_ctl.core import arbiter
from board_ctl.core import events as ev
from board_ctl.core import inference as infer
from board_ctl.core.clock import ChessClock
from board_ctl.core.completion import Completion
from board_ctl.core.effects import Alert, Effect, GameOver, Penalty
from board_ctl.core.leds import LedView
from board_ctl.core.presses import CLOCK_GRACE  # noqa: F401 (the service's figure)
from board_ctl.core.remoteplay import RemotePlay
from board_ctl.core.rules import Action, AddTime, Clear, End, Finding, Record
from board_ctl.core.rules.endings import GAME_END_HOLD_US
from board_ctl.core.sensing import Sensing
from board_ctl.core.timebase import MAX_SECONDS, US_PER_S, seconds, to_us
from board_ctl.core.turn import Match
from board_ctl.core.timers import MAX_FIRINGS, Timer, TimerStall, fire_due  # noqa: F401


_LIFTED, _PLACED = ev.Lifted, ev.Placed  # (looked up for every event)


class Referee(Sensing, Completion, RemotePlay):
    """Feed it events with `feed`; it returns the effects they cause. Pure and synchronous.

    `Referee(fen, profile, settle, time_control, debug, remote, release_completes,
    default_time)`:
    `settle` is the debounce time in seconds; `debug` makes a timer that stalls raise
    TimerStall (tests); `remote` the side a computer plays (its moves arrive as
    `OpponentMoved`); `release_completes`: without a clock a move released completes it
    (implied by `remote`; an online opponent's game through the LiveChess endpoint);
    `default_time`: seconds by which the side to move at the start must have come.
    """

    # ------------------------------------------------------------------ public API

    def feed(self, event: ev.Event) -> list[Effect]:
        """The effects of one event. Its time is taken in whole microseconds; one the core
        cannot represent raises TimeRangeError (a ValueError) before anything changes."""
        seconds_ = event.t
        # (to_us, its common case inline: a float of seconds in range, NaN not)
        t = (round(seconds_ * US_PER_S) if type(seconds_) is float
             and abs(seconds_) <= MAX_SECONDS else to_us(seconds_))
        if t < self._now:
            t = self._now  # (time never runs back inside the core)
        out = self.out
        if out.dirty:  # (only before the first feed: the opening frame at t = 0)
            self._frame()
        deadline = self.debouncer.deadline
        if deadline is not None and deadline <= t or not self._only_debounce_armed(t):
            self._advance(t)
        elif t > self._now:  # (nothing due: _advance's common case, without the call)
            self._now = t
        kind = type(event)
        if self.result is None:
            if kind is _LIFTED or kind is _PLACED:  # nine events in ten
                self._sensor(t, event.square, kind is _PLACED)  # type: ignore[union-attr]
            else:
                self._handle(event, t)
        elif kind in ev.ARBITER_EVENTS:  # a result corrected
            self._handle(event, t)
        if not out.effects and not out.dirty:
            return []  # (nothing new: no frame, nothing to drain)
        self._frame()
        return out.drain()

    def finish(self, t: float | None = None) -> list[Effect]:
        """The log ended (or the service stops): a move left on the board is complete."""
        end = self._now if t is None else max(to_us(t), self._now)
        self._advance(end)
        self._run_out_own_timers()
        for change in self.debouncer.flush():
            self._settled(change)
        if self.result is None and self.press.decision is not None:
            self._decide_press(end)
        if self.result is None:
            turn = self.turn
            if turn.ambiguous is not None:
                self._commit(turn.ambiguous.shapes, end, guess=True)
            elif turn.match is not None and self._made_by_end(turn.match):
                self._complete_match(end, guess=True)
            elif (released := self._released_at_end()) is not None:
                self._commit(released.shapes, released.since, guess=True)
        return self._drain()

    def _released_at_end(self) -> Match | None:
        """The move released (FIDE 4.7: it stood on its square, its piece seen arriving)
        whose piece is in a hand at the log's end: the opponent taking it off for his
        capture, or its mover holding it again (the board may then look like a capture
        in hand). It was made; without a clock nothing else completes it. Not when a piece
        stands where the move left none (put back on its square: no move)."""
        turn = self.turn
        if not turn.released:
            return None
        released = turn.released[-1]
        after = released.shapes[0].after(turn.position.occupied)
        occupied = self.occupied
        if occupied & ~after or occupied == turn.position.occupied:
            return None
        return released

    def _made_by_end(self, match: Match) -> bool:
        """Whether the move the board shows at the log's end was made. A capturing piece
        still in hand leaves the board as its capture would (the victim still there), so
        only a piece seen arriving makes it, or a capture that ends the game: a push-off
        capture (the victim swept off as the piece lands: no event on its square) is
        the last move of a game won by it, and no press or reply completes it."""
        return infer.placed(self.turn, match) or self._ends_game(match.shapes)

    @property
    def now(self) -> float:
        """The latest time the referee has seen, in seconds."""
        return seconds(self._now)

    @property
    def side_to_move(self) -> chess.Color:
        return self.board.turn

    @property
    def clock(self) -> ChessClock:
        return self.game_clock.lever

    @property
    def alerts(self) -> dict[str, Alert]:
        """The open alerts, by code."""
        return self.out.alerts

    @property
    def illegal_moves(self) -> dict[chess.Color, int]:
        return self.illegal.counts

    def led_view(self) -> LedView:
        turn, remote = self.turn, self.remote
        shown, promotion = remote.status(self.board, self.result is not None)
        return LedView(board=self.board, occupied=self.occupied,
                       expected=turn.position.occupied, alerts=tuple(self.out.alerts.values()),
                       candidates=tuple(s.move.to_square for s in turn.ambiguous.shapes)
                       if turn.ambiguous else (),
                       must_move=turn.must_move, faulty=self.faulty, result=self.result,
                       shown=remote.lights(self.board), remote=shown, promotion=promotion,
                       restoring=self._remote_on and remote.busy(self.board)
                       and self.occupied != turn.position.occupied)

    # ------------------------------------------------------------------ timers

    def _timers(self) -> list[Timer]:
        """Every armed timer: (deadline in us, what fires then). (A timer added here is
        also one `_only_debounce_armed` must know of.)"""
        due: list[Timer] = []
        deadline = self.debouncer.next_deadline()
        if deadline is not None:
            due.append((deadline, self._settle_due))
        if self.result is None:
            decision = self.press.decision
            if decision is not None:
                due.append((decision, self._decide_press))
            mismatch = self.displaced.deadline("position-mismatch" in self.out.alerts)
            if mismatch is not None:
                due.append((mismatch, self._mismatch))
            match = self.turn.match
            if match is not None and decision is None and match.ends_game is not False:
                due.append((match.since + GAME_END_HOLD_US, self._end_by_placement))
            flag = self.game_clock.flag_deadline() if decision is None else None
            if flag is not None:  # (a press under judgement stopped the clock)
                due.append((flag, self._flag))
            late = self.lateness.deadline
            if late is not None:
                due.append((late, self._late))
            if self._remote_on:
                due += self._remote_due()
        return due

    def _advance(self, t: int) -> None:
        """Fire, in time order, every timer due by t (us, compared exactly)."""
        debouncer = self.debouncer
        while self._only_debounce_armed(t):  # the common case, made cheap
            deadline = debouncer.deadline
            if deadline is None or deadline > t:
                if t > self._now:
                    self._now = t
                return
            self.firings += 1
            if deadline > self._now:  # (self._at)
                self._now = deadline
            for change in debouncer.advance(deadline):  # (and look again: it may arm
                self._settled(change)  # another timer)
            out = self.out
            if out.dirty or out.effects:  # (else nothing new to frame: no call)
                self._frame(deadline)
        # What a timer changed shows from its own time: the live service, whose ticks fire
        # it between events, and a replay, which fires it at the next event, then send the
        # same frames with the same times.
        for when, _ in self._timers():
            if when <= t:
                self.firings += fire_due(t, self._timers, self._at, self.debug,
                                         after=self._frame)
                break
        if t > self._now:
            self._now = t

    def _only_debounce_armed(self, t: int) -> bool:
        """No timer but debounce's can be due by t."""
        if self.press.decision is not None or self.displaced.since is not None:
            return False
        if self._remote_on and self._remote_due():
            return False
        if self.result is not None:
            return True
        late = self.lateness.deadline
        if late is not None and late <= t:
            return False
        match = self.turn.match
        if (match is not None and match.ends_game is not False
                and match.since + GAME_END_HOLD_US <= t):
            if match.ends_game is not None or not self._goes_on(match):
                return False  # (a mating or drawing placement's hold is up)
            match.ends_game = False  # (the move surely leaves a game going on: no hold)
        if not self.game_clock.lever.timed:
            return True  # (no flag can fall)
        flag = self.game_clock.flag_deadline()
        return flag is None or flag > t

    def _at(self, when: int) -> None:
        self._now = max(self._now, when)

    def _run_out_own_timers(self) -> None:
        """At the log's end, what the board does by itself within seconds, at the time it
        does it, as the live service's ticks do: pending changes settle, a press waiting
        for its piece is judged, a mating or drawing placement ends the game. Not the
        timers that wait on the players (a flag, a mismatch): how long the board was left
        after its last event, the log does not say."""
        def next_own() -> int | None:
            due = [when for when, fire in self._timers()
                   if fire in (self._settle_due, self._decide_press, self._end_by_placement)]
            return min(due, default=None)

        when = next_own()
        while when is not None and self.result is None:
            self._advance(when)
            after = next_own()
            if after is not None and after <= when:
                return  # nothing fired (a stalled timer): no progress to make
            when = after

    def _settle_due(self, when: int) -> None:
        for change in self.debouncer.advance(when):
            self._settled(change)

    # ------------------------------------------------------------------ events

    def _handle(self, event: ev.Event, t: int) -> None:
        """Every event but a sensor's (`feed` takes those, nine in ten, directly); `t`: the
        event's time in us (its own `t` is seconds)."""
        match event:
            case ev.ClockPressed(_, side, times):
                self._press(t, side, times)
            case ev.PromotionChosen(_, piece):
                self.turn.selections.append((t, piece))
                match = self.turn.match
                if (self.press.decision is not None and match is not None and match.promoting
                        and infer.placed(self.turn, match)):
                    self._decide_press(t)  # the press waited for this choice
            case ev.Snapshot(_, occupied):
                self._snapshot(t, occupied)
                self.game_clock.reconnected()
            case ev.Resigned(_, side):
                self._complete_for(side, t, ending=True)
                if self.result is None:
                    self._game_over(t, self.endings.win_for(self.board, not side), "resignation")
            case ev.DrawOffered(_, side):
                self._complete_for(side, t)
                with_move = side == self.board.turn and self.turn.match is not None
                self._apply(t, self.draws.offered(side, t, with_move, self.board.turn))
            case ev.DrawAccepted(_, side):
                if self.draws.can_accept(side):
                    self._complete_for(side, t, ending=True)  # the offerer's move stands
                    refused = self.draws.agreement_refused(self.board)
                    if refused is not None:
                        self.out.note(t, refused)
                    else:
                        self._complete_for(side, t)
                        self._game_over(t, "1/2-1/2", "agreement")
            case ev.DrawClaimed(_, side):
                self._claim(t, side)
            case ev.OpponentMoved(_, move):
                self._opponent_moved(t, move)
            case ev.HintAsked():
                self._hint_asked()
            case ev.HintGiven(_, move):
                self._hint_given(move)
            case ev.TakebackAsked():
                self._takeback(t)
            case ev.ArbiterResult():
                arbiter.decide(self, event, t)
            case ev.ClocksSet():
                arbiter.set_clocks(self, event, t)
            case ev.TagsSet():
                self.out.add(arbiter.tags_changed(event, t))

    # ------------------------------------------------------------------ effects

    def _apply(self, t: int, actions: list[Action]) -> None:
        """Do what the rules ask, in order."""
        for action in actions:
            match action:
                case Finding():
                    self.out.raise_(t, action)
                case Clear(code):
                    self.out.clear(t, code)
                case Record(text):
                    self.out.note(t, text)
                case AddTime(side, added, reason):  # applied to the clock (7.5.5, 9.5.3)
                    self.game_clock.add_penalty(side, added, t)
                    self.out.add(Penalty(seconds(t), side, added, reason))
                    if added < 0 and self.game_clock.out_of_time(side, t):  # (10.13 (2))
                        self._apply(t, self.endings.flag(self.board, side))
                case End(result, termination):
                    self._game_over(t, result, termination)

    def _game_over(self, t: int, result: str, termination: str) -> None:
        if self.turn.ambiguous is not None:  # a completed capture goes into the record
            self._commit(self.turn.ambiguous.shapes, t, guess=True)
            if self.result is not None:
                return
        self.result = GameOver(seconds(t), result, termination)
        self.out.clear_all(t)
        self.press.decision = None
        self.out.add(self.result)

    def _frame(self, _when: int | None = None) -> None:
        """A LED frame at `now` if what the LEDs show changed since the last one."""
        out = self.out
        if not out.unframed:
            return  # nothing new since the last frame: the common case, made cheap
        turn, board, result, remote_on = self.turn, self.board, self.result, self._remote_on
        ambiguous, must_move, faulty = turn.ambiguous, turn.must_move, self.faulty
        if (result is None and ambiguous is None and must_move is None and not faulty
                and not remote_on and not out.alerts):
            out.quiet_frame(self._now, board.turn)  # (what led_view lights: nothing)
            return
        state = (len(board.move_stack), result, ambiguous is not None and ambiguous.key,
                 must_move, faulty, remote_on and self.remote.signature(board, self.occupied))
        out.frame(self._now, state, (self.occupied, turn.position.occupied), self.led_view)

    def _drain(self) -> list[Effect]:
        if self.out.unframed:  # (the common case, nothing new, without a call)
            self._frame()
        return self.out.drain()
