"""A small tournament hall on one machine, in one command: Mosquitto with the shipped
config (passwords, ACL, persistence) on a free port, three emulated boards playing real
games (`board-emulator` on a pty and `board-ctl run --mqtt` against it, each with its own
config and data directory), and the arbiter station (`board-ctl arbiter`) logged in to
the broker as the ACL's `arbiter` user, with one arbiter who can sign in to its pages and
the round's pairings imported from a CSV file.

    python tools/hall_demo.py [--boards 3] [--speed 1] [--listen 127.0.0.1:8080] [--dir DIR]

Every command is printed as it is run (the same commands set up a real hall, one board
per Pi); every file (broker config, passwords, board configs, games, logs) is in DIR (a
new temporary folder unless given) and kept. When the station answers, the addresses of
its pages and the arbiter's password are printed; Ctrl-C stops everything.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import secrets
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import FrameType

import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
BROKER_CONFIG = ROOT / "config" / "mosquitto"
GAMES = ROOT / "tests" / "data" / "games" / "classics.pgn"
ROUND = "1"
EVENT = "Demo hall"
TIME_CONTROL = "900+10"  # rapid: 15 minutes and 10 s a move
START_HOLD = 5.0  # s the boards stand in the start position: the pairings reach them first
UP_TIMEOUT = 60.0  # s for everything to start


class DemoError(Exception):
    """Something the hall needs is missing or did not start; the message says what."""


def say(text: str) -> None:
    print(text, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/sbin")
    if not found or not shutil.which("mosquitto_passwd"):
        raise DemoError("Mosquitto is not installed (Debian: apt-get install mosquitto)")
    return found


def tool(name: str) -> str:
    """`board-ctl` or `board-emulator` beside this Python (the venv it runs in)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if not found:
        raise DemoError(f"no {name} beside {sys.executable} nor on PATH: install board_ctl "
                        "first (pip install -e .)")
    return found


def shown(args: list[str]) -> str:
    """A command as the walkthrough writes it: the project's tools by name."""
    return shlex.join([Path(args[0]).name if args[0] in (tool("board-ctl"),
                                                           tool("board-emulator")) else args[0],
                       *args[1:]])


class Hall:
    def __init__(self, folder: Path, boards: int, speed: float, listen: str) -> None:
        self.dir = folder
        self.ids = [f"b{n:02d}" for n in range(1, boards + 1)]
        self.speed = speed
        self.listen = listen
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.port = 0

    # ---- running things ------------------------------------------------------------

    def run(self, args: list[str], stdin: str | None = None) -> None:
        say(f"$ {shown(args)}")
        done = subprocess.run(args, input=stdin, text=True, capture_output=True, cwd=self.dir)
        if done.returncode != 0:
            raise DemoError(f"{args[0]} failed: {(done.stderr or done.stdout).strip()}")

    def start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        say(f"$ {shown(args)} > {name}.log 2>&1 &")
        with (self.dir / f"{name}.log").open("wb") as out:
            # its own process group: Ctrl-C reaches this script alone, which stops the
            # hall in order (the boards say goodbye before the broker goes)
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, cwd=self.dir, process_group=0)
        self.procs.append((name, proc))
        return proc

    def check_running(self) -> None:
        for name, proc in self.procs:
            if proc.poll() is not None:
                tail = (self.dir / f"{name}.log").read_text(errors="replace")[-1500:]
                raise DemoError(f"{name} stopped (status {proc.returncode}):\n{tail}")

    def wait(self, check: object, what: str, timeout: float = UP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not check():  # type: ignore[operator]
            self.check_running()
            if time.monotonic() > deadline:
                raise DemoError(f"timed out waiting for {what}")
            time.sleep(0.1)

    def stop(self) -> None:
        """The last started first: the boards (each finishes its journal and says
        goodbye to the broker) and their emulators, the station, the broker last."""
        for name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT if name == "station" else signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()

    # ---- the broker ----------------------------------------------------------------

    def broker(self) -> None:
        binary = mosquitto_binary()
        folder = self.dir / "broker"
        folder.mkdir()
        self.port = free_port()
        self.run(["sh", str(BROKER_CONFIG / "make-passwords.sh"), "broker/passwd",
                  "arbiter", *self.ids])
        say(f"$ cp {BROKER_CONFIG / 'board-ctl.acl'} broker/")
        shutil.copy(BROKER_CONFIG / "board-ctl.acl", folder / "board-ctl.acl")
        # The shipped config with this folder's paths, and a free port on loopback.
        places = {"listener": f"{self.port} 127.0.0.1",
                  "pid_file": f"{folder}/mosquitto.pid",
                  "log_dest": f"file {folder}/mosquitto.log",
                  "password_file": f"{folder}/passwd",
                  "acl_file": f"{folder}/board-ctl.acl",
                  "persistence_location": f"{folder}/"}
        lines = []
        for line in (BROKER_CONFIG / "board-ctl.conf").read_text(encoding="utf-8").splitlines():
            key = line.split(" ", 1)[0]
            lines.append(f"{key} {places[key]}" if key in places else line)
        if os.geteuid() == 0:  # as root it would become `mosquitto`, who cannot read DIR
            lines.append("user root")
        (folder / "mosquitto.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
        say(f"# broker/mosquitto.conf: {BROKER_CONFIG.relative_to(ROOT)}/board-ctl.conf with "
            f"this folder's paths, listening on 127.0.0.1:{self.port}")
        self.start("broker", [binary, "-c", "broker/mosquitto.conf"])

        def listening() -> bool:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return True
            except OSError:
                return False
        self.wait(listening, "the broker to listen")

    # ---- the games, the station, the boards ----------------------------------------

    def games(self) -> list[tuple[chess.pgn.Game, str]]:
        """A real game for each board, rendered as a player at the board makes it."""
        from board_ctl.simulate import RenderStyle, render_game

        style = RenderStyle(think=(1.0, 6.0), long_think_prob=0.05)
        out = []
        with GAMES.open(encoding="utf-8") as stream:
            for n in range(len(self.ids)):
                game = chess.pgn.read_game(stream)
                if game is None:
                    raise DemoError(f"{GAMES} has fewer than {len(self.ids)} games")
                rendered = render_game(game, seed=n, style=style)
                hold = START_HOLD * self.speed
                lines = [{**line, "t": round(line["t"] + hold, 3)} if line.get("ev") != "start"
                         else line for line in rendered.lines]
                out.append((game, "".join(json.dumps(line) + "\n" for line in lines)))
        return out

    def station(self, games: list[tuple[chess.pgn.Game, str]]) -> str:
        pairings = self.dir / f"round-{ROUND}.csv"
        rows = io.StringIO()
        writer = csv.writer(rows, lineterminator="\n")
        writer.writerow(["round", "board", "white", "black", "white_fide_id", "black_fide_id"])
        for n, (game, _) in enumerate(games, start=1):
            writer.writerow([ROUND, n, game.headers.get("White", "?"),
                             game.headers.get("Black", "?"), "", ""])
        pairings.write_text(rows.getvalue(), encoding="utf-8")
        say(f"# {pairings.name}: round {ROUND}'s pairings (round,board,white,black,"
            "white_fide_id,black_fide_id)")
        password = secrets.token_urlsafe(9)
        (self.dir / "arbiter.password").write_text(password + "\n", encoding="utf-8")
        os.chmod(self.dir / "arbiter.password", 0o600)
        self.run([tool("board-ctl"), "arbiter", "--add-user", "arbiter", "--data-dir", "station"],
                 stdin=password + "\n")
        say("  (the password, from standard input: arbiter.password)")
        self.start("station", [
            tool("board-ctl"), "arbiter", "--broker", f"mqtt://127.0.0.1:{self.port}",
            "--broker-user", "arbiter",
            "--broker-password-file", "broker/passwd.d/arbiter",
            "--data-dir", "station", "--listen", self.listen, "--event", EVENT,
            "--pairings", pairings.name])
        return password

    def board(self, number: int, log: str) -> None:
        board_id = self.ids[number - 1]
        folder = self.dir / board_id
        folder.mkdir()
        (folder / "game.jsonl").write_text(log, encoding="utf-8")
        (folder / "board.toml").write_text(
            "[mqtt]\n"
            f'url = "mqtt://127.0.0.1:{self.port}"\n'
            f'board_id = "{board_id}"\n'
            f'password_file = "{self.dir}/broker/passwd.d/{board_id}"\n'
            f"board_no = {number}\n"
            f'event = "{EVENT}"\n'
            "[game]\n"
            f'time_control = "{TIME_CONTROL}"\n'
            "[output]\n"
            f'dir = "{folder}/games"\n'
            f'data_dir = "{folder}/data"\n'
            "[display]\n"
            'view = "plain"\n', encoding="utf-8")
        say(f"# {board_id}/board.toml: [mqtt] url, board_id, password_file "
            f"(broker/passwd.d/{board_id}), board_no {number}; [game] time_control "
            f"{TIME_CONTROL}; {board_id}/game.jsonl: a real game as players make it")
        link = folder / "link"
        # The emulator holds the last position when its game is played (--until), as a
        # board stays on its table: the station shows it online with its result.
        self.start(f"{board_id}-emulator", [
            tool("board-emulator"), "--link", f"{board_id}/link",
            "--log", f"{board_id}/game.jsonl", "--speed", f"{self.speed:g}",
            "--until", "100000"])
        self.wait(link.exists, f"{board_id}'s emulator to open its pty")
        self.start(board_id, [tool("board-ctl"), "run", "--config", f"{board_id}/board.toml",
                              "--port", f"{board_id}/link"])

    def up(self, host: str, port: int) -> bool:
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/api/boards", timeout=2) as reply:
                data = json.load(reply)
        except (OSError, ValueError, urllib.error.URLError):
            return False
        online = [b for b in data["boards"] if b["status"] == "online"]
        return bool(data["broker"]["connected"]) and len(online) == len(self.ids)


def parse_listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise DemoError(f"--listen {text!r}: HOST:PORT, e.g. 127.0.0.1:8080")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--boards", type=int, default=3, choices=range(1, 10),
                        metavar="N", help="how many boards (1-9, default 3)")
    parser.add_argument("--speed", type=float, default=1.0,
                        help="the games at N times the players' speed (default 1)")
    parser.add_argument("--listen", default="127.0.0.1:8080",
                        help="the station's address (default 127.0.0.1:8080)")
    parser.add_argument("--dir", type=Path, help="the hall's files (default: a new temporary "
                                                  "folder, kept)")
    args = parser.parse_args(argv)
    stop: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.append(signum)

    try:
        host, port = parse_listen(args.listen)
        folder = args.dir.resolve() if args.dir else Path(tempfile.mkdtemp(prefix="board-ctl-hall-"))
        folder.mkdir(parents=True, exist_ok=True)
        if any(folder.iterdir()):
            raise DemoError(f"{folder} is not empty: give a new folder")
        hall = Hall(folder, args.boards, args.speed, args.listen)
    except DemoError as exc:
        print(f"hall_demo: {exc}", file=sys.stderr)
        return 2
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)
    say(f"# the hall's files: {folder}")
    say(f"$ cd {folder}")
    try:
        hall.broker()
        games = hall.games()
        password = hall.station(games)
        hall.wait(lambda: _answers(host, port), "the station to answer")
        for number, (_, log) in enumerate(games, start=1):
            hall.board(number, log)
        hall.wait(lambda: hall.up(host, port), "every board online at the station")
        base = f"http://{host}:{port}"
        say("")
        say(f"The hall is up: {len(hall.ids)} boards, broker mqtt://127.0.0.1:{hall.port}")
        say(f"  spectators  {base}/")
        say(f"  arbiter     {base}/arbiter  (user arbiter, password {password})")
        say(f"  broadcast   {base}/broadcast/round-{ROUND}/games.pgn")
        say(f"  files       {folder}")
        say("Ctrl-C stops the hall.")
        while not stop:
            hall.check_running()
            select.select([], [], [], 0.5)
    except DemoError as exc:
        print(f"hall_demo: {exc}", file=sys.stderr)
        hall.stop()
        return 1
    finally:
        if stop:
            say("stopping the hall")
            hall.stop()
    return 0


def _answers(host: str, port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/api/boards", timeout=2) as reply:
            return bool(json.load(reply)["broker"]["connected"])
    except (OSError, ValueError, urllib.error.URLError):
        return False


if __name__ == "__main__":
    sys.exit(main())
