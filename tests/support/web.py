"""The web dashboard's server (``arena serve --http`` on a free port) and HTTP from the standard library."""

from __future__ import annotations

import html
import json
import re
import time
import uuid
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from support.servers import Server

if TYPE_CHECKING:
    from support.chromium import Chromium

SHOTS = Path("/tmp/arena-web-shots")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def http(url: str, *, headers: dict[str, str] | None = None, form: dict[str, str] | None = None,
         body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request: its status, headers and body (errors are answers too); a POST when ``form`` (urlencoded) or
    ``body`` (as it is) is given."""
    data = urllib.parse.urlencode(form).encode() if form is not None else body
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with OPENER.open(request, timeout=30) as reply:
            return reply.status, {k.lower(): v for k, v in reply.headers.items()}, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def get_json(url: str, status: int = 200, headers: dict[str, str] | None = None) -> Any:
    code, _, body = http(url, headers=headers)
    assert code == status, (url, code, body[:300])
    return json.loads(body)


class WebServer(Server):
    """``arena serve`` with the dashboard on a free port too."""

    def __init__(self, data: Path, *extra: str) -> None:
        super().__init__(data, "--http", "127.0.0.1:0", *extra)
        self.web = self.wait_line(r"^web dashboard on (https?://\S+)/$", 30).group(1)


def wait_state(web: str, tid: str, condition: Any, seconds: float, what: str,
               headers: dict[str, str] | None = None) -> dict:
    """Poll the tournament's JSON until ``condition(detail)`` holds, with a deadline."""
    deadline = time.monotonic() + seconds
    while True:
        detail = get_json(f"{web}/api/t/{tid}", headers=headers)
        if condition(detail):
            return detail
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {json.dumps(detail)[:600]}")
        time.sleep(0.05)


def sign_in(browser: Chromium, web: str, token: str) -> None:
    """The browser signed in to the dashboard at ``web`` as a person does it: the sign-in form, the token typed in,
    its button clicked (AssertionError unless the answer is a page with the sign-out button)."""
    browser.goto(f"{web}/signin?next=/")
    browser.type_into("form.signin input[name=token]", token)
    browser.submit("form.signin button[type=submit]")
    assert browser.js("!!document.getElementById('signout')"), browser.js("document.body.innerText")


def multipart(fields: dict[str, str], file_field: str, file_name: str, content: bytes) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body as a browser sends a form (its text fields, then one file) and its
    Content-Type."""
    boundary = "----arena-test-" + uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
             for name, value in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{file_name}"\r\n'
                 f'Content-Type: application/octet-stream\r\n\r\n'.encode() + content + b"\r\n")
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def set_cookie(headers: dict[str, str], name: str) -> str:
    """The value the answer's Set-Cookie gives the cookie ``name`` (AssertionError when it sets none)."""
    match = re.search(rf"(?:^|, ){re.escape(name)}=([^;]*)", headers.get("set-cookie", ""))
    assert match is not None, headers.get("set-cookie")
    return match.group(1).strip('"')


LINK = re.compile(r'<a\b[^>]*?\shref="([^"]*)"')


def links_of(page: bytes) -> list[str]:
    """Every link of a page as the server sent it (before any script runs), in order, each address as a browser
    reads it (its HTML entities decoded)."""
    return [html.unescape(href) for href in LINK.findall(page.decode())]
