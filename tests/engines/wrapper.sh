#!/bin/sh
# An engine started through a shell script that does not `exec` it: the engine is the
# script's child, in the same process group. Ending only the script would leave it.
python3 "$(dirname "$0")/hangs_on_go.py"
