"""Debounced push inputs: the clock lever's two sides and the buttons.

Each source is (read, kind, code, side): read() is true while pressed, kind is "clock"
or "button", code a protocol BUTTON code, side a protocol side. A press is reported once,
after `debounce` consecutive polls agree, stamped with the first of them.
"""


class Inputs:
    def __init__(self, sources, debounce=3):
        self.sources = sources
        self.debounce = max(1, debounce)
        n = len(sources)
        self.state = bytearray(n)
        self._count = bytearray(n)
        self._since = [0] * n
        self.primed = False

    def poll(self, ms):
        """Presses completed by this poll: (kind, code, side, ms)."""
        presses = []
        for i in range(len(self.sources)):
            src = self.sources[i]
            now = 1 if src[0]() else 0
            if not self.primed:
                self.state[i] = now  # held at start-up: not a press
                continue
            if now == self.state[i]:
                self._count[i] = 0
                continue
            if self._count[i] == 0:
                self._since[i] = ms
            self._count[i] += 1
            if self._count[i] >= self.debounce:
                self.state[i] = now
                self._count[i] = 0
                if now:
                    presses.append((src[1], src[2], src[3], self._since[i]))
        self.primed = True
        return presses
