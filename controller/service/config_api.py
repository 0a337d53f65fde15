"""The ``[api]`` section of the configuration: the two sockets, their modes and groups, and the
server's limits (docs/config.md, docs/api.md); :meth:`ApiSection.server` makes the server it
describes."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, ValidationInfo, field_validator

from controller.api.limits import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CLIENTS,
    DEFAULT_MAX_CLIENTS_PER_PEER,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_RESERVED_CLIENTS,
    DEFAULT_SOCKET_MODE,
    MAX_SOCKET_PATH_BYTES,
    STATUS_SOCKET_NAME,
    Limits,
)
from controller.api.server import ApiServer
from controller.cycle.reports import ApiBackend
from controller.service import config_words as words
from controller.service.config_fields import SECONDS, Section, absolute_path
from controller.service.paths import DEFAULT_SOCKET_PATH
from drivers.ioloop import IoLoop


class ApiSection(Section):
    socket: str = Field(
        default=DEFAULT_SOCKET_PATH,
        description=f"an absolute path of at most {MAX_SOCKET_PATH_BYTES} bytes",
    )
    mode: int = Field(default=DEFAULT_SOCKET_MODE, description=words.MODE)
    group: str | None = Field(
        default=None, min_length=1, description="the name of a group, e.g. 'mjtable'"
    )
    status_socket: str | None = Field(
        default=None,
        validate_default=True,
        description=f"an absolute path of at most {MAX_SOCKET_PATH_BYTES} bytes "
        f"(none: {STATUS_SOCKET_NAME} beside api.socket)",
    )
    status_mode: int = Field(default=DEFAULT_SOCKET_MODE, description=words.MODE)
    status_group: str | None = Field(
        default=None, min_length=1, description="the name of a group, e.g. 'mjtable-status'"
    )
    max_clients: int = Field(
        default=DEFAULT_MAX_CLIENTS, ge=1, le=4096, description="a count from 1 to 4096"
    )
    max_clients_per_peer: int = Field(
        default=DEFAULT_MAX_CLIENTS_PER_PEER,
        ge=1,
        le=4096,
        description="a count from 1 to api.max_clients",
    )
    reserved_clients: int = Field(
        default=DEFAULT_RESERVED_CLIENTS, ge=1, le=1024, description="a count from 1 to 1024"
    )
    idle_timeout: float = Field(
        default=DEFAULT_IDLE_TIMEOUT, gt=0, le=86400, description="seconds, > 0 and at most 86400"
    )
    request_timeout: float = Field(
        default=DEFAULT_REQUEST_TIMEOUT, gt=0, le=3600, description=SECONDS
    )

    @field_validator("socket")
    @classmethod
    def _check_socket(cls, value: str) -> str:
        return _socket_path(value, words.THE_API_SOCKET)

    def server(self, table: ApiBackend, loop: IoLoop | None = None) -> ApiServer:
        """The API server these settings describe, in front of ``table`` (not started), on
        ``loop`` (the service's) or a thread of its own."""
        return ApiServer(
            table,
            self.socket,
            self.mode,
            self.group,
            status_path=self.status_path(),
            status_mode=self.status_mode,
            status_group=self.status_group,
            limits=Limits(
                max_clients=self.max_clients,
                max_clients_per_peer=self.max_clients_per_peer,
                reserved_clients=self.reserved_clients,
                idle_timeout=self.idle_timeout,
                request_timeout=self.request_timeout,
            ),
            loop=loop,
        )

    @field_validator("status_socket")
    @classmethod
    def _check_status_socket(cls, value: str | None, info: ValidationInfo) -> str | None:
        full = info.data.get("socket")
        if value is None and full is not None:
            beside = Path(full).parent / STATUS_SOCKET_NAME
            if len(os.fsencode(str(beside))) > MAX_SOCKET_PATH_BYTES:
                raise ValueError(
                    words.STATUS_BESIDE_TOO_LONG.format(path=beside, most=MAX_SOCKET_PATH_BYTES)
                )
        if value is not None:
            _socket_path(value, words.THE_STATUS_SOCKET)
        if value is not None and value == full:
            raise ValueError(words.STATUS_SAME.format(got=repr(value)))
        return value

    @field_validator("max_clients_per_peer")
    @classmethod
    def _check_per_peer(cls, value: int, info: ValidationInfo) -> int:
        most = info.data.get("max_clients")
        if most is not None and value > most:
            raise ValueError(words.PER_PEER.format(most=most, got=value))
        return value

    def status_path(self) -> str:
        """The status socket: status_socket, or status.sock beside the full socket."""
        if self.status_socket is not None:
            return self.status_socket
        return str(Path(self.socket).parent / STATUS_SOCKET_NAME)

    @field_validator("mode", "status_mode", mode="before")
    @classmethod
    def _parse_mode(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip().lower().removeprefix("0o")
            if not text or any(c not in "01234567" for c in text):
                raise ValueError(words.MODE_EXPECTED.format(mode=words.MODE, got=repr(value)))
            return int(text, 8)
        return value

    @field_validator("mode", "status_mode")
    @classmethod
    def _check_mode(cls, value: int, info: ValidationInfo) -> int:
        if not 0 <= value <= 0o777:
            raise ValueError(
                words.MODE_NOT_OCTAL.format(mode=words.MODE, got=value, octal=f"{value:#o}")
            )
        if value & 0o002:
            why = (
                words.OTHERS_TAKE_STATUS
                if info.field_name == "status_mode"
                else words.OTHERS_COMMAND
            )
            raise ValueError(words.MODE_OTHERS_WRITE.format(got=f"{value:#o}", why=why))
        if value & 0o600 != 0o600:
            raise ValueError(words.MODE_OWNER.format(got=f"{value:#o}"))
        return value


def _socket_path(value: str, what: str) -> str:
    absolute_path(value, what)
    size = len(os.fsencode(value))
    if size > MAX_SOCKET_PATH_BYTES:
        raise ValueError(
            words.SOCKET_TOO_LONG.format(most=MAX_SOCKET_PATH_BYTES, size=size, got=repr(value))
        )
    return value
