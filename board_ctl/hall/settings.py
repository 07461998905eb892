"""Where and as whom a board publishes: the `[mqtt]` section (or `--mqtt URL --board-id
ID`) checked and resolved once, at start-up, into what the publisher needs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import SplitResult, unquote, urlsplit

from board_ctl.errors import ConfigError

BOARD_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
PORTS = {"mqtt": 1883, "mqtts": 8883}
SESSION_EXPIRY = 7 * 24 * 3600  # s the broker keeps a board's session (its commands) offline


@dataclass(frozen=True)
class MqttSettings:
    host: str
    port: int
    board_id: str
    username: str
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    ca_file: str | None = None
    prefix: str = "board-ctl"
    tags: dict[str, str] = field(default_factory=dict)  # the hall's tags for every game

    @property
    def url(self) -> str:
        """The broker, as said in messages (never with the password)."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    @property
    def client_id(self) -> str:
        # fixed: the broker keeps the board's session (its subscription, commands queued
        # while it was away) under this id. The user name: the shipped broker config makes
        # every client id its user's name (use_username_as_clientid), so no other
        # credential can take this connection or session over (docs/mqtt.md).
        return self.username

    def topic(self, leaf: str) -> str:
        return f"{self.prefix}/{self.board_id}/{leaf}"


def check_prefix(prefix: str, key: str = "mqtt.topic_prefix") -> str:
    if not prefix or prefix.startswith("/") or prefix.endswith("/") or \
            any(c in prefix for c in "#+\0") or "//" in prefix:
        raise ConfigError(f"{key} must be topic levels without wildcards, such as "
                          f"\"board-ctl\" or \"club/boards\", got {prefix!r}")
    return prefix


def check_board_id(board_id: str, key: str = "mqtt.board_id") -> str:
    if not BOARD_ID.fullmatch(board_id):
        raise ConfigError(f"{key} must be 1-64 letters, digits, '_' or '-' (it is a topic "
                          f"level and the board's MQTT user), got {board_id!r}")
    return board_id


def check_url(url: str, key: str = "mqtt.url") -> tuple[SplitResult, int]:
    """The broker's URL split, and its port; a ConfigError naming `key` if it is not
    mqtt://HOST[:PORT] or mqtts://HOST[:PORT]."""
    parts = urlsplit(url)
    if parts.scheme not in PORTS:
        raise ConfigError(f"{key} must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT], "
                          f"got {url!r}")
    try:
        port = parts.port or PORTS[parts.scheme]
    except ValueError:
        raise ConfigError(f"{key} has a bad port: {url!r}") from None
    if not parts.hostname or parts.path not in ("", "/") or parts.query:
        raise ConfigError(f"{key} must be mqtt://HOST[:PORT] (no path), got {url!r}")
    return parts, port


def resolve(url: str, board_id: str, *, username: str = "", password_file: str = "",
            topic_prefix: str = "board-ctl", ca_file: str = "",
            tags: dict[str, str] | None = None) -> MqttSettings:
    """The settings of `[mqtt]`; a ConfigError naming the key that is wrong."""
    parts, port = check_url(url)
    check_board_id(board_id)
    password = unquote(parts.password) if parts.password is not None else None
    if password_file:
        if password is not None:
            raise ConfigError("the password is given twice: in mqtt.url and in "
                              "mqtt.password_file; keep the file")
        path = Path(password_file).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"mqtt.password_file: cannot read {path}: "
                              f"{getattr(exc, 'strerror', None) or exc}") from None
        password = lines[0] if lines else ""
    if ca_file:
        if parts.scheme != "mqtts":
            raise ConfigError("mqtt.ca_file is for an mqtts:// broker")
        if not Path(ca_file).expanduser().is_file():
            raise ConfigError(f"mqtt.ca_file: no such file {ca_file}")
    user = unquote(parts.username) if parts.username else (username or board_id)
    assert parts.hostname  # (check_url refused a URL without one)
    return MqttSettings(host=parts.hostname, port=port, board_id=board_id, username=user,
                        password=password, tls=parts.scheme == "mqtts",
                        ca_file=str(Path(ca_file).expanduser()) if ca_file else None,
                        prefix=check_prefix(topic_prefix), tags=dict(tags or {}))
