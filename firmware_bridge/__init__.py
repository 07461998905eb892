"""The link between the host and the board's microcontroller: the wire protocol (a pure
codec shared with the MicroPython firmware), the host-side link, the firmware itself and
an emulator of the board on a pseudo-terminal."""
