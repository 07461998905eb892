"""The referee: raw board events in; moves, alerts, LED frames and the result out.

The orchestrator. It holds its parts and the game state they share (`state.py`: the
python-chess board, the turn, the result, the outbox, the press, the clock, the rules):

- `sensing.py` reads the board: each raw event through debounce and sensor health
  (`debounce.py`, `sensorhealth.py`) into the settled occupancy, then through the reading
  of the turn;
- `reading.py` explains a turn: what the settled board and the raw events show (a move
  waiting, on its way, answered by the opponent; at a press, the move made, legal or not,
  and the pieces displaced);
- `completion.py` completes moves (the press judged, the move committed, the clock
  switched) and applies what the rules (`rules/`) find;
- `remoteplay.py` plays a remote side (a computer, an online opponent).

The referee itself takes the events, fires the timers in time order (`timers.py`) and
sends the effects with their LED frames (`outbox.py`). `README.md` maps each law to its
file.

Time inside is whole microseconds (`timebase.py`); events and effects carry seconds.
"""

from __future__ import annotations

import chess

from board_ctl.core import arbiter
from board_ctl.core import events as ev
from board_ctl.core import inference as infer
from board_ctl.core.clock import ChessClock
from board_ctl.core.completion import Completion
from board_ctl.core.debounce import DEFAULT_SETTLE
from board_ctl.core.effects import Alert, Effect, GameOver
from board_ctl.core.leds import LedView
from board_ctl.core.presses import CLOCK_GRACE  # noqa: F401 (the service's figure)
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.reading import TurnReading
from board_ctl.core.remoteplay import RemotePlay
from board_ctl.core.rules import Finding
from board_ctl.core.rules.claims import Draws
from board_ctl.core.rules.endings import GAME_END_HOLD_US
from board_ctl.core.sensing import Sensing
from board_ctl.core.state import GameState
from board_ctl.core.timebase import MAX_SECONDS, US_PER_S, seconds, to_us
from board_ctl.core.timecontrol import TimeControl
from board_ctl.core.turn import Match
from board_ctl.core.timers import MAX_FIRINGS, Timer, TimerStall, fire_due  # noqa: F401


_LIFTED, _PLACED = ev.Lifted, ev.Placed  # (looked up for every event)


class Referee:
    """Feed it events with `feed`; it returns the effects they cause. Pure and synchronous.

    `Referee(fen, profile, settle, time_control, debug, remote, release_completes,
    default_time)`:
    `settle` is the debounce time in seconds; `debug` makes a timer that stalls raise
    TimerStall (tests); `remote` the side a computer plays (its moves arrive as
    `OpponentMoved`); `release_completes`: without a clock a move released completes it
    (implied by `remote`; an online opponent's game through the LiveChess endpoint);
    `default_time`: seconds by which the side to move at the start must have come.
    """

    def __init__(self, fen: str = chess.STARTING_FEN, profile: Profile = PROFILES["fide"],
                 settle: float = DEFAULT_SETTLE, time_control: TimeControl | None = None,
                 debug: bool = False, remote: chess.Color | None = None,
                 release_completes: bool = False, default_time: float | None = None) -> None:
        game = self.game = GameState(fen, profile, settle, time_control, debug, remote,
                                     release_completes, default_time)
        self.reading = TurnReading()
        self.sensing = Sensing(game, self.reading)
        self.completion = Completion(game, self.reading, self.sensing)
        self.remote_play = RemotePlay(game, self.sensing, self.completion)
        self.sensing.wire(self.completion, self.remote_play)
        # (the shared objects it uses, never replaced)
        self.board, self.out, self.press, self.debouncer = (game.board, game.out, game.press,
                                                            game.debouncer)
        self.game_clock, self.displaced, self.remote = (game.game_clock, game.displaced,
                                                        game.remote)
        self.illegal, self.endings, self.draws = game.illegal, game.endings, game.draws
        self.lateness = game.lateness
        self.remote_on, self.debug = game.remote_on, game.debug
        self.firings = 0  # timers fired so far (the property tests bound it per event)

    # ------------------------------------------------------------------ public API

    def feed(self, event: ev.Event) -> list[Effect]:
        """The effects of one event. Its time is taken in whole microseconds; one the core
        cannot represent raises TimeRangeError (a ValueError) before anything changes."""
        seconds_ = event.t
        # (to_us, its common case inline: a float of seconds in range, NaN not)
        t = (round(seconds_ * US_PER_S) if type(seconds_) is float
             and abs(seconds_) <= MAX_SECONDS else to_us(seconds_))
        game = self.game
        if t < game.now:
            t = game.now  # (time never runs back inside the core)
        out = self.out
        if out.dirty:  # (only before the first feed: the opening frame at t = 0)
            self._frame()
        deadline = self.debouncer.deadline
        if deadline is not None and deadline <= t or not self._only_debounce_armed(t):
            self._advance(t)
        elif t > game.now:  # (nothing due: _advance's common case, without the call)
            game.now = t
        kind = type(event)
        if game.result is None:
            if kind is _LIFTED or kind is _PLACED:  # nine events in ten
                self.sensing.sensor(t, event.square, kind is _PLACED)  # type: ignore[union-attr]
            else:
                self._handle(event, t)
        elif kind in ev.ARBITER_EVENTS:  # a result corrected
            self._handle(event, t)
        elif (kind is _LIFTED or kind is _PLACED) and game.moved_on is not None:
            # (settled as before the end: the piece that ended the game, moved on?)
            self.debouncer.toggle(t, event.square, kind is _PLACED)  # type: ignore[union-attr]
        if not out.effects and not out.dirty:
            return []  # (nothing new: no frame, nothing to drain)
        self._frame()
        return out.drain()

    def finish(self, t: float | None = None) -> list[Effect]:
        """The log ended (or the service stops): a move left on the board is complete."""
        end = self.game.now if t is None else max(to_us(t), self.game.now)
        self._advance(end)
        self._run_out_own_timers()
        for change in self.debouncer.flush():
            self.sensing.settled(change)
        if self.game.result is None and self.press.decision is not None:
            self.completion.decide_press(end)
        if self.game.result is None and self.game.turn.mirror is not None:
            self.completion.close_mirror(end)  # (no evidence came: recorded, flagged)
        if self.game.result is None:
            turn = self.game.turn
            if turn.ambiguous is not None:
                self.completion.commit(turn.ambiguous.shapes, end, guess=True)
            elif turn.match is not None and self._made_by_end(turn.match):
                self.completion.complete_match(end, guess=True)
            elif (released := self._released_at_end()) is not None:
                self.completion.commit(released.shapes, released.since, guess=True)
            elif turn.match is not None:
                self._unfinished_at_end(end, turn.match)
        if self.game.turn.asking:  # (nobody left to ask: the record says it)
            self.game.turn.asking = ()
            self.out.dirty = True
        return self._drain()

    def _unfinished_at_end(self, end: int, match: Match) -> None:
        """The board at the log's end shows a move whose piece nobody saw arrive: a capture
        with its piece in a hand, the victim still there (or swept off its square unseen).
        It is not recorded (`_made_by_end`), and the record says so (`move-unfinished`:
        the piece's square and the squares it may have taken on), so that it never ends
        a move short in silence. Not while an alert already shows what to put back."""
        if self.out.restoring:
            return
        shapes = infer.distinct(match.shapes)
        origin = shapes[0].move.from_square
        squares = tuple(sorted({origin, *(s.move.to_square for s in shapes)}))
        board = self.board
        readings = " or ".join(board.san(s.move) for s in shapes)
        self.out.raise_(end, Finding(
            "move-unfinished", board.turn, squares,
            f"the log ended with the piece from {chess.square_name(origin)} in hand: the "
            f"board shows {readings} made, its piece never seen landing; not recorded"))

    def _released_at_end(self) -> Match | None:
        """The move released (FIDE 4.7: it stood on its square, its piece seen arriving)
        whose piece is in a hand at the log's end: the opponent taking it off for his
        capture, or its mover holding it again (the board may then look like a capture
        in hand). It was made; without a clock nothing else completes it. Not when a piece
        stands where the move left none (put back on its square: no move)."""
        turn = self.game.turn
        if not turn.released:
            return None
        released = turn.released[-1]
        after = released.shapes[0].after(turn.position.occupied)
        occupied = self.game.occupied
        if occupied & ~after or occupied == turn.position.occupied:
            return None
        return released

    def _made_by_end(self, match: Match) -> bool:
        """Whether the move the board shows at the log's end was made. A capturing piece
        still in hand leaves the board as its capture would (the victim still there), so
        only a piece seen arriving makes it, or a capture that ends the game: a push-off
        capture (the victim swept off as the piece lands: no event on its square) is
        the last move of a game won by it, and no press or reply completes it."""
        return infer.placed(self.game.turn, match) or self.completion.ends_game(match.shapes)

    @property
    def result(self) -> GameOver | None:
        """How the game ended (None while it goes on)."""
        return self.game.result

    @property
    def occupied(self) -> chess.Bitboard:
        """The settled readings (faulty sensors read as the game needs)."""
        return self.game.occupied

    @property
    def now(self) -> float:
        """The latest time the referee has seen, in seconds."""
        return seconds(self.game.now)

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
        turn, remote = self.game.turn, self.remote
        shown, promotion = remote.status(self.board, self.game.result is not None)
        return LedView(board=self.board, occupied=self.game.occupied,
                       expected=turn.position.occupied, alerts=tuple(self.out.alerts.values()),
                       candidates=tuple(s.move.to_square for s in turn.ambiguous.shapes)
                       if turn.ambiguous else turn.asking,
                       must_move=turn.must_move, faulty=self.game.faulty,
                       result=self.game.result,
                       shown=remote.lights(self.board), remote=shown, promotion=promotion,
                       restoring=self.remote_on and remote.busy(self.board)
                       and self.game.occupied != turn.position.occupied)

    # ------------------------------------------------------------------ timers

    def _timers(self) -> list[Timer]:
        """Every armed timer: (deadline in us, what fires then). (A timer added here is
        also one `_only_debounce_armed` must know of.)"""
        due: list[Timer] = []
        deadline = self.debouncer.next_deadline()
        if deadline is not None:
            due.append((deadline, self._settle_due))
        if self.game.result is None:
            decision = self.press.decision
            if decision is not None:
                due.append((decision, self.completion.decide_press))
            turn = self.game.turn
            mismatch = self.displaced.deadline("position-mismatch" in self.out.alerts)
            if mismatch is not None and turn.mirror is None:  # (held: judged once decided)
                settling = self.debouncer.deadline
                if settling is not None and settling > mismatch:
                    # A change made before the deadline is still settling (a piece put
                    # back just in time): judged once it has, at most one settle later.
                    mismatch = min(settling, mismatch + self.debouncer.settle)
                due.append((mismatch, self.sensing.mismatch))
            match = turn.match
            if match is not None and decision is None and match.ends_game is not False:
                due.append((match.since + GAME_END_HOLD_US, self.completion.end_by_placement))
            if turn.crossing is not None:
                due.append((turn.crossing, self.sensing.crossing_over))
            if turn.knock_excused is not None:
                due.append((turn.knock_excused, self.sensing.knock_over))
            flag = self.game_clock.flag_deadline() if decision is None else None
            if flag is not None:  # (a press under judgement stopped the clock)
                due.append((flag, self.completion.flag))
            late = self.lateness.deadline
            if late is not None:
                due.append((late, self.completion.late))
            if self.remote_on:
                due += self.remote_play.due()
        return due

    def _advance(self, t: int) -> None:
        """Fire, in time order, every timer due by t (us, compared exactly)."""
        debouncer = self.debouncer
        while self._only_debounce_armed(t):  # the common case, made cheap
            deadline = debouncer.deadline
            if deadline is None or deadline > t:
                if t > self.game.now:
                    self.game.now = t
                return
            self.firings += 1
            if deadline > self.game.now:  # (self._at)
                self.game.now = deadline
            for change in debouncer.advance(deadline):  # (and look again: it may arm
                self.sensing.settled(change)  # another timer)
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
        if t > self.game.now:
            self.game.now = t

    def _only_debounce_armed(self, t: int) -> bool:
        """No timer but debounce's can be due by t."""
        if self.press.decision is not None or self.displaced.since is not None:
            return False
        if self.remote_on and self.remote_play.due():
            return False
        if self.game.result is not None:
            return True
        late = self.lateness.deadline
        if late is not None and late <= t:
            return False
        turn = self.game.turn
        if turn.crossing is not None and turn.crossing <= t:
            return False  # (a square read as crossed, held past the crossing)
        if turn.knock_excused is not None and turn.knock_excused <= t:
            return False  # (a piece read as knocked over, away too long for that)
        match = turn.match
        if (match is not None and match.ends_game is not False
                and match.since + GAME_END_HOLD_US <= t):
            if match.ends_game is not None or not self.completion.goes_on(match):
                return False  # (a mating or drawing placement's hold is up)
            match.ends_game = False  # (the move surely leaves a game going on: no hold)
        if not self.game_clock.lever.timed:
            return True  # (no flag can fall)
        flag = self.game_clock.flag_deadline()
        return flag is None or flag > t

    def _at(self, when: int) -> None:
        self.game.now = max(self.game.now, when)

    def _run_out_own_timers(self) -> None:
        """At the log's end, what the board does by itself within seconds, at the time it
        does it, as the live service's ticks do: pending changes settle, a press waiting
        for its piece is judged, a mating or drawing placement ends the game. Not the
        timers that wait on the players (a flag, a mismatch): how long the board was left
        after its last event, the log does not say."""
        def next_own() -> int | None:
            completion = self.completion
            own = (self._settle_due, completion.decide_press, completion.end_by_placement)
            due = [when for when, fire in self._timers() if fire in own]
            return min(due, default=None)

        when = next_own()
        while when is not None and self.game.result is None:
            self._advance(when)
            after = next_own()
            if after is not None and after <= when:
                return  # nothing fired (a stalled timer): no progress to make
            when = after

    def _settle_due(self, when: int) -> None:
        for change in self.debouncer.advance(when):
            self.sensing.settled(change)

    # ------------------------------------------------------------------ events

    def _handle(self, event: ev.Event, t: int) -> None:
        """Every event but a sensor's (`feed` takes those, nine in ten, directly); `t`: the
        event's time in us (its own `t` is seconds)."""
        match event:
            case ev.ClockPressed(_, side, times):
                self.completion.pressed(t, side, times)
            case ev.PromotionChosen(_, piece):
                self.game.turn.selections.append((t, piece))
                match = self.game.turn.match
                if (self.press.decision is not None and match is not None and match.promoting
                        and infer.placed(self.game.turn, match)):
                    self.completion.decide_press(t)  # the press waited for this choice
            case ev.Snapshot(_, occupied):
                self.sensing.snapshot(t, occupied)
                self.game_clock.reconnected()
            case ev.Resigned(_, side):
                self.completion.complete_for(side, t, ending=True)
                if self.game.result is None:
                    self.completion.game_over(t, self.endings.win_for(self.board, not side),
                                              "resignation")
            case ev.DrawOffered(_, side):
                self.completion.complete_for(side, t)
                with_move = side == self.board.turn and self.game.turn.match is not None
                self.completion.apply(t, self.draws.offered(side, t, with_move, self.board.turn))
            case ev.DrawAccepted(_, side):
                if self.draws.can_accept(side):
                    # (the offerer's move stands)
                    self.completion.complete_for(side, t, ending=True)
                    refused = self.draws.agreement_refused(self.board)
                    if refused is not None:
                        self.out.note(t, refused)
                    else:
                        self.completion.complete_for(side, t)
                        self.completion.game_over(t, "1/2-1/2", "agreement")
            case ev.DrawClaimed(_, side):
                self.completion.claim(t, side)
            case ev.OpponentMoved(_, move):
                self.remote_play.opponent_moved(t, move)
            case ev.HintAsked():
                self.remote_play.hint_asked()
            case ev.HintGiven(_, move):
                self.remote_play.hint_given(move)
            case ev.TakebackAsked():
                self.remote_play.takeback(t)
            case ev.ArbiterResult():
                arbiter.decide(self, event, t)
            case ev.ClocksSet():
                arbiter.set_clocks(self, event, t)
            case ev.TagsSet():
                self.out.add(arbiter.tags_changed(event, t))

    # ------------------------------------------------------------------ effects

    def _frame(self, _when: int | None = None) -> None:
        """A LED frame at `now` if what the LEDs show changed since the last one."""
        out = self.out
        if not out.unframed:
            return  # nothing new since the last frame: the common case, made cheap
        game, board, remote_on = self.game, self.board, self.remote_on
        turn, result, faulty = game.turn, game.result, game.faulty
        ambiguous, must_move, asking = turn.ambiguous, turn.must_move, turn.asking
        if (result is None and ambiguous is None and must_move is None and not faulty
                and not remote_on and not out.alerts and not asking):
            out.quiet_frame(game.now, board.turn)  # (what led_view lights: nothing)
            return
        state = (len(board.move_stack), result, ambiguous is not None and ambiguous.key,
                 must_move, faulty, remote_on and self.remote.signature(board, game.occupied),
                 asking)
        out.frame(game.now, state, (game.occupied, turn.position.occupied), self.led_view)

    def _drain(self) -> list[Effect]:
        if self.out.unframed:  # (the common case, nothing new, without a call)
            self._frame()
        return self.out.drain()
