"""docs/hardware.md, the builder's page: its wiring diagrams are what the pin
configuration draws now (a pin moved in the firmware or the config and not redrawn fails
here), every pin the firmware uses is on the Pico's, its commands exist and the firmware
installer's runs; the README's pictures are there and the tool makes the terminal one
from the running code."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import pytest

from board_ctl.cli import build_parser
from firmware_bridge.emulator import build_parser as build_emulator_parser
from servicekit import ROOT, child_env
from test_docs import commands, unknown_words

sys.path.insert(0, str(ROOT / "tools"))
import readme_images  # noqa: E402
import wiring_diagram  # noqa: E402

PAGE = ROOT / "docs" / "hardware.md"
IMAGES = ROOT / "docs" / "images"


@pytest.mark.parametrize("name", [wiring_diagram.PICO_SVG, wiring_diagram.PI_SVG])
def test_the_committed_diagrams_are_what_the_pins_draw(name: str) -> None:
    drawn = wiring_diagram.diagrams()[name]
    committed = (IMAGES / name).read_text(encoding="utf-8")
    assert committed == drawn, f"docs/images/{name} is stale: python3 tools/wiring_diagram.py"
    xml.dom.minidom.parseString(committed)  # a well-formed SVG


def svg_texts(svg: str) -> list[str]:
    return [node.firstChild.data for node in
            xml.dom.minidom.parseString(svg).getElementsByTagName("text") if node.firstChild]


def test_every_pin_the_firmware_uses_is_on_the_picos_diagram() -> None:
    from firmware_bridge.fakepins import load_firmware

    config = load_firmware().DEFAULT_CONFIG
    texts = svg_texts(wiring_diagram.pico_svg())
    labels = " | ".join(texts)
    used = [*config["rows"], *config["cols"], *config["key_rows"],
            *(n for n, _ in config["lever"]), config["pixels"]]
    for gp in used:
        # the pin's square is labelled, and it has its function's text beside it
        assert any(re.fullmatch(rf"\d+ GP{gp}|GP{gp} \d+", t) for t in texts), gp
    assert "row 1 (rank 1)" in labels and "column h (file h)" in labels
    assert "clock lever, white side" in labels and "WS2812 data in" in labels
    assert "white draw offer" in labels and "promote Q" in labels


def test_the_drawing_follows_the_configuration(tmp_path: Path) -> None:
    """A configuration with other pins draws other pins; --check says a file is stale."""
    example = wiring_diagram.EXAMPLE.read_text(encoding="utf-8")
    moved = example.replace("rows = [4, 17, 27, 22, 5, 6, 13, 19]",
                            "rows = [4, 17, 27, 22, 5, 6, 13, 21]")
    assert moved != example
    config = tmp_path / "board.toml"
    config.write_text(moved, encoding="utf-8")
    texts = svg_texts(wiring_diagram.pi_svg(config))
    assert "row 8 (rank 8)" in texts
    # GPIO21 is physical pin 40 (right column), GPIO19 pin 35 (left)
    drawn = wiring_diagram.pi_svg(config)
    assert drawn != wiring_diagram.pi_svg(wiring_diagram.EXAMPLE)
    out = tmp_path / "images"
    assert wiring_diagram.main(["--config", str(config), "--out", str(out)]) == 0
    assert wiring_diagram.main(["--config", str(config), "--out", str(out), "--check"]) == 0
    assert wiring_diagram.main(["--out", str(out), "--check"]) == 1  # the example's differ


def test_the_pages_pictures_exist() -> None:
    text = PAGE.read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert {"images/wiring-pico.svg", "images/wiring-pi-gpio.svg"} <= set(pictures)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert {"docs/images/terminal-view.svg", "docs/images/station-grid.png"} <= set(shown)
    for path in [PAGE.parent / p for p in pictures] + [ROOT / p for p in shown]:
        assert path.is_file(), path


def test_the_pages_commands_exist() -> None:
    shown = commands(PAGE, "board-ctl")
    assert len(shown) >= 4
    wrong = {" ".join(w): unknown_words(w, build_parser()) for w in shown if w}
    assert {k: v for k, v in wrong.items() if v} == {}
    emulator = commands(PAGE, "board-emulator")
    assert emulator
    wrong = {" ".join(w): unknown_words(w, build_emulator_parser()) for w in emulator}
    assert {k: v for k, v in wrong.items() if v} == {}
    assert ["tools/wiring_diagram.py"] in commands(PAGE, "python3")


def test_the_firmware_installer_the_page_shows_runs() -> None:
    [shown] = [w for w in commands(PAGE, "python3") if "--dry-run" in w]
    done = subprocess.run([sys.executable, *shown], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    copy = done.stdout.split()
    assert copy[:3] == ["mpremote", "connect", "/dev/ttyACM0"]
    sources = [Path(w).name for w in copy if w.endswith(".py") and not w.startswith(":")]
    assert sources[0] == "protocol.py" and sources[-1] == "main.py"  # main.py last


def test_the_terminal_picture_is_made_from_the_running_code() -> None:
    svg = readme_images.terminal_view_svg()
    xml.dom.minidom.parseString(svg)
    plain = " ".join(svg_texts(svg)).replace("\xa0", " ")
    assert "position-mismatch" in plain and "put back the pieces on" in plain
    assert "Moves:" in plain
