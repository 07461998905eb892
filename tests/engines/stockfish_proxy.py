#!/usr/bin/env python3
"""Debian's Stockfish behind a proxy that swallows `go`: the engine starts and answers as
ever, and a search never comes back. The file named by $PROXY_STALLS holds how many more
`go` commands to swallow (counted down across restarts; absent or 0: none), so a test can
make the first search hang and the restarted engine play on."""

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

stockfish = shutil.which("stockfish", path=os.environ.get("PATH", "") + ":/usr/games")
if stockfish is None:
    sys.exit("no stockfish")
engine = subprocess.Popen([stockfish], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, bufsize=1)
assert engine.stdin is not None and engine.stdout is not None
stalls = Path(os.environ["PROXY_STALLS"]) if os.environ.get("PROXY_STALLS") else None


def relay() -> None:
    for line in engine.stdout:  # type: ignore[union-attr]
        sys.stdout.write(line)
        sys.stdout.flush()


threading.Thread(target=relay, daemon=True).start()


def swallow() -> bool:
    if stalls is None or not stalls.exists():
        return False
    left = int(stalls.read_text() or "0")
    if left <= 0:
        return False
    stalls.write_text(str(left - 1))
    return True


for line in sys.stdin:
    if line.split()[:1] == ["go"] and swallow():
        continue  # the search that never ends (and `stop` will not end it: no bestmove)
    engine.stdin.write(line)
    engine.stdin.flush()
    if line.strip() == "quit":
        break
engine.wait()
