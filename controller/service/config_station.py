"""The ``[station]`` section of the configuration: what `mjtable station` reads, the page
served at the table (docs/config.md, docs/web.md)."""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import Field, ValidationInfo, field_validator, model_validator

from controller.service import config_words as words
from controller.service.config_fields import SECRET, Section, absolute_path

#: The roles of the technicians' page (docs/web.md); each logs in with its own token.
WebRole = Literal["viewer", "dealer", "technician"]


class StationSection(Section):
    """`mjtable station`: the page served at the table (docs/web.md); it needs the table's
    API alone, no broker. The service itself never reads this section."""

    host: str = Field(default="127.0.0.1", min_length=1, description="an address to listen on")
    port: int = Field(default=8080, ge=0, le=65535, description="a TCP port (0: any free one)")
    tokens: dict[str, str] = Field(
        default={},
        description="each role's token hash as `mjtable station token` prints it (sha256:…), "
        "never the token itself",
        json_schema_extra=SECRET,
    )
    faces: list[WebRole] = Field(default=[], description="the roles that may see tile faces")
    session_minutes: int = Field(default=480, ge=1, le=10080, description="minutes, 1 to 10080")
    language: Literal["en", "fr"] = Field(
        default="en",
        description="the pages' language (en or fr) until a browser chooses one on the page",
    )
    kiosk_user: str | None = Field(
        default=None,
        pattern=r"^[a-z_][a-z0-9_-]{0,31}$",
        description="the user the table's display runs its browser as (mjtable-kiosk.service): "
        "its connections from this machine open the dealer's view without a token",
    )
    cert: str | None = Field(default=None, description="an absolute path to a certificate (PEM)")
    key: str | None = Field(
        default=None, validate_default=True, description="an absolute path to its key (PEM)"
    )

    @field_validator("tokens")
    @classmethod
    def _check_tokens(cls, value: dict[str, str]) -> dict[str, str]:
        for role, digest in value.items():
            if role not in get_args(WebRole):
                roles = ", ".join(get_args(WebRole))
                raise ValueError(words.NOT_A_ROLE.format(role=role, roles=roles))
            if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
                raise ValueError(words.NOT_A_HASH.format(role=role))
        if len(set(value.values())) < len(value):
            raise ValueError(words.SAME_HASH)
        return value

    @field_validator("cert", "key")
    @classmethod
    def _check_pem(cls, value: str | None) -> str | None:
        return None if value is None else absolute_path(value, words.A_PEM_FILE)

    @field_validator("key", mode="after")
    @classmethod
    def _both(cls, value: str | None, info: ValidationInfo) -> str | None:
        if (value is None) != (info.data.get("cert") is None):
            raise ValueError(words.CERT_AND_KEY)
        return value

    @model_validator(mode="after")
    def _a_way_in(self) -> StationSection:
        # a page nobody may open is a mistake: a token, or the table's own display
        if not self.tokens and self.kiosk_user is None:
            raise ValueError(words.NO_WAY_IN)
        return self
