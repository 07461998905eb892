"""The wiring diagrams of docs/hardware.md, drawn from the pin configuration itself, so
that they cannot drift from the code:

- docs/images/wiring-pico.svg: the Raspberry Pi Pico of the usual board, from the
  firmware's pins (firmware_bridge/firmware/app.py DEFAULT_CONFIG);
- docs/images/wiring-pi-gpio.svg: the matrix on a Raspberry Pi's own pins, from a
  board-ctl configuration's [gpio] and [status] keys (config/board.example.toml unless
  --config names another: draw your own board's).

    python3 tools/wiring_diagram.py [--config FILE] [--out DIR] [--check]

--check writes nothing and exits 1 when a file differs from what the configuration
draws now (tests/test_hardware_docs.py does the same).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "images"
PICO_SVG = "wiring-pico.svg"
PI_SVG = "wiring-pi-gpio.svg"
EXAMPLE = ROOT / "config" / "board.example.toml"

# The Pico's 40 pins, physical order: 1-20 down the left edge, 21-40 up the right one.
PICO_HEADER = [
    "GP0", "GP1", "GND", "GP2", "GP3", "GP4", "GP5", "GND", "GP6", "GP7",
    "GP8", "GP9", "GND", "GP10", "GP11", "GP12", "GP13", "GND", "GP14", "GP15",
    "GP16", "GP17", "GND", "GP18", "GP19", "GP20", "GP21", "GND", "GP22", "RUN",
    "GP26", "GP27", "GND", "GP28", "ADC_VREF", "3V3(OUT)", "3V3_EN", "GND", "VSYS", "VBUS",
]
# The Pi's 40-pin header, physical order (odd pins one column, even pins the other).
PI_HEADER = [
    "3V3", "5V", "GPIO2", "5V", "GPIO3", "GND", "GPIO4", "GPIO14", "GND", "GPIO15",
    "GPIO17", "GPIO18", "GPIO27", "GND", "GPIO22", "GPIO23", "3V3", "GPIO24", "GPIO10", "GND",
    "GPIO9", "GPIO25", "GPIO11", "GPIO8", "GND", "GPIO7", "GPIO0", "GPIO1", "GPIO5", "GND",
    "GPIO6", "GPIO12", "GPIO13", "GND", "GPIO19", "GPIO16", "GPIO26", "GPIO20", "GND", "GPIO21",
]
COLOURS = {"row": "#1f5fbf", "column": "#1d8a3a", "keys": "#7a3fb0", "lever": "#c05a00",
           "leds": "#c0262d", "status": "#127a7a", "power": "#555555"}
GROUP_NAMES = {"row": "matrix rows (ranks, driven low one at a time)",
               "column": "matrix columns (files, inputs with pull-ups)",
               "keys": "button rows (sharing the columns)",
               "lever": "clock lever (closed to ground)",
               "leds": "square LEDs (WS2812 data, through a 5 V level shifter)",
               "status": "status LEDs, buzzer, buttons on their own pins",
               "power": "power and ground"}


@dataclass(frozen=True)
class Wire:
    pin: str  # the header's name of the pin (GP0, GPIO17)
    what: str  # what is wired to it
    group: str  # a key of COLOURS
    note: str = ""  # more, written under the drawing


def pico_wires() -> list[Wire]:
    """Every pin the firmware uses, from its DEFAULT_CONFIG."""
    from firmware_bridge import protocol as P
    from firmware_bridge.fakepins import load_firmware

    config = load_firmware().DEFAULT_CONFIG
    files, ranks = "abcdefgh", "12345678"
    wires = [Wire(f"GP{n}", f"row {ranks[i]} (rank {ranks[i]})", "row")
             for i, n in enumerate(config["rows"])]
    wires += [Wire(f"GP{n}", f"column {files[i]} (file {files[i]})", "column")
              for i, n in enumerate(config["cols"])]
    names = {P.PROMOTE_Q: "promote Q", P.PROMOTE_R: "promote R", P.PROMOTE_B: "promote B",
             P.PROMOTE_N: "promote N", P.ARBITER: "arbiter", P.TAKEBACK: "takeback",
             P.HINT: "hint", P.DRAW_OFFER: "draw offer", P.DRAW_ACCEPT: "draw accept",
             P.CLAIM: "claim", P.RESIGN: "resign"}
    sides = {P.WHITE: "white ", P.BLACK: "black ", P.NO_SIDE: ""}
    for k, n in enumerate(config["key_rows"]):
        keys = [f"{files[col]}: {sides[side]}{names[code]}"
                for row, col, code, side in config["keys"] if row == k]
        wires.append(Wire(f"GP{n}", f"button row {k + 1}", "keys",
                          f"button row {k + 1} (GP{n}), by column: " + ", ".join(keys)))
    for n, side in config["lever"]:
        wires.append(Wire(f"GP{n}", f"clock lever, {'white' if side == P.WHITE else 'black'}"
                          " side", "lever"))
    wires.append(Wire(f"GP{config['pixels']}", "WS2812 data in (a1 first, then b1 ... h8"
                      + (", zig-zag)" if config["serpentine"] else ", each rank left to right)"),
                      "leds"))
    for key, label in (("status", ("white to move", "black to move", "alert", "game over")),
                       ("promotion", ("promotes to Q", "to R", "to B", "to N"))):
        for n, what in zip(config[key] or (), label):
            wires.append(Wire(f"GP{n}", f"{what} LED", "status"))
    if config["computer"] is not None:
        wires.append(Wire(f"GP{config['computer']}", "computer LED", "status"))
    if config["buzzer"] is not None:
        wires.append(Wire(f"GP{config['buzzer']}", "buzzer", "status"))
    wires += [Wire("VBUS", "5 V from USB: the LED supply's 5 V side (see the parts list)",
                   "power"), Wire("GND", "ground: switches' levers, LED supply, shifter",
                                  "power")]
    return wires


def pi_wires(config_path: Path) -> list[Wire]:
    """Every pin a board-ctl configuration gives the matrix, levers, buttons and LEDs."""
    from board_ctl.config import load_config

    config = load_config(config_path)
    gpio, status = config.gpio, config.status
    files, ranks = "abcdefgh", "12345678"
    wires = [Wire(f"GPIO{n}", f"row {ranks[i]} (rank {ranks[i]})", "row")
             for i, n in enumerate(gpio.rows)]
    wires += [Wire(f"GPIO{n}", f"column {files[i]} (file {files[i]})", "column")
              for i, n in enumerate(gpio.cols)]
    for n, side in ((gpio.clock_white, "white"), (gpio.clock_black, "black")):
        if n is not None:
            wires.append(Wire(f"GPIO{n}", f"clock lever, {side} side", "lever"))
    buttons = gpio.buttons
    for name in buttons.__dataclass_fields__:
        n = getattr(buttons, name)
        if isinstance(n, int):
            wires.append(Wire(f"GPIO{n}", f"button: {name.replace('_', ' ')}", "status"))
    for name in ("white_to_move", "black_to_move", "alert", "game_over", "buzzer",
                 "computer", "promote_q", "promote_r", "promote_b", "promote_n"):
        n = getattr(status, name)
        if n is not None:
            kind = "buzzer" if name == "buzzer" else f"{name.replace('_', ' ')} LED"
            wires.append(Wire(f"GPIO{n}", kind, "status"))
    return wires


# ---------------------------------------------------------------- drawing

PIN_GAP = 22  # px between two pins
PIN = 12  # px a pin's square
FONT = "font-family='DejaVu Sans, Arial, sans-serif'"


def _text(x: float, y: float, text: str, size: int = 12, anchor: str = "start",
          colour: str = "#222", weight: str = "normal") -> str:
    return (f"<text x='{x:.0f}' y='{y:.0f}' font-size='{size}' text-anchor='{anchor}' "
            f"fill='{colour}' font-weight='{weight}' {FONT}>{escape(text)}</text>")


def _legend(x: float, y: float, groups: list[str]) -> list[str]:
    out = [_text(x, y, "Colours", 13, weight="bold")]
    for i, group in enumerate(groups):
        yy = y + 20 + i * 18
        out.append(f"<rect x='{x:.0f}' y='{yy - 10:.0f}' width='12' height='12' "
                   f"fill='{COLOURS[group]}'/>")
        out.append(_text(x + 18, yy, GROUP_NAMES[group], 12))
    return out


def _line(x1: float, y1: float, x2: float, y2: float, colour: str = "#222") -> str:
    return (f"<line x1='{x1:.0f}' y1='{y1:.0f}' x2='{x2:.0f}' y2='{y2:.0f}' "
            f"stroke='{colour}' stroke-width='2'/>")


def _cell(x: float, y: float) -> list[str]:
    """One square of the matrix: the column line, the diode (anode to the column), the
    reed switch, the row line."""
    c, r = COLOURS["column"], COLOURS["row"]
    m = y + 36  # the wire's height
    return [
        _text(x, y, "One square of the matrix (64 of them)", 13, weight="bold"),
        _line(x, m, x + 90, m, c),
        _text(x, m - 8, "column (file)", 11, colour=c),
        # the diode: a triangle from the column (anode) to the switch (cathode), a bar
        f"<polygon points='{x + 90:.0f},{m - 8:.0f} {x + 90:.0f},{m + 8:.0f} "
        f"{x + 106:.0f},{m:.0f}' fill='#222'/>",
        _line(x + 106, m - 8, x + 106, m + 8),
        _text(x + 98, m + 26, "diode 1N4148", 11, "middle"),
        _line(x + 106, m, x + 150, m),
        # the reed switch: two blades in a glass tube, open until a magnet comes
        f"<rect x='{x + 150:.0f}' y='{m - 10:.0f}' width='70' height='20' rx='10' "
        f"fill='none' stroke='#888'/>",
        _line(x + 150, m, x + 184, m - 4),
        _line(x + 188, m, x + 220, m),
        _text(x + 185, m + 26, "reed switch", 11, "middle"),
        _line(x + 220, m, x + 320, m, r),
        _text(x + 320, m - 8, "row (rank)", 11, "end", colour=r),
        _text(x, m + 54, "A magnet in the piece closes the switch; the row driven low pulls "
              "its column low", 11),
        _text(x, m + 70, "through the diode. The diodes stop a current sneaking back "
              "through three closed", 11),
        _text(x, m + 86, "switches, which would make a fourth square read occupied "
              "(ghosting).", 11),
    ]


def draw(title: str, subtitle: str, header: list[str], wires: list[Wire], *,
         pico: bool) -> str:
    """An SVG of the header with every wired pin labelled, the legend, and one square's
    wiring. `pico`: the Pico's two edges of 20 (1-20 down, 21-40 up); else the Pi's
    2x20 header (odd pins left, even right)."""
    by_pin: dict[str, list[Wire]] = {}
    for wire in wires:
        by_pin.setdefault(wire.pin, []).append(wire)
    if pico:
        left = list(range(0, 20))
        right = list(range(39, 19, -1))
    else:
        left = list(range(0, 40, 2))
        right = list(range(1, 40, 2))
    notes = [w.note for w in wires if w.note]
    width, top = 1100, 110
    board_x, board_w = 400, 300
    height = top + 20 * PIN_GAP + 220 + 18 * len(notes)
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           f"viewBox='0 0 {width} {height}'>",
           f"<rect width='{width}' height='{height}' fill='white'/>",
           _text(20, 30, title, 18, weight="bold"),
           _text(20, 52, subtitle, 12, colour="#555"),
           _text(board_x + board_w / 2, top - 30, (
               "Raspberry Pi Pico (top view, USB at the top)" if pico
               else "Raspberry Pi: the 40-pin header (pin 1 top left)"), 13, "middle",
               weight="bold"),
           f"<rect x='{board_x}' y='{top - 18}' width='{board_w}' "
           f"height='{20 * PIN_GAP + 10}' rx='8' fill='#2e6b3a' stroke='#1d4a27'/>"]
    groups_used: list[str] = []
    for column, indices in ((0, left), (1, right)):
        for row, index in enumerate(indices):
            name = header[index]
            y = top + row * PIN_GAP
            x = board_x + (6 if column == 0 else board_w - 6 - PIN)
            wired = by_pin.get(name, [])
            if name == "GND" and not pico:
                wired = []
            colour = COLOURS[wired[0].group] if wired else "#e8e8e8"
            out.append(f"<rect x='{x}' y='{y - PIN + 3}' width='{PIN}' height='{PIN}' "
                       f"fill='{colour}' stroke='#333'/>")
            label_x = x + PIN + 4 if column == 0 else x - 4
            out.append(_text(label_x, y, f"{index + 1} {name}" if column == 0
                             else f"{name} {index + 1}", 10,
                             "start" if column == 0 else "end", "white"))
            if not wired or (name == "GND" and row > 2 and pico):
                continue
            what = "; ".join(w.what for w in wired)
            group = wired[0].group
            if group not in groups_used:
                groups_used.append(group)
            if column == 0:
                out.append(f"<line x1='{x}' y1='{y - 3}' x2='{board_x - 30}' y2='{y - 3}' "
                           f"stroke='{COLOURS[group]}' stroke-width='2'/>")
                out.append(_text(board_x - 34, y, what, 11, "end", COLOURS[group]))
            else:
                out.append(f"<line x1='{x + PIN}' y1='{y - 3}' x2='{board_x + board_w + 30}' "
                           f"y2='{y - 3}' stroke='{COLOURS[group]}' stroke-width='2'/>")
                out.append(_text(board_x + board_w + 34, y, what, 11, "start",
                                 COLOURS[group]))
    base = top + 20 * PIN_GAP + 40
    out += _legend(20, base, [g for g in COLOURS if g in groups_used])
    out += _cell(620, base)
    for i, note in enumerate(notes):
        out.append(_text(20, base + 160 + 18 * i, note, 11, colour=COLOURS["keys"]))
    if notes:
        out.append(_text(20, base + 160 + 18 * len(notes), "Each button: a push button and "
                         "a diode from its row to its column, as a square's reed switch.",
                         11, colour=COLOURS["keys"]))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def pico_svg() -> str:
    return draw("The board's Raspberry Pi Pico: what goes on each pin",
                "Drawn by tools/wiring_diagram.py from the firmware's pins "
                "(firmware_bridge/firmware/app.py, DEFAULT_CONFIG)", PICO_HEADER,
                pico_wires(), pico=True)


def pi_svg(config: Path) -> str:
    shown = config.relative_to(ROOT) if config.is_relative_to(ROOT) else config
    return draw("The matrix on a Raspberry Pi's own pins (backend \"gpio\")",
                f"Drawn by tools/wiring_diagram.py from {shown} ([gpio], [status]; BCM "
                f"numbers)", PI_HEADER, pi_wires(config), pico=False)


def diagrams(config: Path = EXAMPLE) -> dict[str, str]:
    """File name -> SVG text, as the configuration draws them now."""
    return {PICO_SVG: pico_svg(), PI_SVG: pi_svg(config)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=EXAMPLE,
                        help="the board-ctl configuration whose [gpio] pins are drawn "
                             "(default: config/board.example.toml)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the SVGs go")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a file differs from the drawing")
    args = parser.parse_args(argv)
    stale = []
    for name, text in diagrams(args.config.resolve()).items():
        path = args.out / name
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    if stale:
        print(f"wiring_diagram: {', '.join(stale)} differ from the pin configuration: run "
              f"python3 tools/wiring_diagram.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
