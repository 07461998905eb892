"""[dgt] and [chesslink], --dgt and --chesslink: checked where they enter, one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from board_ctl.config import ConfigError, parse_config
from servicekit import board_ctl


@pytest.mark.parametrize("text, message", [
    ('[dgt]\nport = "socket://localhost:1234"\n', "dgt.port: 'socket://localhost:1234' is a URL"),
    ('[chesslink]\nport = "pty:"\n', "chesslink.port: pty: must name the link"),
    ('[dgt]\nserialnr = "12ab5"\n', "dgt.serialnr: must be 5 to 10 digits"),
    ('[dgt]\nport = "pty:/tmp/x"\n[chesslink]\nport = "pty:/tmp/x"\n',
     "chesslink.port is 'pty:/tmp/x', already used by dgt.port"),
    ('[board]\nbackend = "serial"\n[serial]\nport = "/dev/ttyGS0"\n[dgt]\nport = "/dev/ttyGS0"\n',
     "dgt.port is '/dev/ttyGS0', already used by serial.port"),
    ('[chesslink]\nparity_bit = "yes"\n', "chesslink.parity_bit must be true or false"),
])
def test_bad_app_port_settings_are_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "board.toml")
    assert message in str(caught.value)


def test_good_settings() -> None:
    config = parse_config('[dgt]\nport = "/dev/ttyGS0"\nserialnr = "12345"\n'
                          '[chesslink]\nport = "pty:/run/board-ctl/chesslink"\n')
    assert config.dgt.port == "/dev/ttyGS0" and config.chesslink.parity_bit


def test_the_options_are_named_in_their_errors(tmp_path: Path) -> None:
    result = board_ctl("run", "--dgt", "rfc2217://x:1", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("board-ctl run: --dgt: 'rfc2217://x:1' is a URL")
    assert len(result.stderr.splitlines()) == 1


def test_a_pty_link_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    result = board_ctl("run", "--once", "--chesslink", f"pty:{tmp_path}/missing/dir/link",
                       cwd=tmp_path)
    assert result.returncode == 1
    assert "cannot make the link" in result.stderr and len(result.stderr.splitlines()) == 1
