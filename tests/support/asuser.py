"""Run a piece of code as another user, for tests of permissions.

Root passes every permission check, so a test run as root asks from a forked child turned into
the unprivileged user nobody. There is no exec: the interpreter and the checkout may not be
reachable by nobody (a clone inside a folder of mode 0700, as `mktemp -d` and Debian's home
folders make them), so the child runs the code already loaded here. For the same reason a
module the child imports after the fork (a lazy import of the project's, the standard
library's or a dependency's) is found and read with root's access and then run as nobody: the
child's real and effective user is nobody, its saved user root, which only the import
machinery below takes back, for the time it looks for a module and reads its file.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import os
import select
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

from tests.support.fake_controller import WAIT

NOBODY = 65534


def as_nobody(action: Callable[[], str]) -> str:
    """What ``action`` returns when run as uid/gid 65534 in a child process, or
    ``"<exception type>: <message>"`` for what it raised. Only root can do this."""
    assert os.geteuid() == 0, "only root can act as another user: ask in this process instead"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 1
        try:
            os.close(read_end)
            _become_nobody()
            try:
                text = action()
            except Exception as exc:
                text = f"{type(exc).__name__}: {exc}"
            os.write(write_end, text.encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], WAIT)
        assert ready, "the child did not answer"
        chunks = []
        while chunk := os.read(read_end, 65536):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return b"".join(chunks).decode()


def _become_nobody() -> None:
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    sys.meta_path.insert(0, _FindAsRoot(list(sys.meta_path)))
    os.setresuid(NOBODY, NOBODY, 0)  # the saved user root: for _as_root alone


@contextlib.contextmanager
def _as_root() -> Iterator[None]:
    os.seteuid(0)
    try:
        yield
    finally:
        os.seteuid(NOBODY)


class _FindAsRoot(importlib.abc.MetaPathFinder):
    """The child's first finder: asks the usual finders as root, and gives each module found
    in a file a loader that reads it as root."""

    def __init__(self, finders: list[Any]) -> None:
        self._finders = finders

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        spec = None
        with _as_root():
            for finder in self._finders:
                find = getattr(finder, "find_spec", None)
                if find is not None and (spec := find(fullname, path, target)) is not None:
                    break
        if spec is not None and spec.has_location and spec.loader is not None:
            spec.loader = _ReadAsRoot(spec.loader)
        return spec


class _ReadAsRoot(importlib.abc.Loader):
    """A module's own loader, reading its file as root; its code runs as nobody."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        with _as_root():  # an extension module is opened here
            module: ModuleType | None = self._loader.create_module(spec)
            return module

    def exec_module(self, module: ModuleType) -> None:
        get_code = getattr(self._loader, "get_code", None)
        with _as_root():
            code = get_code(module.__name__) if get_code is not None else None
        if code is None:  # nothing to read: an extension module, opened by create_module
            self._loader.exec_module(module)
        else:
            exec(code, module.__dict__)
