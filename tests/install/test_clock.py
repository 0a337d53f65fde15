"""Whether the clock is synchronised: the kernel's answer through adjtimex, read the same way
as a C program reads it; timedatectl's where the kernel's cannot be had; the service's
warning and its status."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.client_words import format_status
from controller.api.client import ApiClient
from controller.service.clock import (
    MAXERROR_LIMIT_US,
    STA_UNSYNC,
    ClockState,
    ClockWatch,
    KernelClock,
    clock_state,
    judge,
    read_adjtimex,
    read_timedatectl,
)
from controller.service.config import Config
from controller.service.runner import Service, SimOptions
from tests.support.programs import need

C_PROGRAM = r"""
#include <stdio.h>
#include <sys/timex.h>
int main(void) {
    struct timex t = {0};
    int state = adjtimex(&t);
    printf("%d %ld %d\n", state, t.maxerror, t.status);
    return state < 0;
}
"""


def test_the_kernels_answer_matches_a_c_programs(tmp_path: Path) -> None:
    """The ctypes structure has C's layout: a C program built here reads the same fields."""
    cc = need("cc")
    source, program = tmp_path / "timex.c", tmp_path / "timex"
    source.write_text(C_PROGRAM)
    subprocess.run([cc, "-O0", "-o", str(program), str(source)], check=True, timeout=120)
    done = subprocess.run([str(program)], capture_output=True, text=True, check=True)
    ours = read_adjtimex()
    state, maxerror, status = (int(x) for x in done.stdout.split())
    assert (ours.state, ours.status) == (state, status)
    # the maximum error grows by 500 µs each second until a time source sets it (to 16 s)
    assert abs(ours.maxerror_us - maxerror) <= 50_000
    assert judge(ours).synced == (maxerror < MAXERROR_LIMIT_US)


@pytest.mark.parametrize(
    ("maxerror", "status", "synced"),
    [
        (MAXERROR_LIMIT_US, STA_UNSYNC, False),  # as the kernel leaves a clock nobody set
        (MAXERROR_LIMIT_US - 1, 0, True),
        (12_000, STA_UNSYNC, True),  # timesyncd may set STA_UNSYNC on a synchronised clock
        (20_000_000, 0, False),
    ],
)
def test_synchronised_is_below_the_kernels_limit(maxerror: int, status: int, synced: bool) -> None:
    state = judge(KernelClock(0, maxerror, status))
    assert state.synced is synced and state.how == "adjtimex"
    assert ("STA_UNSYNC" in state.detail) == bool(status & STA_UNSYNC)


def test_timedatectl_answers_when_the_kernel_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused() -> KernelClock:
        raise PermissionError(1, "adjtimex: Operation not permitted")

    fake = tmp_path / "timedatectl"
    fake.write_text('#!/bin/sh\n[ "$*" = "show -p NTPSynchronized --value" ] && echo "$ANSWER"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    for answer, synced in (("yes", True), ("no", False)):
        monkeypatch.setenv("ANSWER", answer)
        assert clock_state(kernel=refused) == ClockState(
            synced, "timedatectl", f"NTPSynchronized={answer}"
        )
    monkeypatch.setenv("ANSWER", "maybe")
    unknown = clock_state(kernel=refused)
    assert unknown.synced is None and "Operation not permitted" in unknown.detail
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert read_timedatectl().synced is None


def test_the_watch_warns_while_unsynchronised_and_says_when_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers = [False, False, False, True, None, False]
    clock = [0.0]
    watch = ClockWatch(
        repeat=150.0,
        check=lambda: ClockState(answers.pop(0), "test", "scripted"),
        logger=logging.getLogger("mjtable.test"),
        now=lambda: clock[0],
    )
    caplog.set_level(logging.INFO, logger="mjtable.test")
    said = []
    for _ in range(6):
        watch.check_now()
        said.append([r.levelname for r in caplog.records])
        caplog.clear()
        clock[0] += 100.0
    # warned at once, quiet for `repeat`, warned again; then synchronised; unknown; lost again
    assert said == [["WARNING"], [], ["WARNING"], ["INFO"], ["WARNING"], ["WARNING"]]
    assert watch.synced is False


def test_the_status_says_whether_the_clock_is_synchronised(
    table_config: Callable[..., Config],
) -> None:
    config = table_config()
    service = Service(config, sim=SimOptions(seed=3))
    service.start()
    try:
        deadline = time.monotonic() + 10
        while service.clock.state is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with ApiClient(config.api.socket) as client:
            status = client.status()
    finally:
        service.stop()
    expected = clock_state().synced  # this machine's own clock, read again
    assert status.clock_synced is expected
    words = {True: "synchronised", False: "NOT synchronised", None: "unknown"}[expected]
    assert f"clock      {words}" in format_status(status)
