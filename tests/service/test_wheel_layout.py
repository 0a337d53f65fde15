"""`mjtable install` finds its files in an installed wheel (PREFIX/share/mjtable/udev)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from controller.service import install

ROOT = Path(__file__).resolve().parents[2]


def test_files_come_from_the_wheel_data_when_no_source_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages" / "controller" / "service"
    site.mkdir(parents=True)
    monkeypatch.setattr(install, "__file__", str(site / "install.py"))  # no udev/ beside it
    prefix = tmp_path / "venv"
    data = prefix / "share" / "mjtable" / "udev"
    shutil.copytree(ROOT / "udev", data)
    monkeypatch.setattr(sys, "prefix", str(prefix))
    assert install.source_dir() == data


def test_missing_files_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        install, "__file__", str(tmp_path / "a" / "controller" / "service" / "install.py")
    )
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "empty"))
    with pytest.raises(install.InstallError) as caught:
        install.source_dir()
    assert "share/mjtable/udev" in str(caught.value) and "reinstall" in str(caught.value)


def test_the_wheel_ships_every_file_install_reads() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["data-files"]["share/mjtable/udev"]
    shipped = {p.name for pattern in patterns for p in ROOT.glob(pattern) if p.is_file()}
    assert shipped == {p.name for p in (ROOT / "udev").iterdir() if p.is_file()}
    install_reads = {
        "config.example.toml",
        "99-mjtable.rules",
        "mjtable.service",
        "mjtable.sysusers",
    }
    assert install_reads <= shipped
