#!/usr/bin/env python3
"""A UCI engine that starts as any other and then never answers `go` (nor `stop`): a
search that never ends. Its process stays alive until it is killed."""

import sys

NAME = "HangsOnGo"

for line in sys.stdin:
    command = line.split()
    if not command:
        continue
    if command[0] == "uci":
        print(f"id name {NAME}\nid author tests\nuciok", flush=True)
    elif command[0] == "isready":
        print("readyok", flush=True)
    elif command[0] == "quit":
        break
    # go, stop, position, ucinewgame, setoption: nothing (stop included: it is stuck)
# stdin closed or quit: stuck all the same, as a hung engine would be
while True:
    sys.stdin.read(1) or __import__("time").sleep(3600)
