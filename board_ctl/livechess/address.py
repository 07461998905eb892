"""Where the endpoint listens: ``HOST:PORT``, ``HOST``, ``:PORT`` or ``PORT``; IPv6 in
brackets (``[::1]:1982``). LiveChess listens on 1982, and clients assume it."""

from __future__ import annotations

from dataclasses import dataclass

from board_ctl.errors import ConfigError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 1982
DEFAULT_LISTEN = f"{DEFAULT_HOST}:{DEFAULT_PORT}"


@dataclass(frozen=True)
class Listen:
    host: str
    port: int  # 0: any free port (tests)

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port if port is None else port}/api/v1.0"


def parse_listen(text: str, name: str = "livechess.listen") -> Listen:
    """The address in `text`, or a ConfigError naming `name` and what is wrong."""
    spec = text.strip()
    host, port_text = spec, ""
    if spec.startswith("["):  # [v6]:port or [v6]
        end = spec.find("]")
        rest = spec[end + 1:] if end > 0 else "?"
        if rest and not rest.startswith(":"):
            raise ConfigError(f"{name}: {text!r} is not HOST:PORT ([::1]:1982 for IPv6)")
        host, port_text = spec[1:end], rest[1:]
    elif spec.isdigit():
        host, port_text = "", spec
    elif spec.count(":") == 1:
        host, port_text = spec.split(":")
    elif ":" in spec:
        raise ConfigError(f"{name}: put an IPv6 address in brackets: [{spec}]:{DEFAULT_PORT}")
    if port_text and not port_text.isdigit():
        raise ConfigError(f"{name}: the port in {text!r} is not a number")
    port = int(port_text) if port_text else DEFAULT_PORT
    if not 0 <= port <= 65535:
        raise ConfigError(f"{name}: port {port} is out of range (0-65535)")
    if any(c.isspace() for c in host):
        raise ConfigError(f"{name}: {text!r} is not HOST:PORT")
    return Listen(host or DEFAULT_HOST, port)
