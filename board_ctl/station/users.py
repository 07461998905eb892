"""The station's users: one line per arbiter, the password stored as a salted scrypt hash.

    anna:scrypt:16384:8:1:<salt, base64>:<hash, base64>

Never the password itself; a check costs ~50 ms of scrypt, which is what makes a stolen
file slow to attack and a login cheap enough."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from board_ctl.errors import BoardCtlError

USER_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
N, R, P = 2 ** 14, 8, 1
MIN_PASSWORD = 8


class UsersError(BoardCtlError, ValueError):
    """A users file or a user that cannot be used; the message says which line."""


@dataclass(frozen=True)
class User:
    name: str
    n: int
    r: int
    p: int
    salt: bytes
    digest: bytes

    def line(self) -> str:
        b64 = base64.b64encode
        return (f"{self.name}:scrypt:{self.n}:{self.r}:{self.p}:"
                f"{b64(self.salt).decode()}:{b64(self.digest).decode()}")

    def check(self, password: str) -> bool:
        candidate = _scrypt(password, self.salt, self.n, self.r, self.p, len(self.digest))
        return hmac.compare_digest(candidate, self.digest)


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, length: int = 32) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p,
                          maxmem=256 * 1024 * 1024, dklen=length)


def make_user(name: str, password: str) -> User:
    if not USER_NAME.fullmatch(name):
        raise UsersError(f"user name {name!r}: letters, digits and _ . @ - only, at most 64")
    if len(password) < MIN_PASSWORD:
        raise UsersError(f"the password is shorter than {MIN_PASSWORD} characters")
    salt = secrets.token_bytes(16)
    return User(name, N, R, P, salt, _scrypt(password, salt, N, R, P))


def parse_users(text: str, source: str = "users") -> dict[str, User]:
    users: dict[str, User] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(":")
        if len(parts) != 7 or parts[1] != "scrypt":
            raise UsersError(f"{source}:{number}: not NAME:scrypt:N:r:p:SALT:HASH "
                             "(make users with board-ctl arbiter --add-user)")
        name = parts[0]
        try:
            n, r, p = int(parts[2]), int(parts[3]), int(parts[4])
            salt = base64.b64decode(parts[5], validate=True)
            digest = base64.b64decode(parts[6], validate=True)
        except ValueError:
            raise UsersError(f"{source}:{number}: a bad number or base64 field") from None
        if not USER_NAME.fullmatch(name) or n < 2 or n & (n - 1) or not digest:
            raise UsersError(f"{source}:{number}: a bad user name or scrypt parameter")
        if name in users:
            raise UsersError(f"{source}:{number}: user {name!r} is already on an earlier line")
        users[name] = User(name, n, r, p, salt, digest)
    return users


def load_users(path: Path) -> dict[str, User]:
    """The users of the file (none when it does not exist); UsersError when it cannot be
    used, also when others than its owner may read or write it: its hashes are what a
    password guesser needs, and whoever can write it can make himself an arbiter."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise UsersError(f"{path} is open to other users (mode {mode:04o}): run "
                             f"chmod 600 {path} (only its owner may read or change it)")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UsersError(f"cannot read {path}: {exc}") from None
    return parse_users(text, str(path))


def save_user(path: Path, user: User) -> bool:
    """Add the user, or replace the password of one already there; True when added.
    Written to a temporary file and renamed: a crash leaves the old file whole."""
    users = load_users(path)
    added = user.name not in users
    users[user.name] = user
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as stream:
        stream.write("".join(u.line() + "\n" for u in users.values()))
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(tmp, path)
    return added
