"""Helpers of the support bundle's tests: the secrets, a fake journalctl, the command run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from tests.support.commands import ROOT

BROKER_PASSWORD = "Broker-Pa55word-7f3e"
RULES_PASSWORD = "Rules-Layer-Secret-91c4"
#: what the fake journalctl prints: a line of the service, and one that names a secret
JOURNAL = (
    "2025-03-01T08:00:00+0000 table7 mjtable[812]: board link up\n"
    "2025-03-01T08:00:01+0000 table7 mjtable-gateway[901]: logging in as floor / "
    f"{BROKER_PASSWORD}\n"
)
PARTS = {
    "MANIFEST.txt", "manifest.json", "config.json", "versions.json", "status.json", "status.txt",
    "diag.json", "diag.txt", "audit.json", "audit.txt", "journal.txt",
}  # fmt: skip


def fake_journalctl(folder: Path, *, status: int = 0, out: str = JOURNAL, err: str = "") -> Path:
    """A `journalctl` that writes its arguments beside it and prints ``out``."""
    folder.mkdir(exist_ok=True)
    (folder / "out").write_text(out)
    (folder / "err").write_text(err)
    script = folder / "journalctl"
    cat = shutil.which("cat")  # the PATH of the command under test holds only this folder
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{folder}/args"\n'
        f'{cat} "{folder}/out"\n'
        f'{cat} "{folder}/err" >&2\n'
        f"exit {status}\n"
    )
    script.chmod(0o755)
    return folder


def bundle(cwd: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`mjtable support-bundle ARGS` in a subprocess whose PATH is ``path`` alone (where
    journalctl is looked for)."""
    return subprocess.run(
        [sys.executable, "-m", "cli", "support-bundle", *args],
        cwd=cwd,
        env={**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def extracted(archive: Path) -> dict[str, bytes]:
    """Each file of the archive by its name under the archive's one folder."""
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        folders = {m.name.split("/", 1)[0] for m in members}
        assert len(folders) == 1, folders
        out = {}
        for member in members:
            assert member.isfile(), member.name
            handle = tar.extractfile(member)
            assert handle is not None
            out[member.name.split("/", 1)[1]] = handle.read()
    return out
