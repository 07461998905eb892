"""What the browser is told to allow on the station's pages: no framing by another site
(X-Frame-Options, CSP frame-ancestors: a page elsewhere could frame a signed-in
arbiter's page and trick him into clicking), and a Content-Security-Policy that lets the
pages load only their own script, styles and data.

The board diagrams are python-chess's SVG, whose pieces carry `style` attributes: those
few values are allowed by their hashes (CSP `'unsafe-hashes'`), found by drawing every
piece, so no other inline style can run."""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache

import chess
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from board_ctl.station.views import diagram


@cache
def diagram_styles() -> tuple[str, ...]:
    """Every `style` attribute value the station's diagrams use (views.diagram, drawn
    here with all twelve pieces, a king in check, a last move, alert squares, in the
    grid's size and the board page's)."""
    board = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2")
    board.push_san("Qh4#")
    values: set[str] = set()
    for size in (200, 400):
        svg = diagram(board.fen(), board.peek().uci(), ("e4", "h4"), size)
        values.update(re.findall(r'style="([^"]*)"', svg))
    return tuple(sorted(values))


def _hash(value: str) -> str:
    digest = hashlib.sha256(value.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


@cache
def content_security_policy() -> str:
    styles = " ".join(_hash(value) for value in diagram_styles())
    return "; ".join([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        f"style-src-attr 'unsafe-hashes' {styles}",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


def headers() -> list[tuple[bytes, bytes]]:
    return [(b"content-security-policy", content_security_policy().encode("ascii")),
            (b"x-frame-options", b"DENY"),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin")]


class SecurityHeaders:
    """ASGI middleware: the headers above on every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.headers = headers()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in self.headers}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                message = {**message, "headers": kept + self.headers}
            await send(message)

        await self.app(scope, receive, with_headers)
