"""Does publishing to the hall's broker slow the LEDs? bench/bench_service.py's latency
measurement (a clock press written on a real pty -> the LED frame showing the other side
to move, read back; `board-ctl run` in its own process), run alternately without and
with `--mqtt` (a real Mosquitto with the project's config, a subscriber reading every
board topic), so both see the same load on a shared machine.

    nice python bench/bench_hall_leds.py [--rounds 3] [--games 4]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

spec = importlib.util.spec_from_file_location("bench_service", ROOT / "bench" / "bench_service.py")
assert spec is not None and spec.loader is not None
bench_service = importlib.util.module_from_spec(spec)
sys.modules["bench_service"] = bench_service  # its dataclasses look their module up
spec.loader.exec_module(bench_service)


def start_with(extra: list[str]):  # type: ignore[no-untyped-def]
    """bench_service's start_service, with `extra` options for `board-ctl run`."""

    def start(code: bench_service.Code, port: Path, workdir: Path, data: Path,
              view: str = "none") -> subprocess.Popen[bytes]:
        config = workdir / "bench.toml"
        config.write_text("[serial]\nconnect_timeout = 10.0\n", encoding="utf-8")
        return subprocess.Popen(
            [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
             str(port), "--view", view, "--pgn", str(workdir / "bench.pgn"),
             "--data-dir", str(data), *extra],
            cwd=workdir, env=code.env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="pairs of runs (without, with)")
    parser.add_argument("--games", type=int, default=4, help="games a run")
    args = parser.parse_args()
    from brokerkit import Broker, Station

    work = Path(tempfile.mkdtemp(prefix="bench-hall-leds-"))
    broker = Broker(work / "broker", {"arbiter": "arb", "b1": "b1-pw"}).start()
    station = Station(broker)
    config = ["--mqtt", f"mqtt://b1:b1-pw@127.0.0.1:{broker.port}", "--board-id", "b1"]
    samples: dict[str, list[float]] = {"without --mqtt": [], "with --mqtt": []}
    code = bench_service.Code("this", ROOT)
    try:
        for n in range(args.rounds):
            for name, extra in (("without --mqtt", []), ("with --mqtt", config)):
                workdir = work / f"{n}-{len(extra)}"
                workdir.mkdir()
                bench_service.start_service = start_with(extra)
                samples[name] += bench_service.bench_latency(
                    code, workdir, bench_service.fresh_data_dir(workdir), args.games)
        published = len(station.on("b1/move"))
    finally:
        station.close()
        broker.stop()
    pct = bench_service.percentile
    for name, values in samples.items():
        print(f"{name:15}: clock press -> LED frame p50 {pct(values, 50):.2f} ms, "
              f"p99 {pct(values, 99):.2f} ms, max {max(values):.2f} ms ({len(values)} presses)")
    a, b = samples["without --mqtt"], samples["with --mqtt"]
    print(f"with / without: p50 x{pct(b, 50) / pct(a, 50):.2f}, p99 x{pct(b, 99) / pct(a, 99):.2f}"
          f"; moves published meanwhile: {published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
