"""The README's pictures, made from the running code (nothing drawn by hand):

- docs/images/terminal-view.svg: `board-ctl run`'s live terminal view (rich's SVG
  export) in the middle of the demo game, a piece knocked over and the LEDs asking for
  it back: the service on a board that plays the demo's real sensor log;
- docs/images/station-grid.png: the arbiter station's grid in Chromium, four boards
  playing through Mosquitto, two alerts open: the screenshot the browser test
  tests/test_station_live.py::test_the_arbiter_in_a_browser takes (it needs
  mosquitto, chromium and Playwright's Python package);
- docs/images/wiring-*.svg: tools/wiring_diagram.py's diagrams.

    python3 tools/readme_images.py [--only terminal|station|wiring]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "images"
TERMINAL = "terminal-view.svg"
STATION = "station-grid.png"
STATION_TEST = "tests/test_station_live.py::test_the_arbiter_in_a_browser"
STATION_SHOT = "station-arbiter-alert.png"  # the test's screenshot with the alerts open
DEMO_PLIES = 13  # the demo game up to this ply (12... Bxf6: the pieces all in play)
WIDTH = 100  # columns of the terminal


def terminal_view_svg() -> str:
    """The rich view of a service on a fake board fed the demo's own sensor log up to
    DEMO_PLIES, then a knight of the side not to move knocked over: the alert and the
    LED signs."""
    import importlib.resources

    import chess
    from rich.console import Console

    from board_ctl.core import events as ev
    from board_ctl.core.profiles import PROFILES
    from board_ctl.sensorlog import load_sensor_log
    from board_ctl.service.game import OutputNamer
    from board_ctl.service.richview import render
    from board_ctl.service.service import RunOptions, Service
    from board_ctl.service.view import ViewState

    class Board:  # the board's side: events put on the service's queue, frames kept
        description = "board emulator playing the demo game at 1x"
        identity = "README picture"

        def start(self, put: object) -> None: ...

        def send_leds(self, frame: object) -> None: ...

        def stop(self) -> None: ...

    class Recorder:
        state: ViewState | None = None
        messages: list[str] = []

        def show(self, state: ViewState, effects: object) -> None:
            self.state = state

        def message(self, text: str) -> None:
            self.messages.append(text)

        def close(self) -> None: ...

    demo = importlib.resources.files("board_ctl").joinpath("data", "demo-opera-game.jsonl")
    with importlib.resources.as_file(demo) as path:
        log = load_sensor_log(path)
    view = Recorder()
    view.messages = []
    with tempfile.TemporaryDirectory() as tmp:
        here = os.getcwd()
        os.chdir(tmp)  # the files it names: games/... as in a working directory
        service = Service(Board(), profile=PROFILES["fide"], start=log.start,
                          namer=OutputNamer(Path("games")), options=RunOptions(), view=view)
        service.open()
        service.handle(ev.Snapshot(0.0, chess.Board(log.start.fen).occupied))  # connected
        t = 0.0
        for event in log.events:
            service.handle(event)
            t = event.t
            if service.session is not None and len(service.session.record.moves) >= DEMO_PLIES:
                break
        session = service.session
        assert session is not None
        board = session.referee.board
        # the other side's knight knocked off its square, out of reach
        knight = next(iter(chess.SquareSet(board.pieces(chess.KNIGHT, not board.turn))))
        service.handle(ev.Lifted(t + 1.0, knight))
        service.handle(ev.Tick(t + 4.0))
        state = service.state()
        messages = [m for m in view.messages if not m.startswith("board:")][-3:]
        service.close()
        os.chdir(here)
    out = io.StringIO()
    console = Console(record=True, width=WIDTH, file=out, force_terminal=True,
                      color_system="truecolor")
    console.print(render(state, messages, WIDTH, colour=True))
    return console.export_svg(title="board-ctl run", unique_id="board-ctl-run")


def station_grid_png(into: Path) -> None:
    """Run the station's browser test, keeping its screenshots, and take the grid's."""
    with tempfile.TemporaryDirectory() as shots:
        env = dict(os.environ, BOARD_CTL_ARTIFACTS=shots, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-m", "pytest", STATION_TEST, "-n", "0",
                               "-q", "-p", "no:cacheprovider"], cwd=ROOT, env=env)
        shot = Path(shots) / STATION_SHOT
        if done.returncode != 0 or not shot.is_file():
            raise SystemExit(f"readme_images: {STATION_TEST} did not pass (status "
                             f"{done.returncode}): no screenshot of the station")
        shutil.copy(shot, into)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("terminal", "station", "wiring"))
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "terminal"):
        (OUT / TERMINAL).write_text(terminal_view_svg(), encoding="utf-8")
        print(f"wrote {OUT / TERMINAL}")
    if args.only in (None, "wiring"):
        import wiring_diagram

        wiring_diagram.main([])
    if args.only in (None, "station"):
        station_grid_png(OUT / STATION)
        print(f"wrote {OUT / STATION}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
