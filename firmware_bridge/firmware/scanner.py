"""Scan the 8x8 reed-switch matrix (one diode per switch) and debounce each square.

Rows are open-drain outputs: value(0) selects a row by pulling it low, value(1) lets it
float. Columns are inputs with pull-ups: a closed switch on the selected row pulls its
column low through its diode. The diodes keep current from flowing backwards through
other closed switches, so three closed corners of a rectangle never make the fourth
read closed (no ghosting), even with 32 pieces on the board.

Row r is rank r+1 and column c is file a+c, so square = 8*r + c (python-chess numbers).
Rows after the eighth are key rows (buttons); their raw bits land in ``keys`` and are
debounced by inputs.py.

MicroPython and CPython alike (tests run it over fake pins): no allocation per scan
beyond the change list, small ints only (a 64-bit int would be a heap object on the Pico).
"""


class Scanner:
    def __init__(self, rows, cols, sleep_us, settle_us=30, debounce=3):
        if len(rows) < 8 or len(cols) != 8:
            raise ValueError("need 8 square rows (plus key rows) and 8 columns")
        self.rows = rows
        self.cols = cols
        self.sleep_us = sleep_us
        self.settle_us = settle_us  # lets the column lines charge through the pull-ups
        self.debounce = max(1, debounce)  # consecutive identical scans to accept a change
        self.stable = bytearray(8)  # debounced occupancy: byte per rank, bit per file
        self.keys = bytearray(len(rows) - 8)  # raw bits of the key rows
        self._pending = bytearray(8)  # squares whose raw value differs from stable
        self._count = bytearray(64)
        self._since = [0] * 64  # ms of the first scan that saw the new value
        self.primed = False
        for pin in rows:
            pin.value(1)

    def read_row(self, r):
        """Bits of the closed switches on row r (bit c = column c)."""
        pin = self.rows[r]
        pin.value(0)
        self.sleep_us(self.settle_us)
        bits = 0
        cols = self.cols
        for c in range(8):
            if not cols[c].value():
                bits |= 1 << c
        pin.value(1)
        return bits

    def scan(self, ms):
        """One full scan at board time ms: the debounced changes as (square, occupied, ms)."""
        changes = []
        for k in range(len(self.keys)):
            self.keys[k] = self.read_row(8 + k)
        for r in range(8):
            raw = self.read_row(r)
            if not self.primed:
                self.stable[r] = raw  # the first scan is the state, not a change
                continue
            check = (raw ^ self.stable[r]) | self._pending[r]
            if not check:
                continue
            for c in range(8):
                bit = 1 << c
                if not check & bit:
                    continue
                sq = r * 8 + c
                if (raw ^ self.stable[r]) & bit == 0:  # bounced back: forget the streak
                    self._count[sq] = 0
                    self._pending[r] &= ~bit
                    continue
                if self._count[sq] == 0:
                    self._since[sq] = ms
                    self._pending[r] |= bit
                self._count[sq] += 1
                if self._count[sq] >= self.debounce:
                    self.stable[r] ^= bit
                    self._count[sq] = 0
                    self._pending[r] &= ~bit
                    changes.append((sq, bool(raw & bit), self._since[sq]))
        self.primed = True
        return changes

    def occupancy(self):
        """The debounced board as a 64-bit bitboard (bit n = square n)."""
        return int.from_bytes(bytes(self.stable), "little")
