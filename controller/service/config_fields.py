"""The building blocks of the configuration's sections: the strict base model, the mark of a
secret and the checks of values several sections share (absolute paths, clipped echoes of bad
values)."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo

from controller.service import config_words as words

#: The longest path and the longest file name the kernel takes (PATH_MAX, NAME_MAX), in bytes.
MAX_PATH_BYTES = 4095
MAX_NAME_BYTES = 255
#: The description of a number of seconds up to an hour.
SECONDS = "seconds, a number greater than 0 and at most 3600"
#: The mark of a field whose value is a secret (a password, a token's hash):
#: ``Field(..., json_schema_extra=SECRET)``. What shows the configuration to someone else
#: (`mjtable support-bundle`, controller/service/config_secrets.py) withholds its value, so a
#: secret field added later is withheld as soon as it carries the mark.
SECRET: JsonDict = {"secret": True}


def is_secret(field: FieldInfo) -> bool:
    """Whether ``field`` carries the mark :data:`SECRET`."""
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get("secret") is True


def absolute_path(value: str, what: str) -> str:
    if not value:
        raise ValueError(words.PATH_EMPTY.format(what=what))
    if "\x00" in value:
        raise ValueError(words.PATH_NUL.format(what=what))
    if not value.startswith("/"):
        raise ValueError(words.PATH_RELATIVE.format(what=what, got=clip(value)))
    encoded = os.fsencode(value)
    longest = max(len(part) for part in encoded.split(b"/"))
    if len(encoded) > MAX_PATH_BYTES or longest > MAX_NAME_BYTES:
        raise ValueError(
            words.PATH_TOO_LONG.format(
                what=what,
                most=MAX_PATH_BYTES,
                name=MAX_NAME_BYTES,
                got=clip(value),
                size=len(encoded),
            )
        )
    return value


def clip(value: str) -> str:
    """A value echoed in a problem, cut to about 60 characters."""
    return repr(value) if len(value) <= 60 else repr(value[:57]) + "…"


class Section(BaseModel):
    # strict: TOML already gives typed values; "115200" for a number is a mistake.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
