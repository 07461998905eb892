"""The hall at scale: N boards (default 100) in one process, each the real service and
publisher (board_ctl.hall.replayhall) replaying a real game rendered by board_ctl.simulate
from tests/data/games (one board in four with a scripted rule violation, so alerts are
raised and cleared), into a real Mosquitto (Debian's, the project's config and ACL), and
the arbiter station in another process: its `Station` and `Hall` model fed by its real
MQTT link (user `arbiter`, a persistent session) and its web app served by uvicorn, with
a spectator's page following the live feed (/events), as `board-ctl arbiter` runs them.

    nice python bench/bench_hall.py [--boards 100] [--speed 20] [--cut 60]
                                   [--subscriber station|paho]

Mid-round the broker is killed (-9) and restarted; with --cut S one board is cut from
the broker for S seconds (a TCP relay dropped). Printed: moves delivered to the station
(%) and whether every game it shows is the board's, move for move (none twice, none
missing, in order); the alerts it shows against the boards' (the same, none twice);
the latency from a move's publication to the station's state having it (p50, p99, max;
all moves, and those published away from the faults); the station's CPU (its process's
CPU time over the round's wall time); the publishers' CPU (their threads) and the whole
boards' process's. The journals go to /dev/shm unless --data: on a board each journal
has its own SD card; here a hundred fsyncs would measure the disk, not the code.
`--subscriber paho` puts a bare paho client in the station's place (moves only).
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

FAULT_MARGIN = 5.0  # s after a fault ends during which a move counts as published near it
VIOLATIONS = ("illegal-move", "position-mismatch", "touch-move", "move-changed")


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


# ---------------------------------------------------------------- the subscribers


def station_runner(args: argparse.Namespace) -> int:
    """The arbiter station in this process, as `board-ctl arbiter` runs it (its Station,
    its MQTT link, its web app under uvicorn), timing each move from its publication to
    the moment the station's model has it. Commands on stdin, answers (JSON) on stdout:
    `count` (moves the station has), `mark` (start the CPU figure), `report`."""
    import asyncio
    import logging

    import uvicorn

    logging.basicConfig(level=logging.ERROR, format="station: %(message)s")
    from board_ctl.station.link import BrokerAddress, StationLink
    from board_ctl.station.station import Station
    from board_ctl.station.web import build_app, load_secret

    data = Path(args.station_dir)
    data.mkdir(parents=True, exist_ok=True)
    link: StationLink | None = None

    def publish(topic: str, payload: str) -> None:
        assert link is not None
        link.publish(topic, payload)

    station = Station(data, publish, event="Bench")
    arrivals: dict[str, list[int]] = {}
    latency: list[tuple[str, int, int]] = []  # (board, published ms, ms until it had it)
    receive = station.receive

    def timed(topic: str, payload: bytes) -> Any:
        change = receive(topic, payload)
        if change is not None and change.kind == "move":
            now = wall_ms()
            move = json.loads(payload)
            arrivals.setdefault(f"{move['board']} {move['game']}", []).append(move["ply"])
            latency.append((move["board"], move["time"], now - move["time"]))
        return change

    station.receive = timed  # type: ignore[method-assign]  # (the loop calls it by name)
    connects = [0]

    def on_connection(connected: bool, reason: str) -> None:
        connects[0] += connected
        station.connection(connected, reason)

    address = BrokerAddress("127.0.0.1", args.port, False, "arbiter", args.password)
    link = StationLink(address, station.deliver, on_connection, client_id="bench-station")
    started = threading.Event()

    def on_start(loop: asyncio.AbstractEventLoop) -> None:
        assert link is not None
        link.start()
        started.set()

    app = build_app(station, {}, load_secret(data / "session.key"), on_start=on_start,
                    on_stop=link.stop)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.http_port,
                                           log_level="warning"))
    mark = [time.process_time(), time.perf_counter()]

    def answer(word: str) -> Any:  # on the station's loop
        if word == "count":
            return sum(len(g.known_moves()) for b in station.hall.boards.values()
                       for g in b.games.values())
        if word == "mark":
            mark[:] = [time.process_time(), time.perf_counter()]
            return "marked"
        if word == "cpu":
            return [time.process_time() - mark[0], time.perf_counter() - mark[1]]
        shown = {f"{b.board} {g.game}": {
            "moves": [m.uci for m in g.known_moves()],
            "alerts": [[a.code, a.t_ms, a.cleared_ms is not None] for a in g.alerts]}
            for b in station.hall.boards.values() for g in b.games.values()}
        return {"first": arrivals, "latency": latency, "dropped": station.hall.duplicates,
                "rejected": station.hall.rejected, "connects": connects[0], "shown": shown,
                "cpu": time.process_time() - mark[0], "wall": time.perf_counter() - mark[1]}

    def commands() -> None:
        started.wait()
        assert station.loop is not None
        print("ready", flush=True)
        for line in sys.stdin:
            async def run(word: str = line.strip()) -> Any:
                return answer(word)
            reply = asyncio.run_coroutine_threadsafe(run(), station.loop).result()
            print(json.dumps(reply), flush=True)
        server.should_exit = True

    threading.Thread(target=commands, daemon=True).start()
    server.run()
    station.close()
    return 0


def paho_subscriber(args: argparse.Namespace) -> int:
    """A bare paho client in the station's place: every move, deduplicated by (board,
    game, ply); the same protocol on stdin and stdout (moves only)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    lock = threading.Lock()
    first: dict[str, list[int]] = {}  # "board game" -> plies in arrival order
    moves: dict[str, dict[int, str]] = {}
    latency: list[tuple[str, int, int]] = []
    dropped = 0
    connects = 0
    mark = [time.process_time(), time.perf_counter()]

    def on_connect(client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        nonlocal connects
        if not reason.is_failure:
            connects += 1
            client.subscribe("board-ctl/+/move", qos=1)

    def on_message(client: Any, userdata: Any, message: Any) -> None:
        nonlocal dropped
        now = wall_ms()
        move = json.loads(message.payload)
        key = f"{move['board']} {move['game']}"
        with lock:
            plies = first.setdefault(key, [])
            if move["ply"] in plies:
                dropped += 1
                return
            plies.append(move["ply"])
            moves.setdefault(key, {})[move["ply"]] = move["uci"]
            latency.append((move["board"], move["time"], now - move["time"]))

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
    for line in sys.stdin:
        word = line.strip()
        with lock:
            if word == "count":
                reply: Any = sum(len(p) for p in first.values())
            elif word == "mark":
                mark[:] = [time.process_time(), time.perf_counter()]
                reply = "marked"
            elif word == "cpu":
                reply = [time.process_time() - mark[0], time.perf_counter() - mark[1]]
            else:
                shown = {k: {"moves": [m[p] for p in sorted(m)], "alerts": None}
                         for k, m in moves.items()}
                reply = {"first": first, "latency": latency, "dropped": dropped,
                         "rejected": 0, "connects": connects, "shown": shown,
                         "cpu": time.process_time() - mark[0],
                         "wall": time.perf_counter() - mark[1]}
        print(json.dumps(reply), flush=True)
    client.disconnect()
    client.loop_stop()
    return 0


class Subscriber:
    """The subscriber's process, asked questions over its stdin."""

    def __init__(self, kind: str, port: int, password: str, folder: Path) -> None:
        from brokerkit import free_port

        self.http_port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--run-subscriber", kind, "--port", str(port),
             "--password", password, "--station-dir", str(folder), "--http-port",
             str(self.http_port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            raise SystemExit(f"the {kind} subscriber did not start: {line!r}")

    def ask(self, word: str) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(word + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Spectator:
    """A spectator's page left open on the station's live feed (/events): the station
    renders every change for it, as for the pages in a hall."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}/events"
        self.events = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        import httpx2 as httpx

        while not self._stop.is_set():
            try:
                with httpx.stream("GET", self.url, timeout=None) as response:
                    for line in response.iter_lines():
                        if line.startswith("data:"):
                            self.events += 1
                        if self._stop.is_set():
                            return
            except httpx.HTTPError:
                time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()


# ---------------------------------------------------------------- the round


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


def truth_of(report: list[dict[str, Any]]) -> list[list[Any]]:
    """A game's alerts as its report has them: code, time (ms), cleared later."""
    alerts: list[list[Any]] = []
    for line in report:
        if line["kind"] == "alert":
            alerts.append([line["code"], round(line["t"] * 1000), False])
        elif line["kind"] == "clear":
            for alert in reversed(alerts):
                if alert[0] == line["code"] and not alert[2]:
                    alert[2] = True
                    break
    return alerts


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(int(q * len(ordered)), len(ordered) - 1)]) if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=100)
    parser.add_argument("--speed", type=float, default=20.0, help="log seconds per second")
    parser.add_argument("--kill-at", type=float, default=0.4,
                        help="kill -9 the broker after this fraction of the round (0: never)")
    parser.add_argument("--kill-for", type=float, default=1.0, help="s the broker stays dead")
    parser.add_argument("--cut", type=float, default=0.0,
                        help="cut board 1 from the broker for this many s, mid-round")
    parser.add_argument("--subscriber", choices=("station", "paho"), default="station",
                        help="who reads the hall: the arbiter station (default) or a bare "
                             "paho client")
    parser.add_argument("--data", type=Path, help="where the journals go (default /dev/shm)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the journals and logs")
    parser.add_argument("--run-subscriber", choices=("station", "paho"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--password", help=argparse.SUPPRESS)
    parser.add_argument("--station-dir", help=argparse.SUPPRESS)
    parser.add_argument("--http-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_subscriber == "station":
        return station_runner(args)
    if args.run_subscriber == "paho":
        return paho_subscriber(args)

    import logging

    import chess.pgn

    logging.basicConfig(level=logging.ERROR)  # (a hundred "reconnecting" lines say nothing)

    from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
    from board_ctl.sensorlog import read_sensor_log
    from board_ctl.simulate import NoEligiblePly, render_game, render_violation
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
        seed = args.seed * 1000 + n
        rendered = None
        if n % 4 == 3:  # one board in four: a rule violation, its alert raised and cleared
            try:
                rendered = render_violation(game, VIOLATIONS[(n // 4) % len(VIOLATIONS)],
                                            seed=seed, style=FAST)
            except NoEligiblePly:
                rendered = None
        rendered = rendered or render_game(game, seed=seed, style=FAST)
        log = read_sensor_log(io.StringIO(rendered.jsonl()))
        url = proxy.url if proxy is not None and n == 0 else broker.url
        specs.append(HallBoardSpec(name, log.start, log.events, url, users[name]))
        log_seconds = max(log_seconds, log.events[-1].t)
    subscriber = Subscriber(args.subscriber, broker.port, users["arbiter"], root / "station")
    spectator = Spectator(subscriber.http_port) if args.subscriber == "station" else None
    round_s = log_seconds / args.speed
    print(f"{args.boards} boards, games of up to {log_seconds:.0f} s played at {args.speed:g}x "
          f"(~{round_s:.0f} s), into the {args.subscriber}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; journals in {root}", flush=True)

    hall = ReplayHall(root / "hall", specs, speed=args.speed,
                      drain=max(60.0, args.cut + 30.0))
    tids: list[int] = []
    events: list[str] = []
    # wall-clock s: (start, end, the board it cut off, or None: every board) of each fault
    faults: list[tuple[float, float, str | None]] = []

    def fault(at: float, what: str, action: Any) -> threading.Timer:
        def run() -> None:
            events.append(f"{time.perf_counter() - t0:6.1f} s: {what}")
            action()
        timer = threading.Timer(at, run)
        timer.daemon = True
        return timer

    def restart() -> None:
        start = time.time()
        broker.kill()
        time.sleep(args.kill_for)
        broker.start()
        faults.append((start, time.time(), None))

    def cut() -> None:
        assert proxy is not None
        faults.append((time.time(), time.time() + args.cut, names[0]))
        proxy.cut_off()

    timers = []
    if args.kill_at > 0:
        timers.append(fault(round_s * args.kill_at, f"broker killed (-9), back after "
                                                     f"{args.kill_for:g} s", restart))
    if proxy is not None:
        timers.append(fault(round_s * 0.25, f"board {names[0]} cut for {args.cut:g} s", cut))
        timers.append(fault(round_s * 0.25 + args.cut, f"board {names[0]} back",
                            proxy.restore))
    subscriber.ask("mark")
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    hall.start()
    for timer in timers:
        timer.start()
    hall.run()
    played = time.perf_counter() - t0
    round_cpu, round_wall = subscriber.ask("cpu")
    for board in hall.boards:
        tids += board.publisher.native_ids
    publisher_cpu = thread_cpu(tids)
    expected: dict[str, list[str]] = {}
    alerts_expected: dict[str, list[list[Any]]] = {}
    for board in hall.boards:
        session = board.service.last_session
        assert session is not None
        key = f"{board.spec.board_id} {session.game_id}"
        expected[key] = [m.move.uci() for m in session.record.moves]
        alerts_expected[key] = truth_of(session.record.report)
    total = sum(len(m) for m in expected.values())
    deadline = time.perf_counter() + max(120.0, args.cut + 60.0)
    for timer in timers:
        timer.join()
    while time.perf_counter() < deadline and subscriber.ask("count") < total:
        time.sleep(0.5)
    publisher_cpu = max(publisher_cpu, thread_cpu(tids))
    process_cpu = time.process_time() - cpu0
    summary = subscriber.ask("report")
    hall.close()
    if spectator is not None:
        spectator.stop()
    subscriber.close()
    broker.stop()
    if proxy is not None:
        proxy.close()

    shown: dict[str, dict[str, Any]] = summary["shown"]
    first: dict[str, list[int]] = summary["first"]
    delivered = sum(len(shown.get(k, {}).get("moves", [])) for k in expected)
    wrong = {k: (len(shown.get(k, {}).get("moves", [])), len(m)) for k, m in expected.items()
             if shown.get(k, {}).get("moves") != m}
    out_of_order = sum(1 for plies in first.values() if plies != sorted(plies))
    shown_twice = sum(len(p) - len(set(p)) for p in first.values())
    unknown_games = sorted(set(shown) - set(expected))
    lat = [ms for _, _, ms in summary["latency"]]

    def near_fault(board: str, published_ms: int) -> bool:
        s = published_ms / 1000
        return any(start <= s <= end + FAULT_MARGIN for start, end, cut in faults
                   if cut in (None, board))

    calm = [ms for board, published, ms in summary["latency"]
            if not near_fault(board, published)]
    for line in events:
        print(line)
    print(f"moves delivered to the {args.subscriber}: {delivered} of {total} "
          f"({100 * delivered / max(total, 1):.2f} %); games shown exactly as the boards "
          f"played them: {len(expected) - len(wrong)} of {len(expected)}"
          + (f"; wrong (shown, played): {wrong}" if wrong else ""))
    print(f"moves shown twice: {shown_twice} ({summary['dropped']} duplicates dropped); games "
          f"whose moves arrived out of order: {out_of_order}; games the boards did not play: "
          f"{len(unknown_games)}; payloads refused: {summary['rejected']}")
    alerts_ok = True
    if args.subscriber == "station":
        raised = sum(len(a) for a in alerts_expected.values())
        same = sum(1 for k, a in alerts_expected.items() if shown.get(k, {}).get("alerts") == a)
        alerts_ok = same == len(alerts_expected)
        bad = {k: (shown.get(k, {}).get("alerts"), a) for k, a in alerts_expected.items()
               if shown.get(k, {}).get("alerts") != a}
        print(f"alerts: {raised} raised on {sum(1 for a in alerts_expected.values() if a)} "
              f"boards; games whose alert history the station shows as the board had it: "
              f"{same} of {len(alerts_expected)}" + (f"; differ: {bad}" if bad else ""))
    print(f"latency publish -> {args.subscriber} state: p50 {percentile(lat, 0.5):.0f} ms, "
          f"p99 {percentile(lat, 0.99):.0f} ms, max {percentile(lat, 1.0):.0f} ms "
          f"({len(lat)} moves); published away from the faults: p50 "
          f"{percentile(calm, 0.5):.0f} ms, p99 {percentile(calm, 0.99):.0f} ms, max "
          f"{percentile(calm, 1.0):.0f} ms ({len(calm)} moves)")
    print(f"{args.subscriber} CPU: {round_cpu:.1f} s over the round's {round_wall:.1f} s "
          f"({100 * round_cpu / round_wall:.1f} % of one core); until every move was "
          f"delivered: {summary['cpu']:.1f} s over {summary['wall']:.1f} s "
          f"({100 * summary['cpu'] / summary['wall']:.1f} %); its broker "
          f"connections: {summary['connects']}"
          + (f"; live-feed updates to the open page: {spectator.events}" if spectator else ""))
    print(f"publishers' CPU: {publisher_cpu:.1f} s over {played:.1f} s "
          f"({100 * publisher_cpu / played:.1f} % of one core); the boards' whole process "
          f"(services, referees, journals, driver too): {process_cpu:.1f} s "
          f"({100 * process_cpu / played:.1f} %)")
    ok = not wrong and shown_twice == 0 and out_of_order == 0 and not unknown_games \
        and alerts_ok
    print("nothing lost" if ok else "LOST, DOUBLED OR DISORDERED")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
