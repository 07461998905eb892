"""The board as chess programs know e-boards: the DGT board protocol (`board-ctl run
--dgt PORT`) and Millennium ChessLink (`--chesslink PORT`) on a serial port, a USB
gadget, Bluetooth serial or a pseudo-terminal.

Like the LiveChess endpoint and the hall's publisher, the ports are consumers of the
service's states (the game's position, the settled occupancy, the clock), each in a
thread of its own; an app's LED commands come back to the service as commands on its
queue, and the referee's alerts keep priority over them.

- `position`: which piece an app is told stands on each square (pure);
- `dgt`, `chesslink`: the two wire protocols, bytes in and messages out (pure);
- `dgtsession`, `chesslinksession`: what each board answers, its modes and registers
  (pure);
- `lights`: an app's LED commands as square lights (pure);
- `transport`: the port itself (pyserial, or a pty whose path a symlink keeps);
- `port`: one port's thread; `ports`: the service's observer over them all.
"""
