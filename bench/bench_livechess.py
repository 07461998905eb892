"""Does the LiveChess endpoint slow the LEDs? Clock press -> LED frame, with and without.

    python bench/bench_livechess.py [--games N] [--rounds R]

The same measurement as bench_service.py (the service in its own process on a real pty,
this script playing the board's side with the firmware's codec, each clock press timed
from the write of its CLOCK frame to the read of the LEDS frame that shows the other side
to move), run alternately without `--livechess` and with it and a client subscribed to
the eboardevent feed (reading every feed, as lichess.org/dgt does), R rounds of N games
each (which goes first alternating), so both see the same load; the same plain view both
ways. Prints p50/p99 of each and their ratios, checks that the client got every move,
and times show(), the endpoint's whole share of the service's loop thread.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import chess
import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_service import GAMES, BenchBoard, percentile, service_env, status_side  # noqa: E402
from firmware_bridge import protocol as P  # noqa: E402


class FeedReader(threading.Thread):
    """A subscribed client that reads every feed and keeps the last san."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        from websockets.sync.client import connect

        self.ws = connect(url, proxy=None).__enter__()
        self.ws.send('{"id":1,"call":"eboards"}')
        serial = json.loads(self.ws.recv(timeout=10))["param"][0]["serialnr"]
        self.ws.send(json.dumps({"id": 2, "call": "subscribe", "param": {
            "feed": "eboardevent", "id": 1, "param": {"serialnr": serial}}}))
        self.feeds = 0
        self.plies = 0  # moves seen, summed over the games
        self._game_sans: list[str] = []

    def run(self) -> None:
        try:
            for text in self.ws:
                message = json.loads(text)
                san = message.get("param", {}).get("san") if message["response"] == "feed" \
                    else None
                if san is None:
                    continue
                self.feeds += 1
                if len(san) < len(self._game_sans):  # a new game
                    self.plies += len(self._game_sans)
                self._game_sans = san
        except Exception:  # the service stopped
            pass

    def close(self) -> int:
        self.ws.close()
        self.join(5)
        return self.plies + len(self._game_sans)


def start_service(link: Path, workdir: Path, livechess: bool) -> subprocess.Popen[bytes]:
    config = workdir / "bench.toml"
    config.write_text("[serial]\nconnect_timeout = 10.0\n", encoding="utf-8")
    extra = ["--livechess", "127.0.0.1:0"] if livechess else []
    # the same view both ways (plain lines, read by a thread): only the endpoint differs
    return subprocess.Popen(
        [sys.executable, "-m", "board_ctl.cli", "run", "--config", str(config), "--port",
         str(link), "--pgn", str(workdir / "bench.pgn"), "--view", "plain",
         "--data-dir", tempfile.mkdtemp(prefix="data-", dir=workdir), *extra],  # a fresh one
        cwd=workdir, env=service_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL)


def endpoint_url(service: subprocess.Popen[bytes], livechess: bool) -> str | None:
    """The endpoint's URL from the service's first lines; then its output is drained."""
    assert service.stdout is not None
    stdout = service.stdout
    url = None
    deadline = time.monotonic() + 30
    while livechess and url is None and time.monotonic() < deadline:
        line = stdout.readline().decode()
        if "LiveChess endpoint: " in line:
            url = line.split("LiveChess endpoint: ", 1)[1].split()[0]
    if livechess and url is None:
        raise RuntimeError("the service did not say where its endpoint is")
    threading.Thread(target=stdout.read, daemon=True).start()
    return url


def measure(workdir: Path, games: int, livechess: bool) -> tuple[list[float], int, int]:
    """Latencies (ms), plies played, and plies the subscribed client saw (0 without)."""
    link = workdir / "bench-board"
    board_end = BenchBoard(link)
    service = start_service(link, workdir, livechess)
    url = endpoint_url(service, livechess)
    reader = FeedReader(url) if url is not None else None
    if reader is not None:
        reader.start()
    samples: list[float] = []
    plies = 0
    try:
        board_end.wait_leds(timeout=20)
        with GAMES.open(encoding="utf-8") as stream:
            for _ in range(games):
                game = chess.pgn.read_game(stream)
                assert game is not None
                board = game.board()
                for move in game.mainline_moves():
                    board_end.play(board, move)
                    board_end.receive(0.01)
                    mover = board.turn
                    board.push(move)
                    plies += 1
                    board_end.advance(500)
                    sent = time.perf_counter()
                    board_end.send(P.CLOCK, P.WHITE if mover else P.BLACK, board_end.ms)
                    while True:
                        got, msg = board_end.wait_leds()
                        if status_side(msg) != mover:
                            break
                    samples.append((got - sent) * 1000)
                    if board.is_game_over():
                        break
                if not board.is_game_over():
                    board_end.advance(1000)
                    board_end.send(P.BUTTON, P.RESIGN, P.WHITE if board.turn else P.BLACK,
                                   board_end.ms)
                    board_end.wait_leds()
                board_end.occupied = chess.Board().occupied
                board_end.advance(2000)
                board_end.send(P.SNAPSHOT, board_end.occupied, board_end.ms, P.HEARTBEAT)
                while status_side(board_end.wait_leds()[1]) is not True:
                    pass
        time.sleep(0.5)  # the last feed on its way
    finally:
        seen = reader.close() if reader is not None else 0
        service.terminate()
        service.wait(timeout=20)
        import os

        os.close(board_end.master)
        os.close(board_end.slave)
        link.unlink(missing_ok=True)
    return samples, plies, seen


def bench_show_cost(calls: int) -> list[float]:
    """What the endpoint costs the service's loop thread: the time show() takes (us),
    with a client subscribed and a feed going out for every second state."""
    from board_ctl.livechess.address import Listen
    from board_ctl.livechess.endpoint import LiveChessEndpoint
    from board_ctl.sensorlog import StartInfo
    from board_ctl.service.view import ViewState

    endpoint = LiveChessEndpoint(Listen("127.0.0.1", 0), serialnr="1", start=StartInfo())
    endpoint.start(lambda item: None)
    reader = FeedReader(endpoint.url)
    reader.start()
    board = chess.Board()
    states = []
    for move in ["e2e4", "e7e5", "g1f3", "b8c6"]:
        board.push_uci(move)
        moves = tuple(chess.Board().variation_san(board.move_stack).split()[1::1])
        states.append(ViewState("playing", 1, board.fen(), chess.STARTING_FEN,
                                board.occupied, None, moves=moves, board="bench"))
    costs = []
    for i in range(calls):
        state = states[i % len(states)] if i % 2 else states[(i - 1) % len(states)]
        started = time.perf_counter_ns()
        endpoint.show(state, ())
        costs.append((time.perf_counter_ns() - started) / 1000)
        if i % 50 == 0:
            time.sleep(0.001)  # moves come apart, as at a board
    reader.close()
    endpoint.close()
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="games per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each, alternating")
    args = parser.parse_args()
    results: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-livechess-") as tmp:
        for round_number in range(args.rounds):  # which goes first alternates too
            for livechess in ((False, True) if round_number % 2 == 0 else (True, False)):
                samples, plies, seen = measure(Path(tmp), args.games, livechess)
                results[livechess] += samples
                if livechess and seen != plies:
                    print(f"the client saw {seen} of {plies} plies", file=sys.stderr)
                    return 1
    for livechess, label in ((False, "without --livechess"),
                             (True, "with --livechess, a client subscribed")):
        samples = results[livechess]
        print(f"{label:40} {len(samples):5} presses  p50 {percentile(samples, 50):.2f} ms"
              f"  p90 {percentile(samples, 90):.2f} ms  p99 {percentile(samples, 99):.2f} ms")
    for p in (50, 99):
        ratio = percentile(results[True], p) / percentile(results[False], p)
        print(f"p{p} with / without: {ratio:.2f}")
    costs = bench_show_cost(20_000)
    print(f"the endpoint's share of the loop thread, show() per state ({len(costs)} calls, a "
          f"client subscribed): p50 {percentile(costs, 50):.1f} us  p99 "
          f"{percentile(costs, 99):.1f} us  max {max(costs):.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
