#!/usr/bin/env python3
"""A program that answers anything with garbage: bytes that are not UTF-8, a line
longer than any buffer, control characters, never `uciok`. With GARBAGE_EXIT=1 it exits
after its first answer (a crash while starting), else it goes on."""

import os
import sys

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(b"\xff\xfe\x00garbage \x1b[31m" + os.urandom(64).replace(b"\n", b"") + b"\n")
    out.write(b"id name " + b"x" * 70_000 + b"\n")
    out.write(b"option name \xc3\x28 type spin\nbestmove e2e4\nreadyok\n")
    out.flush()
    if os.environ.get("GARBAGE_EXIT") == "1":
        sys.exit(3)
