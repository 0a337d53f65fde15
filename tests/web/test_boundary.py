"""The page's package, like the rest of the gateway, imports only the API client and the
message models it speaks (tests/gateway/test_boundary.py), plus its web library and
templates; and a gateway without [gateway.web] does not load them at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.gateway.test_boundary import ALLOWED_OTHERS, ALLOWED_OURS, imports

WEB = Path(__file__).resolve().parents[2] / "gateway" / "web"
WEB_LIBRARIES = {"aiohttp", "jinja2", "markupsafe"}


def test_only_the_api_client_its_models_and_the_web_library() -> None:
    wrong = []
    for path in sorted(WEB.glob("*.py")):
        for name in imports(path):
            top = name.split(".")[0]
            if top in {"gateway", "__future__"} or top in sys.stdlib_module_names:
                continue
            if name in ALLOWED_OURS or top in ALLOWED_OTHERS | WEB_LIBRARIES:
                continue
            wrong.append(f"{path.name}: {name}")
    assert not wrong, wrong


def test_a_gateway_without_the_page_does_not_load_the_web_library() -> None:
    code = (
        "import sys, gateway.service, gateway.view, gateway.picture\n"
        "print(sorted(m for m in ('aiohttp', 'jinja2') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=WEB.parents[1]
    )
    assert done.stdout.strip() == "[]"
