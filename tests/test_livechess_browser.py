"""A real browser as the LiveChess client: Chromium (Debian's, driven by Playwright) on
an HTTPS page, as lichess.org/dgt is one.

The page runs lichess.org/dgt's sequence with the browser's own WebSocket (so its
handshake, its Origin header and its mixed-content and local-network rules are the real
ones), against the endpoint on the real service loop. Chromium is told to treat the
page's own server as a public site (`--ip-address-space-overrides`), which is what
lichess.org is to it. What this shows, and the README says:

- from an HTTPS page, ws://127.0.0.1 is allowed, once the user lets the site reach "apps
  and services on this device" (Chrome's Local Network Access prompt; granted here as a
  user would);
- ws:// to any other address (the Pi's address on the LAN) is blocked as mixed content,
  whatever the user allows: a browser on another machine needs an SSH tunnel.
"""

from __future__ import annotations

import contextlib
import http.server
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chess
import pytest

from board_ctl.core import events as ev
from board_ctl.simulate import render_game
from conftest import missing_tool
from livechesskit import QUICK, START, Rig, game_windows, log_events
from servicekit import excerpt

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--ignore-certificate-errors"]  # the page's certificate is made by the test

# lichess.org/dgt/play's side of the conversation, in the page's own terms (loose ==,
# `!!param.san`, new moves = san.length - lastLegalParam.san.length).
PAGE = b"""<!doctype html><html><head><meta charset="utf-8"></head><body><script>
const state = {messages: [], serialnr: '0', lastBoard: null, lastLegal: undefined,
               newMoves: [], errors: [], open: false};
window.state = state;
let ws;
window.connect = (url) => new Promise((resolve) => {
  try { ws = new WebSocket(url); }
  catch (e) { state.errors.push(e.name + ': ' + e.message); resolve(false); return; }
  ws.onopen = () => { state.open = true; ws.send('{"id":1,"call":"eboards"}'); };
  ws.onerror = () => { state.errors.push('error'); resolve(false); };
  ws.onmessage = (event) => {
    const message = JSON.parse(event.data);
    state.messages.push(message);
    if (message.response == 'feed' && !!message.param.board) {
      state.lastBoard = message.param.board; resolve(true);
    }
    if (message.response == 'call' && message.id == '1') {
      state.serialnr = message.param[0].serialnr;
      ws.send(JSON.stringify({id: 2, call: 'subscribe', param: {feed: 'eboardevent', id: 1,
                                                               param: {serialnr: state.serialnr}}}));
    } else if (message.response == 'feed' && !!message.param.san) {
      const san = message.param.san;
      if (san.length == 0) return;
      if (state.lastLegal !== undefined &&
          JSON.stringify(state.lastLegal.san) == JSON.stringify(san)) return;
      let count = 1;
      if (state.lastLegal !== undefined) count = san.length - state.lastLegal.san.length;
      state.lastLegal = message.param;
      for (let i = count; i > 0; i--) state.newMoves.push(String(san[san.length - i]).trim());
    }
  };
});
window.setup = (fen) => {
  ws.send(JSON.stringify({id: 3, call: 'call', param: {id: 1, method: 'setup', param: {fen: fen}}}));
  state.lastLegal = {board: '', san: []};
  state.newMoves = [];
};
</script></body></html>"""


class _Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def https_page(tmp_path: Path) -> Iterator[int]:
    """The page over HTTPS on 127.0.0.1 (a self-signed certificate); yields its port."""
    openssl = shutil.which("openssl")
    if openssl is None:
        missing_tool("openssl is not installed (apt-get install openssl)")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run([str(openssl), "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def browser_page(page_port: int, allow_local_network: bool) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_tool("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        missing_tool(f"{CHROMIUM} is not installed (apt-get install chromium)")
    origin = f"https://localhost:{page_port}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[*ARGS, f"--ip-address-space-overrides=127.0.0.1:{page_port}=public"])
        try:
            context = browser.new_context()
            if allow_local_network:  # what the user allows at Chrome's prompt
                context.grant_permissions(["local-network-access"], origin=origin)
            page = context.new_page()
            page.goto(f"{origin}/")
            assert page.evaluate("window.isSecureContext")
            yield page
        finally:
            browser.close()


@pytest.mark.slow
def test_a_browser_on_an_https_page_plays_the_lichess_sequence(tmp_path: Path) -> None:
    window = game_windows()[0]
    rendered = render_game(excerpt(window.game, 0, window.end + 2), seed=31, style=QUICK)
    hold = rendered.plies[window.start].first_line
    cut = (rendered.lines[hold - 1]["t"] + rendered.lines[hold]["t"]) / 2 + 1.0
    events = log_events(rendered.jsonl(), shift=1.0)
    with https_page(tmp_path) as page_port, browser_page(page_port, True) as page:
        rig = Rig(tmp_path, origins=(f"https://localhost:{page_port}",))
        try:
            rig.feed([ev.Snapshot(0.5, START)] + [e for e in events if e.t <= cut])
            assert page.evaluate(f"window.connect({rig.url!r})"), \
                page.evaluate("window.state.errors")
            mid = window.board_at(window.start).board_fen()
            assert page.evaluate("window.state.lastBoard") == mid
            assert page.evaluate("window.state.serialnr") == rig.endpoint.serialnr
            page.evaluate(f"window.setup({window.fen!r})")
            rig.take_command()
            page.wait_for_function(
                "window.state.messages.some(m => m.response == 'feed' && m.param.start == "
                f"{window.fen!r})", timeout=10_000)
            rig.feed(e for e in events if e.t > cut)
            expected = window.sans()
            page.wait_for_function(f"window.state.newMoves.length >= {len(expected)}",
                                   timeout=20_000)
            assert page.evaluate("window.state.newMoves")[:len(expected)] == expected
            assert page.evaluate("window.state.errors") == []
        finally:
            rig.close()


@pytest.mark.slow
def test_browsers_reach_the_board_from_https_only_on_127_0_0_1(tmp_path: Path) -> None:
    with https_page(tmp_path) as page_port:
        rig = Rig(tmp_path, origins=(f"https://localhost:{page_port}",))
        try:
            rig.feed([ev.Snapshot(0.5, START)])
            lan = rig.url.replace("127.0.0.1", "192.0.2.1")  # any address not this machine's
            with browser_page(page_port, allow_local_network=True) as page:
                assert page.evaluate(f"window.connect({rig.url!r})")
                assert page.evaluate("window.state.lastBoard") == chess.Board().board_fen()
                assert not page.evaluate(f"window.connect({lan!r})")
                errors = page.evaluate("window.state.errors")
                assert errors and errors[-1].startswith("SecurityError"), errors
                # a site not in [livechess] origins is refused by the endpoint itself
                other = Rig(tmp_path / "other", origins=("https://lichess.org",))
                try:
                    assert not page.evaluate(f"window.connect({other.url!r})")
                finally:
                    other.close()
            with browser_page(page_port, allow_local_network=False) as page:
                # a public site the user did not allow: Chrome blocks even 127.0.0.1
                assert not page.evaluate(f"window.connect({rig.url!r})")
                assert not page.evaluate("window.state.open")
        finally:
            rig.close()
