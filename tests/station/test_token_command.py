"""`mjtable station token --role ROLE`: a new token, and the line to paste in the configuration."""

from __future__ import annotations

import re

from controller.service.config import parse_config
from station.web.auth import hash_token, role_of
from tests.support.commands import mjtable


def test_prints_a_token_and_the_configuration_line_of_its_hash() -> None:
    done = mjtable("station", "token", "--role", "technician")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    token = lines[1].strip()
    line = lines[3].strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    assert line == f'technician = "{hash_token(token)}"'
    config = parse_config(
        b'[table]\nnumber = 7\n[rules]\nprofile = "wenzhou"\n'
        b"[station.tokens]\n" + line.encode() + b"\n"
    )
    assert config.station is not None
    assert role_of(token, config.station.tokens) == "technician"
    assert token not in line  # only the hash goes to the configuration
    again = mjtable("station", "token", "--role", "technician")
    assert again.stdout.splitlines()[1].strip() != token


def test_an_unknown_role_is_refused_in_one_line() -> None:
    done = mjtable("station", "token", "--role", "admin")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "mjtable station: --role: expected one of viewer, dealer, technician, got 'admin'"
    )
    assert done.stdout == ""
