"""Helpers for the station tests: a board that publishes a real game exactly as
docs/mqtt.md says (pure messages, or through a real broker: the shipped Mosquitto of
tests/brokerkit.py), the station's web server on a free port.

`ContractBoard` is written from the contract alone, independently of the board side
(board_ctl/hall/); the `board_publisher` fixture of test_station_live.py is the one
place to swap in the real publisher."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import httpx2 as httpx  # the test extra (starlette's test client uses it too)

from conftest import stop_process
from servicekit import game_from

PREFIX = "board-ctl"


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    retain: bool = False


def wait_for(condition: Callable[[], Any], timeout: float = 10.0, what: str = "condition",
             interval: float = 0.02) -> Any:
    """Poll until `condition()` is truthy; fail with `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


@dataclass
class ContractBoard:
    """One board's side of the contract for one game at a time: what it publishes after
    each move, alert and command, as docs/mqtt.md describes it."""

    board: str
    game_pgn: chess.pgn.Game
    game: str = "20261130-191502-1"
    board_no: int | None = None
    base_ms: int | None = 300_000
    increment_ms: int = 2_000
    think_ms: int = 3_000
    start_time_ms: int = 1_796_065_200_000
    prefix: str = PREFIX
    wall: Callable[[], int] | None = None   # a real clock for `time` (live tests)
    publish_pgn: bool = True                # the retained PGN after every move (costly)
    tags: dict[str, Any] = field(default_factory=dict)
    position: chess.Board = field(init=False)
    moves: list[chess.Move] = field(init=False)
    ply: int = 0
    t_ms: int = 0
    alerts: list[dict[str, Any]] = field(default_factory=list)
    result: str = "*"
    termination: str = ""
    clocks: dict[str, int] = field(default_factory=dict)
    sans: list[str] = field(default_factory=list)
    clock_of_move: list[int | None] = field(default_factory=list)
    done_ids: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.position = self.game_pgn.board()
        self.moves = list(self.game_pgn.mainline_moves())
        if self.base_ms is not None:
            self.clocks = {"white": self.base_ms, "black": self.base_ms}

    # ---- what it publishes ---------------------------------------------------------

    def topic(self, kind: str) -> str:
        return f"{self.prefix}/{self.board}/{kind}"

    def now_ms(self) -> int:
        return self.wall() if self.wall is not None else self.start_time_ms + self.t_ms

    def _json(self, kind: str, body: dict[str, Any], retain: bool = False) -> Message:
        payload = {"v": 1, "board": self.board, "time": self.now_ms(), **body}
        return Message(self.topic(kind), json.dumps(payload).encode(), retain)

    def status(self, online: bool = True) -> Message:
        return Message(self.topic("status"), b"online" if online else b"offline", True)

    def running(self) -> str | None:
        if self.base_ms is None or self.result != "*" or self.ply == 0:
            return None  # White's clock starts with the first move here
        return "white" if self.position.turn == chess.WHITE else "black"

    def state(self) -> Message:
        side = {True: "white", False: "black"}
        clock = None
        if self.base_ms is not None:
            clock = {"white": self.clocks["white"] / 1000, "black": self.clocks["black"] / 1000,
                     "running": self.running(), "t": self.t_ms / 1000}
        last = None
        if self.ply:
            last = {"ply": self.ply, "san": self.sans[-1], "uci": self.moves[self.ply - 1].uci()}
        tags = self.tags
        return self._json("state", {
            "game": self.game, "event": tags.get("event"), "site": tags.get("site"),
            "round": tags.get("round"), "board_no": tags.get("board_no", self.board_no),
            "white": tags.get("white", {"name": None, "fide_id": None}),
            "black": tags.get("black", {"name": None, "fide_id": None}),
            "start_fen": self.game_pgn.board().fen(), "fen": self.position.fen(),
            "turn": side[self.position.turn], "ply": self.ply, "last_move": last,
            "clock": clock, "alerts": list(self.alerts), "result": self.result,
            "termination": self.termination, "link": "connected",
            "phase": "over" if self.result != "*" else "playing"}, retain=True)

    def pgn(self) -> Message:
        game = chess.pgn.Game()
        game.setup(self.game_pgn.board())
        game.headers["Result"] = self.result
        node: chess.pgn.GameNode = game
        for move, clock in zip(self.moves[:self.ply], self.clock_of_move):
            node = node.add_variation(move)
            if clock is not None:
                node.set_clock(clock / 1000)
        text = game.accept(chess.pgn.StringExporter(headers=True)) + "\n"
        return Message(self.topic("pgn"), text.encode(), True)

    def start(self) -> list[Message]:
        return [self.status(True), self.state(), self.pgn()]

    @property
    def finished(self) -> bool:
        return self.ply >= len(self.moves)

    def play(self) -> list[Message]:
        """The next move of the game: move, state, pgn."""
        move = self.moves[self.ply]
        mover = "white" if self.position.turn == chess.WHITE else "black"
        self.t_ms += self.think_ms
        clock = None
        if self.base_ms is not None:
            if self.ply > 0:
                self.clocks[mover] -= self.think_ms
            self.clocks[mover] += self.increment_ms
            clock = self.clocks[mover]
        san = self.position.san(move)
        self.position.push(move)
        self.ply += 1
        self.sans.append(san)
        self.clock_of_move.append(clock)
        moved = self._json("move", {
            "game": self.game, "ply": self.ply, "san": san, "uci": move.uci(),
            "fen": self.position.fen(), "clock": clock / 1000 if clock is not None else None,
            "elapsed": self.think_ms / 1000, "t": self.t_ms / 1000})
        if self.position.is_game_over():
            self.result = self.position.result()
            self.termination = "checkmate" if self.position.is_checkmate() else "draw"
        elif self.finished and self.game_pgn.headers.get("Result") in ("1-0", "0-1", "1/2-1/2"):
            self.result = self.game_pgn.headers["Result"]  # resigned, or agreed
            self.termination = "normal"
        return [moved, self.state()] + ([self.pgn()] if self.publish_pgn else [])

    def raise_alert(self, code: str, side: str | None, squares: list[str],
                    text: str) -> list[Message]:
        alert = {"code": code, "side": side, "squares": squares, "text": text,
                 "t": self.t_ms / 1000, "acknowledged_by": None}
        self.alerts.append(alert)
        body = {k: v for k, v in alert.items() if k != "acknowledged_by"}
        return [self._json("alert", {"game": self.game, **body}), self.state()]

    def clear_alert(self, code: str) -> list[Message]:
        self.alerts = [a for a in self.alerts if a["code"] != code]
        return [self._json("clear", {"game": self.game, "code": code, "t": self.t_ms / 1000}),
                self.state()]

    def new_game(self, game_pgn: chess.pgn.Game, game: str) -> list[Message]:
        self.game_pgn, self.game = game_pgn, game
        self.__post_init__()
        self.ply, self.sans, self.clock_of_move, self.alerts = 0, [], [], []
        self.result, self.termination = "*", ""
        return [self.state(), self.pgn()]

    # ---- what it is told -----------------------------------------------------------

    def command(self, topic: str, payload: bytes) -> list[Message]:
        """A command on cmd/...: applied once per id, answered on reply."""
        kind = topic.rsplit("/", 1)[-1]
        data = json.loads(payload)
        command_id = data["id"]
        if command_id in self.done_ids:
            return [self._reply(command_id, True, None)]
        self.done_ids.add(command_id)
        error = None
        if kind == "ack":
            found = [a for a in self.alerts if a["code"] == data.get("code")]
            for alert in found:
                alert["acknowledged_by"] = data.get("by")
            error = None if found else f"no open {data.get('code')} alert"
        elif kind == "result":
            self.result, self.termination = data["result"], "arbiter"
        elif kind == "clock":
            self.clocks = {"white": round(data["white"] * 1000),
                           "black": round(data["black"] * 1000)}
        elif kind == "players":
            self.tags.update({k: v for k, v in data.items() if k not in ("v", "id", "by")})
        else:
            error = f"unknown command {kind}"
        messages = [self._reply(command_id, error is None, error)]
        if error is None:
            messages.append(self.state())
        return messages

    def _reply(self, command_id: str, ok: bool, error: str | None) -> Message:
        return self._json("reply", {"id": command_id, "ok": ok, "error": error})


def contract_board(board: str, pgn_file: str = "classics.pgn", index: int = 0,
                   **kwargs: Any) -> ContractBoard:
    return ContractBoard(board, game_from(pgn_file, index), **kwargs)


class ArbiterProcess:
    """`board-ctl arbiter` in its own process on a free port, its data in `folder`/data,
    its output in `folder`/station.log; started, it serves and is connected to its
    broker. `args`: the rest of its command line (the broker, users, an event)."""

    def __init__(self, folder: Path, args: list[str], *, timeout: float = 30.0,
                 env: dict[str, str] | None = None, nofile: int | None = None) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = folder / "data"
        self.args = [sys.executable, "-m", "board_ctl.cli", "arbiter",
                     "--listen", f"127.0.0.1:{self.port}", "--data-dir", str(self.data), *args]
        self.log_path = folder / "station.log"
        self.log = self.log_path.open("ab")
        preexec = None
        if nofile is not None:  # the station's file descriptors, as a unit's LimitNOFILE sets
            def preexec() -> None:
                import resource
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.process = subprocess.Popen(self.args, stdout=self.log, stderr=self.log, env=env,
                                        preexec_fn=preexec)

        def connected() -> bool:
            self.alive()
            try:
                return bool(httpx.get(f"{self.url}/api/boards", timeout=2).json()
                            ["broker"]["connected"])
            except (httpx.HTTPError, ValueError):
                return False
        wait_for(connected, timeout, "the station to serve and connect")

    def alive(self) -> None:
        if self.process.poll() is not None:
            raise AssertionError(f"the station exited: {self.log_path.read_text()}")

    def boards(self) -> dict[str, Any]:
        return {b["id"]: b for b in httpx.get(f"{self.url}/api/boards", timeout=5).json()["boards"]}

    def board(self, board_id: str) -> dict[str, Any]:
        return httpx.get(f"{self.url}/api/board/{board_id}", timeout=5).json()  # type: ignore[no-any-return]

    def actions(self) -> list[dict[str, Any]]:
        path = self.data / "actions.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def stop(self) -> None:
        """SIGINT, as systemd stops it; killed if it has not exited within 15 s."""
        stop_process(self.process, signal.SIGINT, 15)
        self.log.close()


# ---- Mosquitto ------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MqttBoard:
    """A ContractBoard on a real broker: its status will, its messages published QoS 1,
    its commands read from cmd/# and answered."""

    def __init__(self, board: ContractBoard, port: int, password: str | None = None) -> None:
        """`password`: log in as the board's id (the shipped broker's ACL)."""
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.board = board
        self.lock = threading.Lock()
        self.commands: list[tuple[str, dict[str, Any]]] = []
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=board.board,
                             protocol=mqtt.MQTTv5)
        if password is not None:
            client.username_pw_set(board.board, password)
        client.will_set(board.topic("status"), b"offline", qos=1, retain=True)
        client.on_message = self._on_message
        client.on_connect = lambda c, u, f, rc, p: c.subscribe(f"{board.prefix}/{board.board}/cmd/#", qos=1)
        self.subscribed = threading.Event()
        client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        client.connect("127.0.0.1", port, keepalive=2)
        client.loop_start()
        self.client = client
        wait_for(self.subscribed.is_set, 10, f"board {board.board} to subscribe")

    def publish(self, messages: list[Message]) -> None:
        for message in messages:
            info = self.client.publish(message.topic, message.payload, qos=1, retain=message.retain)
            info.wait_for_publish(5)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        with self.lock:
            self.commands.append((message.topic, json.loads(message.payload)))
            replies = self.board.command(message.topic, bytes(message.payload))
        for reply in replies:
            client.publish(reply.topic, reply.payload, qos=1, retain=reply.retain)

    def play(self) -> None:
        with self.lock:
            messages = self.board.play()
        self.publish(messages)

    def drop(self) -> None:
        """Vanish from the network without a DISCONNECT: the broker publishes the will."""
        self.client.loop_stop()
        self.client.socket().close()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
