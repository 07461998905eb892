#!/usr/bin/env python3
"""A program that is no UCI engine: it reads its input and never answers `uci` (and
ignores `quit` and a closed pipe), as `exec sleep 300` would."""

import signal
import sys
import time

signal.signal(signal.SIGINT, signal.SIG_IGN)  # nor is a Ctrl-C its business
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL ends it
for _ in sys.stdin:
    pass
while True:
    time.sleep(3600)
