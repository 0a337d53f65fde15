"""What `mjtable install` puts in place for the API's two sockets: the status group, the service
user in it, a runtime directory that lets that group reach its socket, and an example
configuration that gives each socket its group."""

from __future__ import annotations

import re
import stat
import subprocess
from pathlib import Path

from controller.service.config import load_config
from tests.support.install_files import unit_options
from tests.support.programs import need

UDEV = Path(__file__).resolve().parents[2] / "udev"


def test_the_example_gives_each_socket_its_group_in_the_runtime_directory() -> None:
    config = load_config(UDEV / "config.example.toml")
    unit = unit_options((UDEV / "mjtable.service").read_text(encoding="utf-8"))["Service"]
    runtime = f"/run/{unit['RuntimeDirectory'][-1]}/"
    assert config.api.socket.startswith(runtime)
    assert config.api.status_path() == runtime + "status.sock"
    assert config.api.group == unit["Group"][-1] == "mjtable"
    assert config.api.status_group == "mjtable-status"
    mode = int(unit["RuntimeDirectoryMode"][-1], 8)
    # The status group is not the directory's: it may pass through, not list, not write.
    assert mode & 0o007 == stat.S_IXOTH


def test_sysusers_makes_the_status_group_with_the_service_in_it(tmp_path: Path) -> None:
    sysusers = need("systemd-sysusers")
    (tmp_path / "etc").mkdir()
    done = subprocess.run(
        [sysusers, f"--root={tmp_path}", str(UDEV / "mjtable.sysusers")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    group = (tmp_path / "etc/group").read_text(encoding="utf-8")
    found = re.search(r"^mjtable-status:x:(\d+):(.*)$", group, re.M)
    assert found is not None, group
    assert int(found.group(1)) < 1000  # a system group
    assert found.group(2).split(",") == ["mjtable"]  # the service, to give it the socket
