"""The hall at scale: N boards (default 100) in one process, each the real service and
publisher (board_ctl.hall.replayhall) replaying a real game rendered by board_ctl.simulate
from tests/data/games, into a real Mosquitto (Debian's, the project's config and ACL) and
a station-like subscriber in another process keyed by (board, game, ply).

    nice python bench/bench_hall.py [--boards 100] [--speed 20] [--cut 60]

Mid-round the broker is killed (-9) and restarted; with --cut S one board is cut from
the broker for S seconds (a TCP relay dropped). Printed: moves delivered (%), moves
shown twice after dropping duplicates (must be 0), moves out of order (0), latency from
publish to the subscriber (p50, p99; the first delivery of each move), the publishers'
CPU (their threads) and the whole process's. The journals go to /dev/shm unless --data:
on a board each journal has its own SD card; here a hundred fsyncs would measure the
disk, not the code.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def subscriber(args: argparse.Namespace) -> int:
    """The station's side: every move, deduplicated by (board, game, ply); on stdin's end,
    a summary as JSON on stdout."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    lock = threading.Lock()
    first: dict[str, list[int]] = {}  # "board game" -> plies in arrival order
    latency: list[float] = []
    dropped = 0
    connects = 0

    def on_connect(client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        nonlocal connects
        if not reason.is_failure:
            connects += 1
            client.subscribe("board-ctl/+/move", qos=1)

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        nonlocal dropped
        now = time.time()
        move = json.loads(message.payload)
        key = f"{move['board']} {move['game']}"
        with lock:
            plies = first.setdefault(key, [])
            if move["ply"] in plies:
                dropped += 1
                return
            plies.append(move["ply"])
            latency.append(now - move["time"] / 1000)

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-station",
                         protocol=mqtt.MQTTv5)
    client.username_pw_set("arbiter", args.password)
    client.reconnect_delay_set(1, 2)
    client.on_connect, client.on_message = on_connect, on_message
    properties = Properties(PacketTypes.CONNECT)
    properties.SessionExpiryInterval = 3600
    client.connect("127.0.0.1", args.port, keepalive=5, clean_start=False,
                   properties=properties)
    client.loop_start()
    print("ready", flush=True)
    for line in sys.stdin:  # "count": how many moves so far
        with lock:
            print(sum(len(p) for p in first.values()), flush=True)
    client.disconnect()
    client.loop_stop()
    with lock:
        json.dump({"first": first, "latency": latency, "dropped": dropped,
                   "connects": connects}, sys.stdout)
    return 0


def thread_cpu(tids: list[int]) -> float:
    """CPU seconds (user + system) of this process's threads `tids` so far."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for tid in tids:
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / tick


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=100)
    parser.add_argument("--speed", type=float, default=20.0, help="log seconds per second")
    parser.add_argument("--kill-at", type=float, default=0.4,
                        help="kill -9 the broker after this fraction of the round (0: never)")
    parser.add_argument("--kill-for", type=float, default=1.0, help="s the broker stays dead")
    parser.add_argument("--cut", type=float, default=0.0,
                        help="cut board 1 from the broker for this many s, mid-round")
    parser.add_argument("--data", type=Path, help="where the journals go (default /dev/shm)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the journals and logs")
    parser.add_argument("--subscriber", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--password", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.subscriber:
        return subscriber(args)

    import logging

    import chess.pgn

    logging.basicConfig(level=logging.ERROR)  # (a hundred "reconnecting" lines say nothing)

    from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
    from board_ctl.sensorlog import read_sensor_log
    from board_ctl.simulate import render_game
    from brokerkit import Broker, CutProxy
    from servicekit import FAST, GAMES

    root = Path(tempfile.mkdtemp(prefix="bench-hall-",
                                 dir=args.data or ("/dev/shm" if Path("/dev/shm").is_dir()
                                                   else None)))
    names = [f"b{n:03d}" for n in range(1, args.boards + 1)]
    users = {"arbiter": "arbiter-pw", **{name: f"{name}-pw" for name in names}}
    with (GAMES / "stockfish-300.pgn").open(encoding="utf-8") as stream:
        games = [chess.pgn.read_game(stream) for _ in range(min(args.boards, 300))]
    specs, log_seconds = [], 0.0
    broker = Broker(root / "broker", users).start()
    proxy = CutProxy(broker.port) if args.cut else None
    for n, name in enumerate(names):
        game = games[n % len(games)]
        assert game is not None
        rendered = render_game(game, seed=args.seed * 1000 + n, style=FAST)
        log = read_sensor_log(io.StringIO(rendered.jsonl()))
        url = proxy.url if proxy is not None and n == 0 else broker.url
        specs.append(HallBoardSpec(name, log.start, log.events, url, users[name]))
        log_seconds = max(log_seconds, log.events[-1].t)
    station = subprocess.Popen(
        [sys.executable, __file__, "--subscriber", "--port", str(broker.port), "--password",
         users["arbiter"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert station.stdout is not None and station.stdin is not None
    assert station.stdout.readline().strip() == "ready"
    round_s = log_seconds / args.speed
    print(f"{args.boards} boards, games of up to {log_seconds:.0f} s played at {args.speed:g}x "
          f"(~{round_s:.0f} s); journals in {root}", flush=True)

    hall = ReplayHall(root / "hall", specs, speed=args.speed,
                      drain=max(60.0, args.cut + 30.0))
    tids: list[int] = []
    events: list[str] = []

    def fault(at: float, what: str, action: Any) -> threading.Timer:
        def run() -> None:
            events.append(f"{time.perf_counter() - t0:6.1f} s: {what}")
            action()
        timer = threading.Timer(at, run)
        timer.daemon = True
        return timer

    def restart() -> None:
        broker.kill()
        time.sleep(args.kill_for)
        broker.start()

    timers = []
    if args.kill_at > 0:
        timers.append(fault(round_s * args.kill_at, f"broker killed (-9), back after "
                                                     f"{args.kill_for:g} s", restart))
    if proxy is not None:
        timers.append(fault(round_s * 0.25, f"board {names[0]} cut for {args.cut:g} s",
                            proxy.cut_off))
        timers.append(fault(round_s * 0.25 + args.cut, f"board {names[0]} back",
                            proxy.restore))
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    hall.start()
    for timer in timers:
        timer.start()
    hall.run()
    played = time.perf_counter() - t0
    for board in hall.boards:
        tids += board.publisher.native_ids
    publisher_cpu = thread_cpu(tids)
    expected: dict[str, int] = {}
    for board in hall.boards:
        session = board.service.last_session
        assert session is not None
        expected[f"{board.spec.board_id} {session.game_id}"] = len(session.record.moves)
    total = sum(expected.values())
    deadline = time.perf_counter() + max(120.0, args.cut + 60.0)
    for timer in timers:
        timer.join()
    while time.perf_counter() < deadline:
        station.stdin.write("count\n")
        station.stdin.flush()
        if int(station.stdout.readline()) >= total:
            break
        time.sleep(0.5)
    publisher_cpu = max(publisher_cpu, thread_cpu(tids))
    process_cpu = time.process_time() - cpu0
    hall.close()
    station.stdin.close()
    summary = json.loads(station.stdout.read())
    station.wait()
    broker.stop()
    if proxy is not None:
        proxy.close()

    first: dict[str, list[int]] = summary["first"]
    delivered = sum(min(len(first.get(k, [])), n) for k, n in expected.items())
    out_of_order = sum(1 for k, plies in first.items() if plies != sorted(plies))
    shown_twice = sum(len(p) - len(set(p)) for p in first.values())
    missing = {k: n - len(first.get(k, [])) for k, n in expected.items()
               if len(first.get(k, [])) < n}
    lat = sorted(summary["latency"])

    def pct(q: float) -> float:
        return lat[min(int(q * len(lat)), len(lat) - 1)] * 1000 if lat else float("nan")

    for line in events:
        print(line)
    print(f"moves delivered: {delivered} of {total} ({100 * delivered / max(total, 1):.2f} %)"
          + (f"; missing {missing}" if missing else ""))
    print(f"moves shown twice after dropping duplicates: {shown_twice} "
          f"({summary['dropped']} duplicates dropped); games out of order: {out_of_order}")
    print(f"latency publish -> subscriber: p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, "
          f"max {pct(1.0):.1f} ms")
    print(f"publishers' CPU: {publisher_cpu:.1f} s over {played:.1f} s "
          f"({100 * publisher_cpu / played:.1f} % of one core); whole process (services, "
          f"referees, journals, driver too): {process_cpu:.1f} s "
          f"({100 * process_cpu / played:.1f} %)")
    ok = delivered == total and shown_twice == 0 and out_of_order == 0
    print("nothing lost" if ok else "LOST OR DISORDERED MOVES")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
