"""A client of the simulated board's control channel (`mjtable sim --control`): one JSON
object per line each way (docs/simulator.md, "The control channel")."""

from __future__ import annotations

import json
import socket


class ControlClient:
    def __init__(self, path: str, timeout: float = 30.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")

    def raw(self, line: bytes) -> dict[str, object]:
        self.file.write(line + b"\n")
        self.file.flush()
        answer: dict[str, object] = json.loads(self.file.readline())
        return answer

    def __call__(self, verb: str, **args: object) -> object:
        answer = self.raw(json.dumps({"verb": verb, "id": 1, **args}).encode())
        assert answer["ok"] is True and answer["id"] == 1, answer
        return answer["result"]

    def refused(self, verb: str, **args: object) -> str:
        """The channel's words refusing a request (the request must be refused)."""
        answer = self.raw(json.dumps({"verb": verb, **args}).encode())
        assert answer["ok"] is False, answer
        return str(answer["error"])

    def close(self) -> None:
        self.file.close()
        self.sock.close()
