"""The service configuration: one TOML file, validated by pydantic.

``load_config(path)`` reads the file, checks every key and returns a frozen
:class:`Config`, or raises :class:`ConfigError` whose message names the key path
and what was expected, e.g. ``board.port: expected a device path or a pyserial
URL, got ''``. Unknown keys are refused, so a typo never passes silently.

The configuration's hash (SHA-256 of the file's bytes) is kept on the loaded
object for the audit log (``Config.sha256``).

See docs/config.md for every key, its type and default.
"""

from __future__ import annotations

import grp
import hashlib
import importlib.util
import json
import os
import tomllib
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from controller.audit.writer import DEFAULT_MAX_BYTES
from controller.cycle.core import FirmwarePolicy
from controller.cycle.deadline import DEFAULT_DEADLINES, Deadlines
from controller.service import config_words as words
from controller.service.config_api import ApiSection
from controller.service.config_fields import (
    SECONDS,
    Section,
    absolute_path,
    clip,
)
from controller.service.config_gateway import GatewaySection
from controller.service.config_problems import ConfigError as ConfigError
from controller.service.config_problems import model_of, problems
from controller.service.config_station import StationSection
from controller.service.paths import DEFAULT_AUDIT_PATH, DEFAULT_BOARD_PORT
from controller.service.ports import board_port
from drivers.board import DEFAULT_BAUDRATE
from drivers.panel import DEFAULT_DEBOUNCE_MS
from rules.profiles import BUILTIN_PROFILES, Profile, ProfileError, load_profile
from rules.words import DICE_SOURCES, DiceSource


class TableSection(Section):
    number: int = Field(ge=1, le=9999, description="a whole number from 1 to 9999")
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="a name of 1 to 64 characters, e.g. 'Table 7'",
    )

    @property
    def display_name(self) -> str:
        return self.name if self.name is not None else f"Table {self.number}"


class BoardSection(Section):
    port: str = Field(
        default=DEFAULT_BOARD_PORT,
        description=(
            f"a device path such as {DEFAULT_BOARD_PORT} (the Pi's UART) "
            "or a pyserial URL such as socket://127.0.0.1:5000"
        ),
    )
    baud: int = Field(
        default=DEFAULT_BAUDRATE,
        gt=0,
        le=4_000_000,
        description="a baud rate in bits per second from 1 to 4000000, e.g. 115200",
    )
    rtscts: bool = Field(
        default=False,
        description=(
            "true when the board's RTS (the Pico's GP3) is wired to the Pi's CTS (GPIO 16) and "
            "the Pi's UART has its CTS (docs/firmware.md, Wiring): the Pi then sends only while "
            "the board can take the bytes, and none is lost while the board writes its flash; "
            "false (a board wired with TX, RX and ground only) sends regardless"
        ),
    )
    wait_factor: float = Field(
        default=1.0,
        ge=1.0,
        le=100.0,
        description=(
            "how many times longer than for a real board every wait on the board lasts (its "
            "link's timeout and retransmissions, the phases' deadlines), from 1 to 100: 1 for a "
            "real board; 30 for the emulated chip (mjtable sim --chip), whose clock runs at "
            "0.05 to 0.3 of real time"
        ),
    )
    firmware_mismatch: FirmwarePolicy = Field(
        default="refuse",
        description='"refuse" or "warn": what a board whose firmware build is not the '
        "installed one does to the table",
    )

    @field_validator("port")
    @classmethod
    def _check_port(cls, value: str) -> str:
        if not value.strip():
            raise ValueError(words.PORT_EXPECTED.format(got=repr(value)))
        if "://" in value:
            scheme = value.split("://", 1)[0]
            if (
                not scheme.isidentifier()
                or importlib.util.find_spec(f"serial.urlhandler.protocol_{scheme}") is None
            ):
                raise ValueError(words.PORT_NO_SCHEME.format(got=repr(value), scheme=repr(scheme)))
            return value
        if not value.startswith("/"):
            raise ValueError(
                words.PORT_RELATIVE.format(got=repr(value), example=DEFAULT_BOARD_PORT)
            )
        return value


class PanelSection(Section):
    enabled: bool = Field(default=True, description="true or false")
    vendor_id: int = Field(
        ge=0, le=0xFFFF, description="a USB vendor id from 0 to 0xFFFF, e.g. 0x1209"
    )
    product_id: int = Field(
        ge=0, le=0xFFFF, description="a USB product id from 0 to 0xFFFF, e.g. 0x4D4A"
    )
    serial: str | None = Field(
        default=None, min_length=1, description="the panel's USB serial number string"
    )
    debounce_ms: int = Field(
        default=DEFAULT_DEBOUNCE_MS, ge=0, le=1000, description="milliseconds from 0 to 1000"
    )


#: where the profile validator leaves the profile it loaded, in the validation's context
_LOADED = "loaded_profiles"


class RulesSection(Section):
    profile: str = Field(
        description=(
            "one of " + ", ".join(BUILTIN_PROFILES) + " or the path of a profile TOML file"
        )
    )
    # the profile itself, once loaded: by the validator (a file, checked whole), or at the
    # first loaded() (a built-in one); nobody loads it again
    _loaded: Profile | None = PrivateAttr(default=None)

    @field_validator("profile")
    @classmethod
    def _check_profile(cls, value: str, info: ValidationInfo) -> str:
        if value in BUILTIN_PROFILES:
            return value
        profiles = ", ".join(BUILTIN_PROFILES)
        if not value.strip() or "\x00" in value:
            raise ValueError(words.PROFILE_EXPECTED.format(profiles=profiles, got=repr(value)))
        base = None
        if isinstance(info.context, dict):
            base = info.context.get("base_dir")
        path = Path(value)
        if not path.is_absolute():
            path = Path(base if base is not None else Path.cwd()) / path
        try:
            found = path.is_file()
        except OSError:  # a name too long
            found = False
        if not found:
            raise ValueError(
                words.PROFILE_NO_FILE.format(
                    profiles=profiles, got=clip(value), path=clip(str(path))
                )
            )
        try:  # the whole profile, so a file that names one that cannot work is not valid
            loaded = load_profile(path)
        except ProfileError as exc:
            raise ValueError(str(exc)) from None
        resolved = str(path.resolve())
        if isinstance(info.context, dict):
            info.context.setdefault(_LOADED, {})[resolved] = loaded
        return resolved

    @model_validator(mode="after")
    def _keep_loaded(self, info: ValidationInfo) -> RulesSection:
        if isinstance(info.context, dict):
            self._loaded = info.context.get(_LOADED, {}).get(self.profile)
        return self

    def loaded(self) -> Profile:
        """The rule set's profile (the file the configuration was checked with, as it was)."""
        if self._loaded is None:
            self._loaded = load_profile(self.profile)
        return self._loaded

    @property
    def builtin(self) -> bool:
        return self.profile in BUILTIN_PROFILES

    @property
    def path(self) -> Path | None:
        """The profile file, or None for a built-in profile."""
        return None if self.builtin else Path(self.profile)


class DiceSection(Section):
    source: DiceSource = Field(default="board", description="one of " + ", ".join(DICE_SOURCES))


def _seconds(default: float) -> Any:
    return Field(default=default, gt=0, le=3600, description=SECONDS)


class DeadlinesSection(Section):
    """The service's HELLO watch, then one key per deadline of the controller's own, whose
    defaults are the cycle's (controller/cycle/deadline.py). The motions' deadlines are the
    board's: it reports them, and the controller derives its own from that report."""

    #: keys of earlier versions, and why they are no more
    RETIRED: ClassVar[dict[str, str]] = {
        key: words.RETIRED_DEADLINE.format(key=key)
        for key in ("shuffle", "build", "collect", "lift")
    }

    hello: float = _seconds(2.0)
    manifest: float = _seconds(DEFAULT_DEADLINES.manifest)
    dice: float = _seconds(DEFAULT_DEADLINES.dice)
    clear: float = _seconds(DEFAULT_DEADLINES.clear)
    stop: float = _seconds(DEFAULT_DEADLINES.stop)
    test: float = _seconds(DEFAULT_DEADLINES.test)

    def cycle(self) -> Deadlines:
        """The controller's phase deadlines: every key but ``hello``, which is the service's."""
        return Deadlines(**self.model_dump(exclude={"hello"}))


class AuditSection(Section):
    path: str = Field(default=DEFAULT_AUDIT_PATH, description="an absolute path")
    rotate_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        ge=4096,
        description="a size in bytes of at least 4096, e.g. 16777216",
    )
    key: str | None = Field(
        default=None,
        description="an absolute path to the sealing key `mjtable audit keygen` made "
        "(none: the log is not sealed)",
    )

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        return absolute_path(value, words.THE_AUDIT_LOG)

    @field_validator("key")
    @classmethod
    def _check_key(cls, value: str | None) -> str | None:
        return None if value is None else absolute_path(value, words.THE_SEALING_KEY)


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


class LoggingSection(Section):
    level: LogLevel = Field(default="INFO", description="one of DEBUG, INFO, WARNING, ERROR")

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        if isinstance(value, str) and value.upper() in ("DEBUG", "INFO", "WARNING", "ERROR"):
            return value.upper()
        return value


class Config(Section):
    """The whole configuration file. Sections without a default are required."""

    table: TableSection = Field(description="a [table] section")
    board: BoardSection | None = Field(
        default=None, description="a [board] section (leave it out to run only with --sim)"
    )
    panel: PanelSection | None = Field(
        default=None, description="a [panel] section (leave it out when there is no panel)"
    )
    rules: RulesSection = Field(description="a [rules] section")
    dice: DiceSection = Field(default_factory=DiceSection, description="a [dice] section")
    deadlines: DeadlinesSection = Field(
        default_factory=DeadlinesSection, description="a [deadlines] section"
    )
    api: ApiSection = Field(default_factory=ApiSection, description="an [api] section")
    audit: AuditSection = Field(default_factory=AuditSection, description="an [audit] section")
    logging: LoggingSection = Field(
        default_factory=LoggingSection, description="a [logging] section"
    )
    gateway: GatewaySection | None = Field(
        default=None, description="a [gateway] section (only `mjtable gateway` reads it)"
    )
    station: StationSection | None = Field(
        default=None, description="a [station] section (only `mjtable station` reads it)"
    )

    _sha256: str | None = PrivateAttr(default=None)
    _source: Path | None = PrivateAttr(default=None)

    @property
    def sha256(self) -> str | None:
        """SHA-256 (hex) of the bytes the configuration was parsed from, if any."""
        return self._sha256

    @property
    def source(self) -> Path | None:
        """The file the configuration was loaded from, if any."""
        return self._source


def config_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse_config(
    data: bytes, *, source: Path | None = None, base_dir: Path | None = None
) -> Config:
    """Parse and validate configuration bytes; relative profile paths are taken
    from ``base_dir`` (the config file's directory)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([words.NOT_UTF8.format(why=exc)], source) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([words.NOT_TOML.format(why=exc)], source) from None
    except RecursionError:
        raise ConfigError([words.TOO_DEEP], source) from None
    except ValueError as exc:  # a number too long to convert
        raise ConfigError([words.NOT_TOML.format(why=exc)], source) from None
    return _validate(raw, data, source, base_dir)


def config_from_dict(raw: dict[str, Any], *, base_dir: Path | None = None) -> Config:
    """Validate a configuration given as data shaped like the file (sections of keys),
    e.g. built from command-line options; relative profile paths are taken from
    ``base_dir`` (default: the working directory). Raises ConfigError like
    :func:`parse_config`. Its ``sha256`` is that of the data's canonical JSON (sorted
    keys, no spaces), so the audit log can still tell two such configurations apart."""
    canonical = json.dumps(
        raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return _validate(raw, canonical.encode("utf-8"), None, base_dir)


def with_changes(config: Config, changes: dict[str, dict[str, Any]]) -> Config:
    """``config`` with some keys replaced (``{"api": {"socket": "/run/x.sock"}}``), every
    key validated again (ConfigError names the key). The result keeps the original's
    ``sha256`` and ``source``: the file in force, with the changes made on top of it."""
    raw = config.model_dump()
    for section, keys in changes.items():
        current = raw.get(section)
        raw[section] = {**(current if isinstance(current, dict) else {}), **keys}
    changed = _validate(raw, b"", config.source, None)
    changed._sha256 = config.sha256
    return changed


def _validate(raw: Any, data: bytes, source: Path | None, base_dir: Path | None) -> Config:
    try:
        config = Config.model_validate(raw, context={"base_dir": base_dir})
    except ValidationError as exc:
        raise ConfigError(problems(exc, Config), source) from None
    config._sha256 = config_sha256(data)
    config._source = source
    return config


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and validate the configuration file at ``path``."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError([words.UNREADABLE.format(why=reason)], file) from None
    return parse_config(data, source=file, base_dir=file.resolve().parent)


def config_words() -> tuple[str, ...]:
    """What a configuration's problems say each key expects (its description), for every key
    of every section: the details of the problems' sentences (config_words.py), which a
    command translates with them."""
    found: dict[str, None] = {}
    models: list[type[BaseModel]] = [Config]
    while models:
        model = models.pop()
        for field in model.model_fields.values():
            if field.description:
                found[field.description] = None
            inner = model_of(field.annotation)
            if inner is not None:
                models.append(inner)
    return tuple(found)


def check_environment(config: Config) -> list[str]:
    """Things on this machine that will stop or hinder the service, as warnings.

    They are not errors of the file: the same file may be checked on another
    machine, and the board may simply be unplugged right now.
    """
    warnings: list[str] = []
    if config.api.group is not None:
        try:
            grp.getgrnam(config.api.group)
        except KeyError:
            said = words.NO_GROUP.format(group=repr(config.api.group))
            warnings.append(words.SAID.format(key="api.group", problem=said))
    if config.api.status_group is not None:
        try:
            grp.getgrnam(config.api.status_group)
        except KeyError:
            said = words.NO_STATUS_GROUP.format(group=repr(config.api.status_group))
            warnings.append(words.SAID.format(key="api.status_group", problem=said))
    socket_dir = Path(config.api.socket).parent
    if not socket_dir.is_dir():
        said = words.NO_DIRECTORY.format(path=socket_dir)
        warnings.append(words.SAID.format(key="api.socket", problem=said))
    audit_dir = Path(config.audit.path).parent
    if not audit_dir.is_dir():
        said = words.NO_DIRECTORY.format(path=audit_dir)
        warnings.append(words.SAID.format(key="audit.path", problem=said))
    port = config.board.port if config.board is not None else None
    if port is not None and "://" not in port and not Path(port).exists():
        hint = words.UART_OFF if board_port(port).kind == "uart" else words.PLUG_IT_IN
        said = words.NO_PORT.format(port=port, hint=hint)
        warnings.append(words.SAID.format(key="board.port", problem=said))
    if config.board is None:
        warnings.append(words.SAID.format(key="board", problem=words.NO_BOARD))
    return warnings
