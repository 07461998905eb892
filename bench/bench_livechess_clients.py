"""LiveChess clients that abuse the endpoint: many subscriptions on one connection, and
connections opened and closed by the hundred. What they cost the board.

    python bench/bench_livechess_clients.py subscriptions [--subscriptions 30000] [--moves 12]
                                            [--max-subscriptions N]
    python bench/bench_livechess_clients.py churn [--rounds 8] [--connections 500]
                                            [--max-connections N] [--collect] [--trim]
                                            [--tracemalloc]
    ... [--code DIR]   # the endpoint's code from another checkout (e.g. `git worktree add`)

The endpoint (board_ctl.livechess.endpoint) runs in this process, on its own thread, as
in `board-ctl run --livechess`; the clients run in a child process (this file with
--client), so that only the endpoint's work is measured here.

subscriptions: one client subscribes the eboardevent feed under N feed ids on one
connection (all sent at once, then every answer read), then the board shows `--moves`
moves. Measured: the endpoint thread's CPU (/proc/self/task/TID/schedstat) for the subscribes
and per move, against a baseline measured in the same run: the same with one
subscription. Each move is shown as the service shows it (a ViewState with one more
SAN), the next once a client of this process subscribed last has its feed; the client
reads its feeds until none comes for 3 s (one that reads too slowly is skipped by the
endpoint: the share of feeds it read is printed).

churn: R rounds; in each, the client opens C connections (each asks eboards and
subscribes), then closes them all. After each round: this process's resident set
(VmRSS), its open file descriptors, the Python heap as tracemalloc sees it (with
--tracemalloc: the live traced bytes, and the lines that grew most since round 1), the
objects the collector tracks (with --collect: what a gc.collect() frees), and (with --trim) the
resident set again after glibc's malloc_trim(0): what the allocator held but nobody used.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the client process


def client_subscriptions(url: str, count: int) -> None:
    """Subscribe `count` feed ids, say how many were accepted, read the feeds until
    told how many to expect (a line on stdin), then say how many came."""
    from websockets.sync.client import connect

    with connect(url, proxy=None, max_size=None, close_timeout=1, ping_interval=None) as ws:
        ws.send('{"id":1,"call":"eboards"}')
        serial = json.loads(ws.recv(timeout=120))["param"][0]["serialnr"]
        for n in range(count):
            ws.send(json.dumps({"id": 10 + n, "call": "subscribe", "param": {
                "feed": "eboardevent", "id": 100_000 + n, "param": {"serialnr": serial}}}))
        accepted = answered = firsts = 0
        while answered < count or firsts < accepted:  # an answer to each, a first feed
            message = json.loads(ws.recv(timeout=600))  # to each accepted
            if message["response"] == "call":
                accepted += 1
                answered += 1
            elif message["response"] == "error":
                answered += 1
            else:
                firsts += 1
        counts = {"feeds": 0, "last": time.monotonic()}

        def read() -> None:  # all along (a client that stops reading is closed)
            for text in ws:
                if json.loads(text)["response"] == "feed":
                    counts["feeds"] += 1
                    counts["last"] = time.monotonic()
        reader = threading.Thread(target=read, daemon=True)
        print(json.dumps({"accepted": accepted}), flush=True)
        reader.start()
        sys.stdin.readline()  # the moves have been shown
        while time.monotonic() - counts["last"] < 3:  # until none has come for 3 s (one
            time.sleep(0.1)  # that reads too slowly is skipped: not every feed comes)
        print(json.dumps({"feeds": counts["feeds"]}), flush=True)


def client_churn(url: str, connections: int, rounds: int) -> None:
    """Per round (a line on stdin starts it): open `connections`, each asking eboards and
    subscribing, then close them all; say how many were served."""
    from websockets.exceptions import InvalidStatus, WebSocketException
    from websockets.sync.client import connect

    for _ in range(rounds):
        sys.stdin.readline()
        opened, refused = [], 0
        for _ in range(connections):
            try:
                ws = connect(url, proxy=None, close_timeout=1, open_timeout=30).__enter__()
            except (InvalidStatus, WebSocketException, OSError):
                refused += 1
                continue
            ws.send('{"id":1,"call":"eboards"}')
            ws.recv(timeout=120)
            ws.send('{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":1}}')
            ws.recv(timeout=120)
            ws.recv(timeout=120)
            opened.append(ws)
        for ws in opened:
            ws.close()
        print(json.dumps({"served": len(opened), "refused": refused}), flush=True)


# ---------------------------------------------------------------- measuring


def thread_cpu(native_id: int) -> float:
    """A thread's CPU seconds, to the nanosecond (/proc/self/task/TID/schedstat: the
    time it ran on a CPU)."""
    return int(Path(f"/proc/self/task/{native_id}/schedstat").read_text().split()[0]) / 1e9


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_endpoint(max_connections: int | None = None,
                   max_subscriptions: int | None = None) -> Any:
    from board_ctl.livechess.address import Listen
    from board_ctl.livechess.endpoint import LiveChessEndpoint
    from board_ctl.sensorlog import StartInfo

    extra: dict[str, Any] = {}
    if max_connections is not None:
        extra["max_connections"] = max_connections
    if max_subscriptions is not None:
        extra["max_subscriptions"] = max_subscriptions
    endpoint = LiveChessEndpoint(Listen("127.0.0.1", 0), serialnr="1", start=StartInfo(),
                                 origins=("*",), **extra)
    endpoint.start(lambda item: None)
    native = next(t.native_id for t in threading.enumerate() if t.name == "livechess")
    assert native is not None
    return endpoint, native


def states(moves: int) -> list[Any]:
    """The ViewStates of a game's first `moves` moves, as the service shows them."""
    import chess
    import chess.pgn

    from board_ctl.service.view import ViewState

    with (ROOT / "tests" / "data" / "games" / "classics.pgn").open(encoding="utf-8") as f:
        game = chess.pgn.read_game(f)
    assert game is not None
    board = game.board()
    sans: list[str] = []
    shown = []
    for move in list(game.mainline_moves())[:moves]:
        sans.append(board.san(move))
        board.push(move)
        shown.append(ViewState("playing", 1, board.fen(), chess.STARTING_FEN, board.occupied,
                               None, moves=tuple(sans), board="bench"))
    return shown


def client(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, "--client", *args], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(process: subprocess.Popen[str], line: str | None = None) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    if line is not None:
        process.stdin.write(line + "\n")
        process.stdin.flush()
    answer = process.stdout.readline()
    if not answer:
        raise RuntimeError("the client process stopped")
    return json.loads(answer)


class Probe:
    """A client in this process that waits for each move's feed."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self.ws = connect(url, proxy=None).__enter__()
        self.ws.send('{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":1}}')
        self.ws.recv(timeout=120)
        self.ws.recv(timeout=120)

    def wait_for(self, plies: int) -> None:
        while True:
            message = json.loads(self.ws.recv(timeout=600))
            if len(message["param"].get("san") or []) >= plies:
                return

    def close(self) -> None:
        self.ws.close()


def measure_subscriptions(count: int, moves: int, env: dict[str, str],
                          cap: int | None = None) -> dict[str, float]:
    endpoint, native = start_endpoint(max_subscriptions=cap)
    try:
        shown = states(moves)
        endpoint.show(shown[0], ())
        before = thread_cpu(native)
        wall = time.perf_counter()
        process = client(["subscriptions", endpoint.url, str(count)], env)
        accepted = ask(process)["accepted"]
        subscribe_cpu = thread_cpu(native) - before
        subscribe_wall = time.perf_counter() - wall
        probe = Probe(endpoint.url)  # subscribed last: its feed is the last one sent
        before = thread_cpu(native)
        for number, state in enumerate(shown[1:], start=2):
            endpoint.show(state, ())
            probe.wait_for(number)  # one move at a time, as at a board
        got = ask(process, "shown")["feeds"]
        probe.close()
        move_cpu = (thread_cpu(native) - before) / (moves - 1)
        process.wait(30)
        return {"asked": count, "accepted": accepted, "subscribe_cpu_s": subscribe_cpu,
                "subscribe_wall_s": subscribe_wall, "cpu_per_move_ms": move_cpu * 1000,
                "delivered": got / (accepted * (moves - 1))}
    finally:
        endpoint.close()


def run_subscriptions(args: argparse.Namespace, env: dict[str, str]) -> None:
    print(f"{args.subscriptions} subscriptions asked on one connection, {args.moves} moves "
          f"(code: {env['PYTHONPATH'].split(os.pathsep)[0]})")
    baseline = measure_subscriptions(1, args.moves, env)
    many = measure_subscriptions(args.subscriptions, args.moves, env, args.max_subscriptions)
    for label, result in (("one subscription", baseline),
                          (f"{args.subscriptions} asked", many)):
        print(f"  {label:24} accepted {result['accepted']:6}  subscribing: CPU "
              f"{result['subscribe_cpu_s']:.2f} s (wall {result['subscribe_wall_s']:.2f} s)"
              f"  per move: CPU {result['cpu_per_move_ms']:.2f} ms, "
              f"{result['delivered']:.0%} of the feeds read")
    per_move = many["cpu_per_move_ms"] / baseline["cpu_per_move_ms"]
    print(f"  CPU per move, {args.subscriptions} asked / one: {per_move:.1f}x")


def run_churn(args: argparse.Namespace, env: dict[str, str]) -> None:
    import tracemalloc

    libc = ctypes.CDLL("libc.so.6") if args.trim else None
    if args.tracemalloc:
        tracemalloc.start(8)
    endpoint, _ = start_endpoint(args.max_connections)
    print(f"churn: {args.rounds} rounds of {args.connections} connections opened and closed "
          f"(code: {env['PYTHONPATH'].split(os.pathsep)[0]}"
          + (f", max_connections {args.max_connections}" if args.max_connections else "")
          + ")")
    process = client(["churn", endpoint.url, str(args.connections), str(args.rounds)], env)
    first = None
    try:
        print(f"  start    RSS {rss_mb():6.1f} MB  fds {len(os.listdir('/proc/self/fd')):4}")
        for number in range(1, args.rounds + 1):
            result = ask(process, "go")
            time.sleep(0.5)  # the closes taken by the endpoint's loop
            line = (f"  round {number}  served {result['served']:4} refused "
                    f"{result['refused']:4}  RSS {rss_mb():6.1f} MB  fds "
                    f"{len(os.listdir('/proc/self/fd')):4}  gc tracked "
                    f"{len(gc.get_objects()):7}")
            if args.collect:
                line += f"  gc.collect() freed {gc.collect():5}"
            if args.tracemalloc:
                current, peak = tracemalloc.get_traced_memory()
                line += f"  traced {current / 2**20:5.1f} MB (peak {peak / 2**20:5.1f})"
                snapshot = tracemalloc.take_snapshot()
                if first is None:
                    first = snapshot
            if libc is not None:
                libc.malloc_trim(0)
                line += f"  after malloc_trim RSS {rss_mb():6.1f} MB"
            print(line, flush=True)
        if args.tracemalloc and first is not None:
            top = tracemalloc.take_snapshot().compare_to(first, "lineno")[:5]
            print("  grown most since round 1 (tracemalloc):")
            for stat in top:
                print(f"    {stat}")
        process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
        endpoint.close()


def main() -> int:
    if sys.argv[1:2] == ["--client"]:
        kind, url, *rest = sys.argv[2:]
        if kind == "subscriptions":
            client_subscriptions(url, int(rest[0]))
        else:
            client_churn(url, int(rest[0]), int(rest[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("subscriptions", "churn"))
    parser.add_argument("--subscriptions", type=int, default=30_000)
    parser.add_argument("--moves", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=500)
    parser.add_argument("--max-connections", type=int, default=None,
                        help="the endpoint's cap (default: its own)")
    parser.add_argument("--max-subscriptions", type=int, default=None,
                        help="the endpoint's cap per connection (default: its own)")
    parser.add_argument("--trim", action="store_true", help="malloc_trim(0) after each round")
    parser.add_argument("--collect", action="store_true", help="gc.collect() after each round")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose endpoint is measured (default: this one)")
    args = parser.parse_args()
    code = str(args.code.resolve())
    sys.path.insert(0, code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([code, str(ROOT)])}
    if args.what == "subscriptions":
        run_subscriptions(args, env)
    else:
        run_churn(args, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
