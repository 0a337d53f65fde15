"""Tokens, sessions and the failed-login limiter, with the time passed in."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from controller.service.config import ConfigError, parse_config
from controller.service.config_station import WebRole
from station.web.auth import (
    DIAG_ROLES,
    HASH_PREFIX,
    LoginLimiter,
    Sessions,
    hash_token,
    new_token,
    role_of,
)

BASE = b'[table]\nnumber = 7\n[rules]\nprofile = "wenzhou"\n'


def web_config(lines: str) -> bytes:
    return BASE + b"[station]\n" + lines.encode()


def test_a_new_token_is_random_and_its_hash_is_what_the_configuration_takes() -> None:
    tokens = {new_token() for _ in range(50)}
    assert len(tokens) == 50
    token = tokens.pop()
    assert len(token) >= 43  # 32 bytes of base64
    digest = hash_token(token)
    assert re.fullmatch(HASH_PREFIX + "[0-9a-f]{64}", digest)
    config = parse_config(web_config(f'[station.tokens]\ntechnician = "{digest}"\n'))
    assert config.station is not None
    assert config.station.tokens == {"technician": digest}
    assert config.station.faces == []  # no role sees faces unless told


def test_the_configuration_refuses_a_plaintext_token() -> None:
    token = new_token()
    with pytest.raises(ConfigError) as caught:
        parse_config(web_config(f'[station.tokens]\nviewer = "{token}"\n'))
    assert "never the token itself" in str(caught.value)


def test_the_configuration_refuses_an_unknown_role_and_a_hash_given_twice() -> None:
    digest = hash_token(new_token())
    with pytest.raises(ConfigError, match="expected a role"):
        parse_config(web_config(f'[station.tokens]\nboss = "{digest}"\n'))
    with pytest.raises(ConfigError, match="same hash twice"):
        parse_config(
            web_config(f'[station.tokens]\nviewer = "{digest}"\ntechnician = "{digest}"\n')
        )


def test_tls_needs_both_a_certificate_and_its_key() -> None:
    digest = hash_token(new_token())
    tokens = f'[station.tokens]\nviewer = "{digest}"\n'
    with pytest.raises(ConfigError, match="both cert and key"):
        parse_config(web_config('cert = "/etc/mjtable/web.pem"\n' + tokens))
    config = parse_config(
        web_config('cert = "/etc/mjtable/web.pem"\nkey = "/etc/mjtable/web.key"\n' + tokens)
    )
    assert config.station is not None
    assert config.station.key == "/etc/mjtable/web.key"


def test_a_station_opened_by_the_tables_display_alone_needs_no_token() -> None:
    config = parse_config(web_config('kiosk_user = "mjtable-kiosk"\n'))
    assert config.station is not None
    assert config.station.tokens == {} and config.station.kiosk_user == "mjtable-kiosk"
    with pytest.raises(ConfigError) as caught:
        parse_config(web_config("port = 8080\n"))
    assert str(caught.value) == (
        "station: expected at least one way in: a token under [station.tokens] (`mjtable "
        "station token --role technician` makes one), or kiosk_user for the table's own display"
    )


def test_the_roles_that_run_the_checks_are_roles_of_the_configuration() -> None:
    assert set(get_args(WebRole)) >= DIAG_ROLES


def test_role_of_a_token() -> None:
    viewer, technician = new_token(), new_token()
    hashes = {"viewer": hash_token(viewer), "technician": hash_token(technician)}
    assert role_of(viewer, hashes) == "viewer"
    assert role_of(f" {technician}\n", hashes) == "technician"  # pasted with blanks
    assert role_of(viewer[:-1], hashes) is None
    assert role_of("", hashes) is None
    assert role_of(hashes["viewer"], hashes) is None  # the hash is not the token


def test_sessions_expire_and_are_bounded() -> None:
    sessions = Sessions(lifetime_s=60, most=3)
    first = sessions.open("viewer", now=0)
    assert sessions.get(first.sid, now=59.9) == first
    assert sessions.get(first.sid, now=60) is None  # expired, and forgotten
    assert sessions.get(first.sid, now=0) is None
    assert sessions.get(None, now=0) is None and sessions.get("forged", now=0) is None
    opened = [sessions.open("technician", now=100 + i) for i in range(4)]
    assert len(sessions) == 3
    assert sessions.get(opened[0].sid, now=104) is None  # the oldest made room
    assert sessions.get(opened[3].sid, now=104) == opened[3]
    assert opened[3].may_diag and not first.may_diag
    assert len({s.csrf for s in opened} | {s.sid for s in opened}) == 8
    sessions.close(opened[3].sid)
    assert sessions.get(opened[3].sid, now=104) is None


def test_the_limiter_refuses_an_address_after_five_failures_for_the_window() -> None:
    limiter = LoginLimiter(max_failures=5, window_s=60)
    for second in range(5):
        assert limiter.wait("10.0.0.9", now=second) == 0
        limiter.failed("10.0.0.9", now=second)
    assert limiter.wait("10.0.0.9", now=5) == pytest.approx(55)
    assert limiter.wait("10.0.0.8", now=5) == 0  # another address is not punished
    assert limiter.wait("10.0.0.9", now=60.5) == 0  # the first failure left the window
    limiter.failed("10.0.0.9", now=60.5)  # five again within 60 s: 1, 2, 3, 4 and 60.5
    assert limiter.wait("10.0.0.9", now=60.5) == pytest.approx(0.5)
    limiter.succeeded("10.0.0.9")
    assert limiter.wait("10.0.0.9", now=60.5) == 0


def test_the_limiter_remembers_a_bounded_number_of_addresses() -> None:
    limiter = LoginLimiter(max_failures=1, window_s=60, most=10)
    for n in range(50):
        limiter.failed(f"10.0.1.{n}", now=0)
    assert limiter.wait("10.0.1.49", now=1) > 0
    assert limiter.wait("10.0.1.0", now=1) == 0  # forgotten: the bound holds memory


def test_the_pages_old_section_under_the_gateway_is_named_with_its_new_place() -> None:
    old = BASE + b'[gateway]\nhost = "broker"\n[gateway.web]\nport = 8080\n'
    with pytest.raises(ConfigError) as raised:
        parse_config(old)
    assert "[gateway.web] is now [station]" in str(raised.value)
    assert "mjtable station" in str(raised.value)
