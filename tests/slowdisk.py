"""`python tests/slowdisk.py DELAY python -m MODULE ARGS...`: run the module as `python -m`
would, with every os.fsync and os.fdatasync held DELAY seconds before it runs, in
whichever thread calls it, as a Raspberry Pi's SD card holds them. The real call follows
the wait; nothing else changes. (Not strace's fault injection: a sandbox may forbid
ptrace.)"""

from __future__ import annotations

import os
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any


def held(call: Callable[[Any], None], delay: float) -> Callable[[Any], None]:
    def slow(fd: Any) -> None:
        time.sleep(delay)  # (releases the GIL, as a blocking fsync does)
        call(fd)
    return slow


def main() -> None:
    delay = float(sys.argv[1])
    _, flag, module, *args = sys.argv[2:]
    if flag != "-m":
        raise SystemExit("usage: slowdisk.py DELAY python -m MODULE ARGS...")
    for name in ("fsync", "fdatasync"):  # (looked up at each call by the service's code)
        setattr(os, name, held(getattr(os, name), delay))
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
