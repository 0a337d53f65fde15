"""A small HTTP client for the page's tests: cookies kept by hand, redirects not followed, so
each answer (status, headers, cookie flags) is seen as the browser would receive it."""

from __future__ import annotations

import http.client
import re
from dataclasses import dataclass, field
from email.message import Message
from http.cookies import SimpleCookie
from urllib.parse import urlencode


@dataclass
class Answer:
    status: int
    headers: Message
    body: str
    data: bytes = b""  # the body's bytes (an archive)

    def set_cookies(self) -> list[str]:
        return self.headers.get_all("Set-Cookie") or []


@dataclass
class Client:
    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self,
        method: str,
        path: str,
        form: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 10.0,
    ) -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            sent = dict(headers or {})
            if self.cookies:
                sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            body = None
            if form is not None:
                body = urlencode(form)
                sent["Content-Type"] = "application/x-www-form-urlencoded"
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            raw = response.read()
            answer = Answer(response.status, response.msg, raw.decode("utf-8", "replace"), raw)
        finally:
            conn.close()
        for line in answer.set_cookies():
            cookie: SimpleCookie = SimpleCookie()
            cookie.load(line)
            for name, morsel in cookie.items():
                if morsel["max-age"] == "0" or morsel.value == "":
                    self.cookies.pop(name, None)
                else:
                    self.cookies[name] = morsel.value
        return answer

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.request("GET", path, headers=headers)

    def post(
        self,
        path: str,
        form: dict[str, str],
        headers: dict[str, str] | None = None,
        timeout: float = 10.0,
    ) -> Answer:
        return self.request("POST", path, form=form, headers=headers, timeout=timeout)

    def login(self, token: str) -> Answer:
        form = self.get("/login")
        return self.post("/login", {"csrf": hidden_csrf(form.body), "token": token})


def hidden_csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)
