"""A real headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON
messages separated by NUL bytes, requests on the browser's fd 3 and replies on its fd 4), rather than through
selenium: no dependency, no TCP port, and CDP gives directly what the tests need (file:// pages, real key and mouse
input, DOM queries, the page's network requests, JavaScript exceptions, screenshots)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import signal
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"headless Chromium is not installed at {CHROMIUM} "
                                    "(apt-get install chromium; .ci/run installs it)")


class Chromium:
    """Headless Chromium with the DevTools protocol on a pipe; one page (a flat session) is enough here."""

    KEYS = {"ArrowLeft": 37, "ArrowRight": 39, "Home": 36, "End": 35}

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.log = open(workdir / "chromium.log", "wb")
        to_browser, self._out = os.pipe()
        self._in, from_browser = os.pipe()
        # Above fd 10 first, so that the dup2 onto 3 and 4 in the child cannot clobber one of them.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser, from_browser)]
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, self.log.fileno(), 1),
                   (os.POSIX_SPAWN_DUP2, self.log.fileno(), 2), (os.POSIX_SPAWN_DUP2, high[0], 3),
                   (os.POSIX_SPAWN_DUP2, high[1], 4)]
        args = [str(CHROMIUM), *FLAGS, f"--user-data-dir={workdir / 'profile'}", "--remote-debugging-pipe",
                "about:blank"]
        self.pid = os.posix_spawn(str(CHROMIUM), args, os.environ, file_actions=actions, setsid=True)
        for fd in (to_browser, from_browser, null, *high):
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        self.loader: str | None = None
        """The last :meth:`goto`'s document (its loader id): the last page's late network events are not its."""

    def call(self, method: str, params: dict | None = None, *, browser: bool = False, timeout: float = 30) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if not browser and self.session is not None:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data):]
        reply = self._read(lambda m: m.get("id") == self._next_id, timeout, method)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        return self._read(lambda m: m.get("method") == method, timeout, method, keep=False)

    def _read(self, wanted, timeout: float, what: str, keep: bool = True) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message = json.loads(raw)
                if wanted(message):
                    return message
                if "method" in message:
                    self.events.append(message)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise AssertionError(f"no answer from Chromium to {what} within {timeout} s "
                                     f"(log: {self.workdir / 'chromium.log'})")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise AssertionError(f"Chromium closed the pipe (log: {self.workdir / 'chromium.log'})")
            self._buffer += chunk

    def open_page(self, url: str, width: int = 1440, height: int = 1000) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 browser=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network"):
            self.call(f"{domain}.enable")
        self.emulate(width, height)
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def emulate(self, width: int, height: int, *, scale: float = 1, mobile: bool = False) -> None:
        """The tab's screen from now on: ``width`` by ``height`` CSS pixels, ``scale`` device pixels to one (a
        phone's 3), and with ``mobile`` a phone's browser (the page's ``<meta name="viewport">`` obeyed, no
        scroll bars taking room): what a page laid out for a phone is drawn on. Pages loaded next get it."""
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": scale, "mobile": mobile})
        self.call("Emulation.setTouchEmulationEnabled", {"enabled": mobile})

    def js(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise AssertionError(f"JavaScript error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_js(self, expression: str, seconds: float, what: str) -> Any:
        """Poll a JavaScript expression until it is truthy, with a deadline; its value."""
        deadline = time.monotonic() + seconds
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what} ({expression}); the page: "
                                     f"{self.js('[location.href, document.body.innerText.slice(0, 300)]')}")
            time.sleep(0.1)

    def goto(self, url: str) -> None:
        """Another page in the same tab (the last page's event streams close with it)."""
        self.events.clear()
        self.loader = self.call("Page.navigate", {"url": url}).get("loaderId")
        self.wait_event("Page.loadEventFired")

    def type_into(self, selector: str, text: str) -> None:
        """Text typed into a field, as a person does: the field focused by a real click, then the text inserted as
        keyboard input (the page's own input events fire)."""
        self.click(selector)
        self.call("Input.insertText", {"text": text})

    def choose_files(self, selector: str, *paths: Path) -> None:
        """Files picked in a file input, as its file chooser would: the browser itself reads them when the form is
        sent (DOM.setFileInputFiles on the element)."""
        found = self.call("Runtime.evaluate", {"expression": f"document.querySelector({json.dumps(selector)})"})
        assert found["result"].get("subtype") == "node", f"no element {selector}"
        self.call("DOM.setFileInputFiles", {"files": [str(p) for p in paths], "objectId": found["result"]["objectId"]})

    def submit(self, selector: str) -> None:
        """A real click on a form's button (``selector``), then the page the form's answer loads: waiting on the
        new page's load event, never on time."""
        self.events[:] = [e for e in self.events if e.get("method") != "Page.loadEventFired"]  # the last page's
        self.loader = None  # the answer's document, whose loader id is not known here
        self.click(selector)
        self.wait_event("Page.loadEventFired")

    def csp_violations(self) -> list[str]:
        """What the pages' Content-Security-Policy refused since the last :meth:`goto` (Chromium logs each refusal
        once ``Log.enable`` was called on the page; the log stays on across navigations in the tab)."""
        return [e["params"]["entry"]["text"] for e in self.events if e.get("method") == "Log.entryAdded"
                and "Content Security Policy" in e["params"]["entry"].get("text", "")]

    def exceptions(self) -> list[str]:
        """The uncaught JavaScript exceptions of the pages since the last :meth:`goto` (``Runtime`` is enabled on
        the page, so each is an event), each as its description (message and stack) or its text."""
        found = [e["params"]["exceptionDetails"] for e in self.events if e.get("method") == "Runtime.exceptionThrown"]
        return [(d.get("exception") or {}).get("description") or d.get("text", "") for d in found]

    def _network(self, method: str) -> list[dict[str, Any]]:
        """The page's ``Network.<method>`` events' parameters: of the last :meth:`goto`'s document only (the page
        left sends some more, such as the requests its navigation cut short, which are never answered)."""
        return [e["params"] for e in self.events if e.get("method") == f"Network.{method}"
                and (self.loader is None or e["params"].get("loaderId") == self.loader)]

    def requests(self, origin: str) -> dict[str, str]:
        """The requests to ``origin`` the page sent (its document, scripts, fetches, event streams): each one's id
        and its address."""
        return {e["requestId"]: e["request"]["url"] for e in self._network("requestWillBeSent")
                if e["request"]["url"].startswith(origin + "/")}

    def answers(self, origin: str) -> list[tuple[str, int]]:
        """Each answer from ``origin`` to the page, as its address and HTTP status (an event stream's once its
        headers came, a redirect's on the request it led to)."""
        redirects = [e["redirectResponse"] for e in self._network("requestWillBeSent") if "redirectResponse" in e]
        answered = [e["response"] for e in self._network("responseReceived")]
        return [(r["url"], r["status"]) for r in redirects + answered if r["url"].startswith(origin + "/")]

    def unanswered(self, origin: str) -> list[str]:
        """The requests to ``origin`` with neither an answer nor a failure yet: while any is left, what the page
        shows may still change."""
        done = {e["params"]["requestId"] for e in self.events if e.get("method") in (
            "Network.responseReceived", "Network.loadingFailed", "Network.loadingFinished")}
        return [url for request, url in self.requests(origin).items() if request not in done]

    def key(self, name: str) -> None:
        code = self.KEYS[name]
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": name, "code": name,
                                                 "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code})

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (scrolled into view first)."""
        x, y = self.js(f"""(() => {{ const el = document.querySelector({json.dumps(selector)});
            el.scrollIntoView({{block: 'nearest'}}); const r = el.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()""")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def screenshot(self, path: Path, max_height: int | None = None) -> None:
        """The whole page as a PNG (its full width, and its full height or at most ``max_height`` CSS pixels from
        the top), in device pixels."""
        self.js("window.scrollTo(0, 0)")
        height = self.js("document.documentElement.scrollHeight")
        height = min(height, max_height) if max_height else height
        width = self.js("document.documentElement.scrollWidth")
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0, "width": width, "height": height,
                                                             "scale": 1}})
        path.write_bytes(base64.b64decode(shot["data"]))

    def _exited(self) -> bool:
        """Whether the browser has exited, without reaping it (so its pid stays its own)."""
        return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

    def close(self) -> None:
        try:
            self.call("Browser.close", browser=True, timeout=5)
        except (AssertionError, OSError):
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not self._exited():
            time.sleep(0.05)
        # The browser's own process group (setsid), by its id, whatever is left of it, then the browser reaped. Never
        # the other way round: once reaped, its number may be another process's (pids wrap around), and the kill
        # would reach whatever group held it then (the loop's `else` used to run after `waitpid` had reaped it). Not
        # reaped yet, the browser holds its number, exited or not.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        for fd in (self._in, self._out):
            os.close(fd)
        self.log.close()
