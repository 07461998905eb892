"""Copy the firmware onto a Raspberry Pi Pico running MicroPython, with mpremote.

    python -m firmware_bridge.install [--port /dev/ttyACM0] [--dry-run]

The Pico gets the host's own codec, firmware_bridge/protocol.py, as :protocol.py (the
firmware directory has no copy of its own, so the two ends cannot drift apart), then the
firmware modules, main.py last so that a half-done copy never boots. The same by hand:

    mpremote connect PORT cp firmware_bridge/protocol.py :protocol.py \\
        + cp firmware_bridge/firmware/app.py :app.py + ... + cp .../main.py :main.py + reset

The running firmware ignores Ctrl-C (a 0x03 byte is frame data), so mpremote cannot
interrupt it: hold the Pico's BOOTSEL button for a second first, and the loop returns to
the REPL. Needs `pip install mpremote`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
FIRMWARE = PACKAGE / "firmware"
MODULES = ("scanner.py", "inputs.py", "leds.py", "hal.py", "app.py", "main.py")


def files() -> list[tuple[Path, str]]:
    """(source on the host, destination on the Pico), in copy order."""
    return [(PACKAGE / "protocol.py", ":protocol.py")] + [
        (FIRMWARE / name, ":" + name) for name in MODULES]


def mpremote_command(port: str | None) -> list[str]:
    cmd = ["mpremote"] + (["connect", port] if port else [])
    for src, dst in files():
        cmd += ["cp", str(src), dst, "+"]
    return cmd + ["reset"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m firmware_bridge.install",
                                     description="Copy the board firmware onto a Pico.")
    parser.add_argument("--port", help="serial port of the Pico (default: mpremote's auto)")
    parser.add_argument("--dry-run", action="store_true", help="print the command only")
    args = parser.parse_args(argv)
    cmd = mpremote_command(args.port)
    print(" ".join(cmd))
    if args.dry_run:
        return 0
    if shutil.which("mpremote") is None:
        print("mpremote not found: pip install mpremote", file=sys.stderr)
        return 2
    print("(if it hangs: hold BOOTSEL for a second to stop the running firmware)")
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
