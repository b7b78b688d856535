"""The web dashboard's server (``arena serve --http`` on a free port) and HTTP from the standard library."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

from support.servers import Server

SHOTS = Path("/tmp/arena-web-shots")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def http(url: str, *, headers: dict[str, str] | None = None, form: dict[str, str] | None = None
         ) -> tuple[int, dict[str, str], bytes]:
    """One request: its status, headers and body (errors are answers too)."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
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
