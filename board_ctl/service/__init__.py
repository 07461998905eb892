"""The service on the board: `board-ctl run`.

One queue and one loop: the board backends (serial link, the Pi's GPIO matrix, the board
emulator) only put raw events on the queue from their own threads; the loop feeds the
referee, sends the LED frames back to the board and to the Pi's status LEDs and buzzer,
records every raw event to the game's sensor log, writes the PGN and the report at the
end of a game, and keeps systemd informed.
"""

from __future__ import annotations
