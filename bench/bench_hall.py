"""The hall at scale: N boards (default 100) spread over worker processes (`--workers`,
about 50 boards each: a hall's boards are each a Raspberry Pi, and one Python process
with hundreds of boards measures its own threads, not the hall), each board the real
service and publisher (board_ctl.hall.replayhall) replaying a real game rendered by
board_ctl.simulate from tests/data/games (one board in four with a scripted rule
violation, so alerts are raised and cleared), into a real Mosquitto (Debian's, the
project's config and ACL), and the arbiter station in another process: its `Station` and
`Hall` model fed by its real MQTT link (user `arbiter`, a persistent session) and its web
app served by uvicorn, with a spectator's page following the live feed (/events), as
`board-ctl arbiter` runs them.

    nice python bench/bench_hall.py [--boards 100] [--speed 20] [--workers N] [--cut 60]
                                   [--plies N] [--bridge] [--subscriber station|paho]

The boards' processes run in the idle scheduling class (SCHED_IDLE; `--no-idle`: not):
in a hall each board is a Pi of its own and the broker and the station have their
machine; here a thousand boards' threads at their priority left the broker almost no CPU.

`--plies N` plays each game's first N plies only (about 3 s a ply at real speed: a
round of 1,000 boards playing whole games runs 15 minutes and more).

Mid-round the broker is killed (-9) and restarted (`--kill-at`, `--kill-for`); with
--cut S one board is cut from the broker for S seconds (a TCP relay dropped); with
--bridge the hall has two Mosquittos bridged as docs/mqtt.md sets them up (the shipped
config and ACL, the bridge's own user): the station and half the boards on the first,
the other half on the second (`--kill-broker second` kills that one instead).

Printed: moves delivered to the station (%) and whether every game it shows is the
board's, move for move (none twice, none missing, in order); the alerts it shows against
the boards' (the same, none twice); the latency from a move's publication to the
station's state having it (p50, p99, max; all moves, and those published away from the
faults); the station's and the brokers' CPU (their processes' CPU time over the round's
wall time) and peak memory; the boards' processes' CPU (the publishers' threads, and the
whole processes: services, referees, journals, the replay's driver). The journals go to
/dev/shm unless --data: on a board each journal has its own SD card; here a thousand
fsyncs would measure the disk, not the code. `--subscriber paho` puts a bare paho client
in the station's place (moves only).
"""

from __future__ import annotations

import argparse
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
        if word == "alerts":
            return sum(len(g.alerts) for b in station.hall.boards.values()
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


# ---------------------------------------------------------------- measuring processes


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_peak_mb(pid: int) -> float:
    """The peak resident memory (VmHWM) of process `pid`, in MB (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


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


class Watched:
    """A broker's CPU and peak memory over its lives (a kill -9 ends one: read before)."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker
        self.cpu = 0.0
        self.peak_mb = 0.0
        self._pid = broker.proc.pid
        self._cpu0 = proc_cpu(self._pid)

    def mark(self) -> None:
        self.cpu, self._cpu0 = 0.0, proc_cpu(self._pid)

    def sample(self) -> None:
        """Before the process ends."""
        self.cpu += proc_cpu(self._pid) - self._cpu0
        self.peak_mb = max(self.peak_mb, proc_peak_mb(self._pid))

    def restarted(self) -> None:
        self._pid = self.broker.proc.pid
        self._cpu0 = proc_cpu(self._pid)

    def kill(self) -> None:
        self.sample()
        self.broker.kill()

    def start(self) -> None:
        self.broker.start(timeout=120.0)  # (a thousand boards knock at once)
        self.restarted()


# ---------------------------------------------------------------- the boards' processes


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


def cut_at(game: Any, plies: int) -> Any:
    """The game's first `plies` moves, unfinished (Result "*") if it had more: a board
    whose game goes on past the round's end (--plies bounds a round's length)."""
    import chess.pgn

    moves = list(game.mainline_moves())
    if len(moves) <= plies:
        return game
    board = game.board()
    for move in moves[:plies]:
        board.push(move)
    cut = chess.pgn.Game.from_board(board)
    cut.headers.update({k: v for k, v in game.headers.items() if k != "Result"})
    cut.headers["Result"] = "*"
    return cut


def worker_main(conn: Any, job: dict[str, Any]) -> None:
    """One process of boards: render their games, connect them, play the round when told
    (a wall-clock start shared by every worker), report what each board played, close
    when told (each publisher sends what is left)."""
    import io
    import logging

    import chess.pgn

    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    logging.basicConfig(level=logging.ERROR, format=f"boards {job['index']}: %(message)s")
    if job["idle"]:  # (before any thread: each board's threads inherit it)
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    from board_ctl.hall.replayhall import HallBoardSpec, ReplayHall
    from board_ctl.sensorlog import read_sensor_log
    from board_ctl.simulate import NoEligiblePly, render_game, render_violation
    from servicekit import FAST, GAMES

    with (GAMES / "stockfish-300.pgn").open(encoding="utf-8") as stream:
        games = [chess.pgn.read_game(stream) for _ in range(min(job["total"], 300))]
    if job["plies"]:
        games = [cut_at(game, job["plies"]) for game in games if game is not None]
    specs, log_seconds = [], 0.0
    for n, name, url, password in job["boards"]:
        game = games[n % len(games)]
        assert game is not None
        seed = job["seed"] * 1000 + n
        rendered = None
        if n % 4 == 3:  # one board in four: a rule violation, its alert raised and cleared
            try:
                rendered = render_violation(game, VIOLATIONS[(n // 4) % len(VIOLATIONS)],
                                            seed=seed, style=FAST)
            except NoEligiblePly:
                rendered = None
        rendered = rendered or render_game(game, seed=seed, style=FAST)
        log = read_sensor_log(io.StringIO(rendered.jsonl()))
        specs.append(HallBoardSpec(name, log.start, log.events, url, password))
        log_seconds = max(log_seconds, log.events[-1].t)
    hall = ReplayHall(Path(job["root"]), specs, speed=job["speed"], drain=job["drain"])
    hall.start()
    conn.send(("ready", log_seconds))
    start_at = conn.recv()
    time.sleep(max(0.0, start_at - time.time()))
    cpu0 = time.process_time()
    hall.run()
    played = {}
    for board in hall.boards:
        session = board.service.last_session
        assert session is not None
        played[f"{board.spec.board_id} {session.game_id}"] = {
            "moves": [m.move.uci() for m in session.record.moves],
            "alerts": truth_of(session.record.report)}
    tids = [tid for board in hall.boards for tid in board.publisher.native_ids]
    conn.send(("played", played, time.process_time() - cpu0, thread_cpu(tids)))
    conn.recv()  # close
    publishers = thread_cpu(tids)
    hall.close()
    conn.send(("closed", time.process_time() - cpu0, publishers))


class Workers:
    """The boards' processes (spawned: a fresh interpreter each, no threads inherited)."""

    def __init__(self, jobs: list[dict[str, Any]]) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.conns = []
        self.procs = []
        for job in jobs:
            mine, theirs = context.Pipe()
            proc = context.Process(target=worker_main, args=(theirs, job), daemon=True)
            proc.start()
            self.conns.append(mine)
            self.procs.append(proc)

    def gather(self, word: str) -> list[tuple[Any, ...]]:
        """Each worker's next message, which must be `word`."""
        out = []
        for n, conn in enumerate(self.conns):
            message = conn.recv()
            if message[0] != word:
                raise SystemExit(f"boards' process {n}: {message!r}, not {word}")
            out.append(message)
        return out

    def tell(self, message: Any) -> None:
        for conn in self.conns:
            conn.send(message)

    def pids(self) -> list[int]:
        return [proc.pid for proc in self.procs if proc.pid is not None]

    def close(self) -> None:
        for proc in self.procs:
            proc.join(timeout=120)
            if proc.is_alive():
                proc.kill()


# ---------------------------------------------------------------- the round


def percentile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(int(q * len(ordered)), len(ordered) - 1)]) if ordered else float("nan")


def bridged_pair(root: Path, users: dict[str, str]) -> tuple[Any, Any]:
    """The station's broker and a second one it pulls from over the shipped bridge
    (config/mosquitto/board-ctl-bridge.conf, the second's `bridge` user)."""
    from brokerkit import Broker, bridge_config

    second = Broker(root / "broker-2", users).start()
    first = Broker(root / "broker", users, extra=bridge_config(second, users["bridge"]))
    return first.start(), second


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=100)
    parser.add_argument("--speed", type=float, default=20.0, help="log seconds per second")
    parser.add_argument("--workers", type=int, default=0,
                        help="boards' processes (default: one for every 50 boards, at least 2)")
    parser.add_argument("--kill-at", type=float, default=0.4,
                        help="kill -9 the broker after this fraction of the round (0: never)")
    parser.add_argument("--kill-for", type=float, default=1.0, help="s the broker stays dead")
    parser.add_argument("--cut", type=float, default=0.0,
                        help="cut board 1 from the broker for this many s, mid-round")
    parser.add_argument("--bridge", action="store_true",
                        help="two brokers bridged, half the boards on each, the station on "
                             "the first")
    parser.add_argument("--kill-broker", choices=("first", "second"), default="first",
                        help="with --bridge: the broker killed (the station's, or the other)")
    parser.add_argument("--subscriber", choices=("station", "paho"), default="station",
                        help="who reads the hall: the arbiter station (default) or a bare "
                             "paho client")
    parser.add_argument("--data", type=Path, help="where the journals go (default /dev/shm)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-idle", action="store_true",
                        help="the boards' processes at the bench's own priority, not "
                             "SCHED_IDLE")
    parser.add_argument("--plies", type=int, default=0,
                        help="play each game's first N plies only (0: whole games); bounds "
                             "the round: about 3 s of play a ply at real speed")
    parser.add_argument("--wait", type=float, default=0.0,
                        help="s to wait after the round for every move (default: 120, or the "
                             "round's length if longer)")
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

    logging.basicConfig(level=logging.ERROR)  # (a hundred "reconnecting" lines say nothing)
    from brokerkit import Broker, CutProxy

    root = Path(tempfile.mkdtemp(prefix="bench-hall-",
                                 dir=args.data or ("/dev/shm" if Path("/dev/shm").is_dir()
                                                   else None)))
    names = [f"b{n:04d}" for n in range(1, args.boards + 1)]
    users = {"arbiter": "arbiter-pw", "bridge": "bridge-pw",
             **{name: f"{name}-pw" for name in names}}
    if args.bridge:
        brokers = list(bridged_pair(root, users))
    else:
        brokers = [Broker(root / "broker", users).start()]
    watched = [Watched(b) for b in brokers]
    target = watched[1] if args.bridge and args.kill_broker == "second" else watched[0]
    proxy = CutProxy(brokers[0].port) if args.cut else None
    workers_n = args.workers or max(2, -(-args.boards // 50))
    workers_n = min(workers_n, args.boards)
    jobs = []
    for index in range(workers_n):
        broker = brokers[index % len(brokers)]
        boards = []
        for n in range(index, args.boards, workers_n):
            url = proxy.url if proxy is not None and n == 0 else broker.url
            boards.append((n, names[n], url, users[names[n]]))
        jobs.append({"index": index, "boards": boards, "total": args.boards,
                     "seed": args.seed, "root": str(root / f"boards-{index}"),
                     "speed": args.speed, "plies": args.plies, "idle": not args.no_idle,
                     "drain": max(60.0, args.cut + 30.0)})
    subscriber = Subscriber(args.subscriber, brokers[0].port, users["arbiter"],
                            root / "station")
    spectator = Spectator(subscriber.http_port) if args.subscriber == "station" else None
    workers = Workers(jobs)
    log_seconds = max(m[1] for m in workers.gather("ready"))
    round_s = log_seconds / args.speed
    where = (f"two brokers bridged (boards on both, the station on the first; the "
             f"{args.kill_broker} killed)" if args.bridge else "one broker")
    capped = f" (each cut at {args.plies} plies)" if args.plies else ""
    print(f"{args.boards} boards in {workers_n} processes, games of up to {log_seconds:.0f} s"
          f"{capped} played at {args.speed:g}x (~{round_s:.0f} s), into the {args.subscriber} through "
          f"{where}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"journals in {root}", flush=True)

    events: list[str] = []
    # wall-clock s: (start, end, the board it cut off, or None: every board) of each fault
    faults: list[tuple[float, float, str | None]] = []
    start_at = time.time() + 1.0

    def fault(at: float, what: str, action: Any) -> threading.Timer:
        def run() -> None:
            events.append(f"{time.time() - start_at:6.1f} s: {what}")
            action()
        timer = threading.Timer(start_at + at - time.time(), run)
        timer.daemon = True
        return timer

    def restart() -> None:
        begin = time.time()
        target.kill()
        time.sleep(args.kill_for)
        target.start()
        faults.append((begin, time.time(), None))

    def cut() -> None:
        assert proxy is not None
        faults.append((time.time(), time.time() + args.cut, names[0]))
        proxy.cut_off()

    timers = []
    if args.kill_at > 0:
        which = f"the {args.kill_broker} " if args.bridge else ""
        timers.append(fault(round_s * args.kill_at, f"{which}broker killed (-9), back after "
                                                     f"{args.kill_for:g} s", restart))
    if proxy is not None:
        timers.append(fault(round_s * 0.25, f"board {names[0]} cut for {args.cut:g} s", cut))
        timers.append(fault(round_s * 0.25 + args.cut, f"board {names[0]} back",
                            proxy.restore))
    time.sleep(max(0.0, start_at - time.time() - 0.2))
    subscriber.ask("mark")
    for watcher in watched:
        watcher.mark()
    station_cpu0 = proc_cpu(subscriber.proc.pid)
    workers.tell(start_at)
    for timer in timers:
        timer.start()
    reports = workers.gather("played")
    played_wall = time.time() - start_at
    station_round_cpu = proc_cpu(subscriber.proc.pid) - station_cpu0
    expected: dict[str, list[str]] = {}
    alerts_expected: dict[str, list[list[Any]]] = {}
    for _, played, _, _ in reports:
        for key, game in played.items():
            expected[key] = game["moves"]
            alerts_expected[key] = game["alerts"]
    boards_cpu = sum(r[2] for r in reports)
    total = sum(len(m) for m in expected.values())
    for timer in timers:
        timer.join()
    wait = args.wait or max(120.0, round_s, args.cut + 60.0)
    deadline = time.time() + wait
    raised = sum(len(a) for a in alerts_expected.values())

    def all_in() -> bool:  # every move, and at the station every alert (a resend's come last)
        return subscriber.ask("count") >= total and (
            args.subscriber != "station" or subscriber.ask("alerts") >= raised)

    while time.time() < deadline and not all_in():
        time.sleep(0.5)
    complete_after = time.time() - start_at
    summary = subscriber.ask("report")
    station_cpu = proc_cpu(subscriber.proc.pid) - station_cpu0
    station_mb = proc_peak_mb(subscriber.proc.pid)
    for watcher in watched:
        watcher.sample()
    workers_mb = [proc_peak_mb(pid) for pid in workers.pids()]
    workers.tell("close")
    closed = workers.gather("closed")
    publishers_cpu = sum(c[2] for c in closed)
    workers.close()
    if spectator is not None:
        spectator.stop()
    subscriber.close()
    for broker in brokers:
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
          + (f"; wrong (shown, played): {dict(list(wrong.items())[:20])}" if wrong else ""))
    healed = delivered - len(lat)  # shown, but never taken from a move message
    if healed:
        print(f"of which filled from a board's PGN or sent again at the station's request: "
              f"{healed}")
    print(f"moves shown twice: {shown_twice} ({summary['dropped']} duplicates dropped); games "
          f"whose moves arrived out of order: {out_of_order}; games the boards did not play: "
          f"{len(unknown_games)}; payloads refused: {summary['rejected']}")
    alerts_ok = True
    if args.subscriber == "station":
        same = sum(1 for k, a in alerts_expected.items() if shown.get(k, {}).get("alerts") == a)
        alerts_ok = same == len(alerts_expected)
        bad = {k: (shown.get(k, {}).get("alerts"), a) for k, a in alerts_expected.items()
               if shown.get(k, {}).get("alerts") != a}
        print(f"alerts: {raised} raised on {sum(1 for a in alerts_expected.values() if a)} "
              f"boards; games whose alert history the station shows as the board had it: "
              f"{same} of {len(alerts_expected)}"
              + (f"; differ: {dict(list(bad.items())[:10])}" if bad else ""))
    print(f"latency publish -> {args.subscriber} state: p50 {percentile(lat, 0.5):.0f} ms, "
          f"p99 {percentile(lat, 0.99):.0f} ms, max {percentile(lat, 1.0):.0f} ms "
          f"({len(lat)} moves); published away from the faults: p50 "
          f"{percentile(calm, 0.5):.0f} ms, p99 {percentile(calm, 0.99):.0f} ms, max "
          f"{percentile(calm, 1.0):.0f} ms ({len(calm)} moves)")
    print(f"round: played in {played_wall:.1f} s (the logs' {round_s:.1f} s at {args.speed:g}x); "
          f"every move{' and alert' if args.subscriber == 'station' else ''} at the "
          f"{args.subscriber} {complete_after:.1f} s after the start")
    print(f"{args.subscriber}: CPU {station_round_cpu:.1f} s over the round's {played_wall:.1f} s "
          f"({100 * station_round_cpu / played_wall:.1f} % of one core), {station_cpu:.1f} s "
          f"until every move was in ({100 * station_cpu / complete_after:.1f} %); peak memory "
          f"{station_mb:.0f} MB; its broker connections: {summary['connects']}"
          + (f"; live-feed updates to the open page: {spectator.events}" if spectator else ""))
    for n, watcher in enumerate(watched):
        name = ("first" if n == 0 else "second") + " broker" if args.bridge else "broker"
        print(f"{name}: CPU {watcher.cpu:.1f} s over {complete_after:.1f} s "
              f"({100 * watcher.cpu / complete_after:.1f} % of one core); peak memory "
              f"{watcher.peak_mb:.0f} MB")
    print(f"boards' processes: CPU {boards_cpu:.1f} s over the round's {played_wall:.1f} s "
          f"({100 * boards_cpu / played_wall:.1f} % of one core; the publishers' threads "
          f"{publishers_cpu:.1f} s up to their close); peak memory {max(workers_mb):.0f} MB "
          f"a process, {sum(workers_mb):.0f} MB in all")
    ok = not wrong and shown_twice == 0 and out_of_order == 0 and not unknown_games \
        and alerts_ok
    print("nothing lost" if ok else "LOST, DOUBLED OR DISORDERED")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
