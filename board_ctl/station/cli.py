"""`board-ctl arbiter`: the arbiter station (and `--add-user` to make its users).

Exit status: 0 stopped (Ctrl-C, SIGTERM); 1 the address to serve on cannot be had (in
use, not this machine's); 2 a bad option, pairings, users or token file. The web
address is printed only once it is listened on; a broker that has not answered within
BROKER_WARNING s is said on the console (the pages show it too), and said again when it
answers.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import getpass
import logging
import socket
import sys
import threading
from pathlib import Path
from typing import Any

from board_ctl.archive import default_data_dir
from board_ctl.errors import BoardCtlError

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", metavar="URL",
                        help="the MQTT broker: mqtt://[USER[:PASSWORD]@]HOST[:PORT] or mqtts://...")
    parser.add_argument("--listen", default="127.0.0.1:8080", metavar="HOST:PORT",
                        help="where the web pages are served (default: 127.0.0.1:8080)")
    parser.add_argument("--users", metavar="FILE",
                        help="the arbiters' users file (default: DATA_DIR/users)")
    parser.add_argument("--pairings", metavar="CSV",
                        help="import a round's pairings at start "
                             "(round,board,white,black,white_fide_id,black_fide_id)")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="the station's journal, pairings and keys "
                             f"(default: {default_data_dir() / 'station'})")
    parser.add_argument("--add-user", metavar="NAME",
                        help="add an arbiter (or change the password) and exit; the password "
                             "is asked for, or read from standard input when it is not a terminal")
    parser.add_argument("--broker-user", metavar="NAME",
                        help="the station's MQTT user name (default: from the URL)")
    parser.add_argument("--broker-password-file", metavar="FILE",
                        help="a file holding the station's MQTT password")
    parser.add_argument("--ca-file", metavar="FILE", help="CA certificate for mqtts://")
    parser.add_argument("--topic-prefix", default="board-ctl", help="default: board-ctl")
    parser.add_argument("--client-id",
                        help="MQTT client id (the broker keeps its session while away; "
                             "default: the broker user name, which the shipped broker "
                             "config enforces)")
    parser.add_argument("--event", default="?", help="the Event tag of the broadcast")
    parser.add_argument("--site", default="?", help="the Site tag of the broadcast")
    parser.add_argument("--push-url", metavar="URL",
                        help="push the round's PGN here after every change "
                             "(lichess: https://lichess.org/api/broadcast/round/ID/push)")
    parser.add_argument("--push-round", metavar="N", help="the round to push")
    parser.add_argument("--push-token-file", metavar="FILE",
                        help="a file holding the bearer token for --push-url")
    parser.add_argument("--secure-cookies", action="store_true",
                        help="mark the session cookie Secure (behind an HTTPS proxy)")
    parser.add_argument("--forwarded-allow-ips", metavar="IPS",
                        help="behind a reverse proxy: its address(es), comma-separated, whose "
                             "X-Forwarded-For is trusted as the client's (default: none is; "
                             "the sign-in limit counts by address)")


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data_dir) if args.data_dir else default_data_dir() / "station"


def _users_path(args: argparse.Namespace) -> Path:
    return Path(args.users) if args.users else _data_dir(args) / "users"


def _add_user(args: argparse.Namespace) -> int:
    from board_ctl.station.users import UsersError, make_user, save_user

    path = _users_path(args)
    if sys.stdin.isatty():
        password = getpass.getpass(f"password for {args.add_user}: ")
        if getpass.getpass("again: ") != password:
            print("board-ctl arbiter: the passwords differ", file=sys.stderr)
            return 2
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    try:
        added = save_user(path, make_user(args.add_user, password))
    except (UsersError, OSError) as exc:
        print(f"board-ctl arbiter: {exc}", file=sys.stderr)
        return 2
    print(f"{'added' if added else 'changed the password of'} {args.add_user} in {path}")
    return 0


BROKER_WARNING = 3.0  # s: a broker that has not answered by then is said on the console


class ListenError(BoardCtlError, OSError):
    """The address to serve the pages on cannot be had (exit status 1)."""


def _listen(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise BoardCtlError(f"--listen {text!r}: HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]"), int(port)


def _bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """The listening socket, taken before anything says the station serves (uvicorn
    would print its own traceback-like error and exit 3)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"--listen {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        why = {errno.EADDRINUSE: "the address is already in use (another station, or "
                                 "another program, serves there: stop it or choose "
                                 "another --listen)",
               errno.EADDRNOTAVAIL: "not an address of this machine",
               errno.EACCES: "a port below 1024 needs privileges: choose one above"}
        raise ListenError(f"--listen {host}:{port}: "
                          f"{why.get(exc.errno or 0, exc.strerror or str(exc))}") from None
    sock.set_inheritable(True)
    return sock


def _why_not(link: Any, host: str, port: int) -> str:
    """Why the broker has not answered, as far as can be told: its login's refusal, else
    what a plain connection to its address meets."""
    refused = getattr(link, "last_error", "")
    if refused:
        return str(refused)
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return "it takes connections but has not accepted the station's login"
    except OSError as exc:
        return (exc.strerror or str(exc)).lower() if not isinstance(exc, TimeoutError) \
            else "no answer"


def _watch_broker(link: Any, host: str, port: int, stopped: threading.Event) -> None:
    """The console is told when the broker has not answered within BROKER_WARNING s
    (with why, as far as can be told), and again when it does."""
    where = f"{host}:{port}"
    if link.connected.wait(BROKER_WARNING) or stopped.is_set():
        return
    why = _why_not(link, host, port)
    print(f"board-ctl arbiter: WARNING the MQTT broker {where} has not answered within "
          f"{BROKER_WARNING:g} s ({why}): the pages show no board until it does; check "
          f"--broker, --broker-user and the password file, and the broker's ACL",
          file=sys.stderr, flush=True)
    while not stopped.is_set():
        if link.connected.wait(0.5):
            print(f"board-ctl arbiter: connected to the MQTT broker {where}",
                  file=sys.stderr, flush=True)
            return


def run(args: argparse.Namespace) -> int:
    if args.add_user:
        return _add_user(args)
    if not args.broker:
        print("board-ctl arbiter: --broker URL is required (e.g. mqtt://localhost:1883)",
              file=sys.stderr)
        return 2
    try:
        return _serve(args)
    except ListenError as exc:
        print(f"board-ctl arbiter: {exc}", file=sys.stderr)
        return 1
    except BoardCtlError as exc:
        print(f"board-ctl arbiter: {exc}", file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from board_ctl.station.broadcast import round_pgn
    from board_ctl.station.feeds import listen_backlog
    from board_ctl.station.link import STATION_ID, BrokerAddress, StationLink
    from board_ctl.station.push import Pusher
    from board_ctl.station.station import Station
    from board_ctl.errors import TagError
    from board_ctl.pgntags import check_value
    from board_ctl.station.users import load_users
    from board_ctl.station.web import build_app, load_secret

    for option, name, value in (("--event", "Event", args.event), ("--site", "Site", args.site)):
        try:  # tags of every game the station sends pairings to, and of the broadcast
            check_value(name, value)
        except TagError as exc:
            raise BoardCtlError(f"{option}: {exc}") from None
    host, port = _listen(args.listen)
    address = BrokerAddress.parse(args.broker,
                                  Path(args.broker_password_file) if args.broker_password_file
                                  else None, args.broker_user)
    data_dir = _data_dir(args)
    users = load_users(_users_path(args))
    if not users:
        log.warning("no arbiter in %s: the arbiter pages cannot be signed into "
                    "(board-ctl arbiter --add-user NAME)", _users_path(args))
    link: StationLink | None = None

    def publish(topic: str, payload: str) -> None:
        assert link is not None
        link.publish(topic, payload)

    station = Station(data_dir, publish, prefix=args.topic_prefix, event=args.event,
                      site=args.site, broker_user=address.username)
    try:  # the journal is closed however the station ends, a bad option included
        if args.pairings:
            try:
                text = Path(args.pairings).read_text(encoding="utf-8-sig")
            except OSError as exc:
                raise BoardCtlError(f"--pairings: {exc}") from None
            station.import_pairings("command line", text, args.pairings)
        link = StationLink(address, station.deliver, station.connection, prefix=args.topic_prefix,
                           client_id=args.client_id or address.username or STATION_ID,
                           ca_file=Path(args.ca_file) if args.ca_file else None)
        pusher = None
        if args.push_url:
            if not args.push_round:
                raise BoardCtlError("--push-url needs --push-round N")
            token = None
            if args.push_token_file:
                try:
                    token = Path(args.push_token_file).read_text(encoding="utf-8").strip()
                except OSError as exc:
                    raise BoardCtlError(f"--push-token-file: {exc}") from None
            round_name = str(args.push_round)
            pusher = Pusher(args.push_url, token, round_name,
                            lambda: round_pgn(station.hall, round_name, station.pairings,
                                              station.event, station.site))
        broker = f"{address.host}:{address.port}"
        stopped = threading.Event()

        def start(loop: asyncio.AbstractEventLoop) -> None:
            assert link is not None
            link.start()
            link.watch(loop)
            threading.Thread(target=_watch_broker,
                             args=(link, address.host, address.port, stopped),
                             name="broker-watch", daemon=True).start()

        def stop() -> None:
            stopped.set()
            if link is not None:
                link.stop()

        app = build_app(station, users, load_secret(data_dir / "session.key"),
                        secure_cookies=args.secure_cookies, pusher=pusher,
                        on_start=start, on_stop=stop)
        backlog = listen_backlog()  # also how many asyncio accepts at once: uvicorn's 2,048
        # would take every descriptor in one burst
        sock = _bind(host, port, backlog)
        try:
            print(f"board-ctl arbiter: http://{host}:{port}/ (arbiters: /arbiter), "
                  f"broker {broker}", file=sys.stderr, flush=True)
            # X-Forwarded-For only from a configured proxy: uvicorn trusts 127.0.0.1's by
            # default, and anyone on the station's machine could then claim any address
            config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2,
                                    proxy_headers=bool(args.forwarded_allow_ips),
                                    forwarded_allow_ips=args.forwarded_allow_ips or None,
                                    backlog=backlog)
            uvicorn.Server(config).run(sockets=[sock])
        finally:
            sock.close()
    finally:
        station.close()
    return 0
