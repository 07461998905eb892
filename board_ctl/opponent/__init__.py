"""Playing a computer on the board: a UCI engine in its own process, driven through
python-chess's `chess.engine`, as the remote side of the referee (`--opponent`)."""
