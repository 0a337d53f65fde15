"""What the station reads of its configuration.

The configuration's [station] section is declared with the service's other sections
(controller/service/config_station.py); the station does not import the service's
configuration module. It asks for any object with these read-only attributes, which the
section has: the command line (cli/station.py) hands it over as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, Protocol


class StationSettings(Protocol):
    """[station]: the page served at the table (docs/web.md)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def tokens(self) -> Mapping[str, str]: ...  # role -> "sha256:<hex>" of its token
    @property
    def faces(self) -> Sequence[str]: ...  # the roles that may see the tiles' faces
    @property
    def session_minutes(self) -> int: ...
    @property
    def cert(self) -> str | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def language(self) -> Literal["en", "fr"]: ...  # the pages' language unless one is chosen
    @property
    def kiosk_user(self) -> str | None: ...  # the table's display's browser (web/kiosk.py)
