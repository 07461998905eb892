"""Start-up of the command line: `import board_ctl.cli` (python -X importtime, cumulative)
and `board-ctl --help` (wall time), this checkout against a git ref, interleaved rounds.

    python bench/bench_startup.py [--against main] [--rounds 21]

The ratio is what to compare (a shared machine's absolute times move with its load).
The ref is exported with `git archive` to a temporary folder; both trees are imported
from a neutral working directory, so neither shadows the other.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_service import export_commit  # noqa: E402
HELP = "import sys; from board_ctl.cli import main; sys.argv[0] = 'board-ctl'; main(['--help'])"


def import_us(tree: Path, cwd: str) -> int:
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import board_ctl.cli"],
                          env={"PYTHONPATH": str(tree)}, cwd=cwd, capture_output=True,
                          text=True, check=True)
    line = [x for x in done.stderr.splitlines() if x.rstrip().endswith("| board_ctl.cli")][-1]
    return int(line.split("|")[1])


def help_s(tree: Path, cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", HELP], env={"PYTHONPATH": str(tree)}, cwd=cwd,
                   capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="main", help="git ref to compare with")
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ref_tree = export_commit(args.against, Path(tmp) / "ref")
        trees = {args.against: ref_tree, "this checkout": ROOT}
        imports: dict[str, list[int]] = {name: [] for name in trees}
        helps: dict[str, list[float]] = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                imports[name].append(import_us(tree, tmp))
                helps[name].append(help_s(tree, tmp))
    for name in trees:
        print(f"{name}: import board_ctl.cli min {min(imports[name]) / 1000:.1f} ms, median "
              f"{statistics.median(imports[name]) / 1000:.1f} ms; board-ctl --help min "
              f"{min(helps[name]) * 1000:.0f} ms, median {statistics.median(helps[name]) * 1000:.0f} ms")
    ref, this = args.against, "this checkout"
    print(f"ratio this/{ref}: import median "
          f"{statistics.median(imports[this]) / statistics.median(imports[ref]):.2f} (min "
          f"{min(imports[this]) / min(imports[ref]):.2f}); --help median "
          f"{statistics.median(helps[this]) / statistics.median(helps[ref]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
