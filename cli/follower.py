"""What `mjtable gateway` and `mjtable station` share: each is a process of its own that
follows the table's service on its API socket, reads its own section of the configuration,
and runs until SIGTERM (its systemd unit's stop) or SIGINT."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TYPE_CHECKING, Protocol

from cli.errors import ConfigRefusal, UsageError, Word
from cli.lang import N_, filled
from controller.service.paths import DEFAULT_CONFIG_PATH

if TYPE_CHECKING:
    from controller.service.config import Config


def add_follower_arguments(parser: argparse.ArgumentParser) -> None:
    """The options both take: the configuration file and the API socket instead of its
    own."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=filled("configuration TOML (default %(path)s)", path=DEFAULT_CONFIG_PATH),
    )
    parser.add_argument("--socket", metavar="PATH", help=N_("override api.socket"))


class Follower(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...


def follower_config(path: str | None, section: str, missing: str) -> Config:
    """The configuration at ``path`` (the default one when None) with its ``[section]``;
    UsageError in one line otherwise (``missing``: what to give)."""
    # lazy: pydantic and the configuration's models, only when a follower runs
    from cli.inputs import load_config
    from controller.service.config import ConfigError
    from controller.service.systemd import setup_logging

    try:
        config = load_config(path or DEFAULT_CONFIG_PATH)
    except ConfigError as exc:
        raise ConfigRefusal(exc) from None
    if getattr(config, section) is None:
        raise UsageError(
            N_("the configuration has no [%(section)s] section: %(missing)s"),
            section=section,
            missing=Word(missing),
        )
    setup_logging(config.logging.level)
    return config


def run_until_signalled(follower: Follower) -> None:
    """Start ``follower``, wait for SIGTERM or SIGINT, stop it (whatever ended the wait)."""
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    follower.start()
    try:
        stopped.wait()
    finally:
        follower.stop()
