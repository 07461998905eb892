"""The game state the referee owns, shared by its parts (`referee.py`: events, timers and
effects; `sensing.py`: reading the board; `completion.py`: completing moves at a press).

Each part is a small class over this state; what one part asks of another is declared
here, typed, so every part can be read on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import chess

from board_ctl.core.debounce import DEFAULT_SETTLE, Debouncer, SettledChange
from board_ctl.core.effects import GameOver
from board_ctl.core.gameclock import GameClock
from board_ctl.core.outbox import Outbox
from board_ctl.core.position import Position
from board_ctl.core.presses import Press
from board_ctl.core.profiles import PROFILES, Profile
from board_ctl.core.rules import Action
from board_ctl.core.rules.claims import Draws
from board_ctl.core.rules.completed import MoveChanged
from board_ctl.core.rules.displaced import Displaced
from board_ctl.core.rules.endings import Endings
from board_ctl.core.rules.illegal import IllegalMoves
from board_ctl.core.rules.lateness import Lateness
from board_ctl.core.rules.remote import RemoteState
from board_ctl.core.rules.touch import TouchMove
from board_ctl.core.sensorhealth import SensorHealth
from board_ctl.core.shapes import Shape
from board_ctl.core.timebase import us
from board_ctl.core.timecontrol import TimeControl
from board_ctl.core.turn import Turn


class GameState:
    def __init__(self, fen: str = chess.STARTING_FEN, profile: Profile = PROFILES["fide"],
                 settle: float = DEFAULT_SETTLE, time_control: TimeControl | None = None,
                 debug: bool = False, remote: chess.Color | None = None,
                 release_completes: bool = False, default_time: float | None = None) -> None:
        self.profile = profile
        # A side played from elsewhere (a computer, rules/remote.py): its moves arrive as
        # events and the person makes them on the board. `release_completes`: the
        # players' opponent is not at the board (an online game through the LiveChess
        # endpoint, where one person makes both sides' moves), so without a clock a move
        # released is complete, as against a computer: nobody can begin the reply on the
        # board before the move was seen. `_remote_on` (either) is checked on every
        # event: a plain bool.
        self.remote = RemoteState(side=remote)
        self._remote_on = remote is not None or release_completes
        self.debug = debug  # a timer that stalls raises TimerStall instead of being left out
        self.firings = 0  # timers fired so far (the property tests bound it per event)
        self.board = chess.Board(fen)
        self.start_fen = self.board.fen()
        self.game_clock = GameClock(time_control, self.board.turn)
        self.debouncer = Debouncer(self.board.occupied, us(settle))
        self.health = SensorHealth(self.debouncer.settle)
        self.sensed = self.board.occupied  # settled sensor readings
        self.occupied = self.sensed  # the readings, faulty sensors read as the game needs
        self.faulty: chess.Bitboard = 0  # sensors found chattering or stuck: not believed
        self.turn = Turn(Position(self.board), 0)
        self.result: GameOver | None = None
        self.out = Outbox()
        self.touch_move = TouchMove(profile.touch_move, enemy_pieces=remote is None)
        self.move_changed = MoveChanged(profile.move_changed)
        self.illegal = IllegalMoves(profile, against_computer=remote is not None)
        self.displaced = Displaced(remote)
        self.draws = Draws.for_profile(profile)
        self.lateness = Lateness(default_time)  # the side to move at the start late (10.15)
        self.endings = Endings(profile.auto_claimable_draws)
        self._now = 0  # us: the latest time seen; an earlier event is taken as happening now
        # A scan after a reconnection that nothing explains: moves were made unseen. What
        # follows is no player's fault until the board and the game agree again.
        self._after_outage = False
        self._from_scan = False  # the last move was taken from a scan, not seen made
        self.press = Press()  # the press completing the move, and when it is judged
        self._changing: chess.Square | None = None  # the square whose change is settling
        # A clock (a time control, or presses seen): presses, not the opponent, complete moves.
        self._clock_in_use = time_control is not None

    if TYPE_CHECKING:  # what the parts ask of each other
        def _settled(self, change: SettledChange) -> None: ...  # sensing
        def _read(self, deciding: bool = False) -> chess.Bitboard: ...
        def _explain(self, t: int) -> None: ...
        def _opponent_started(self, t: int) -> bool: ...
        def _sensor_fault(self, t: int, square: chess.Square, why: str) -> None: ...
        def _mismatch(self, when: int) -> None: ...
        def _decide_press(self, when: int) -> None: ...  # completion
        def _late(self, when: int) -> None: ...
        def _complete_match(self, t: int, guess: bool = False) -> None: ...
        def _commit(self, shapes: list[Shape], t: int, guess: bool = False) -> None: ...
        def _push(self, shape: Shape, t: int) -> None: ...
        def _resolve_ambiguity_by_touch(self, square: chess.Square) -> None: ...
        def _apply(self, t: int, actions: list[Action]) -> None: ...  # referee
        def _game_over(self, t: int, result: str, termination: str) -> None: ...
        def _remote_raw(self, t: int, square: chess.Square, placed: bool) -> bool: ...
        def _remote_settled(self, t: int) -> bool: ...  # remoteplay
        def _remote_scanned(self, t: int) -> None: ...
        def _remote_wait(self, t: int) -> None: ...
        def _remote_observe(self, t: int) -> None: ...
