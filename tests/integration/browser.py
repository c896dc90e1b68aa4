"""A headless Chromium driven over the Chrome DevTools Protocol, for the demo page's test.

No client-go twin: test support. CDP over the DevTools websocket with ``websocket-client``
(already installed: the official kubernetes client depends on it), rather than Playwright:
Playwright's wheel is ~40 MB of driver plus a Node runtime and wants to download its own
browsers, while this needs only Debian's ``chromium`` and the five CDP methods below
(Target, Page, Runtime.evaluate, Input.dispatchMouseEvent, Page.captureScreenshot).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

__all__ = ["Browser", "chromium_path"]


def chromium_path() -> str | None:
    """The Chromium to drive: $CHROMIUM, else the first of Debian's and others' names on PATH."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless Chromium with one page; every call waits for its CDP answer."""

    def __init__(self, executable: str, width: int = 1280, height: int = 1000) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="demo-ui-chromium-")
        # a file, not a pipe: chromium logs enough to fill a pipe nobody reads
        self._log_path = Path(self._profile.name) / "chromium.log"
        self._log = self._log_path.open("w")
        self.process = subprocess.Popen(
            [
                executable,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile.name}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        port = self._devtools_port(Path(self._profile.name) / "DevToolsActivePort")
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5))
        page = next(t for t in targets if t["type"] == "page")
        # No Origin header: Chromium (111+) refuses a DevTools websocket whose Origin it was not
        # told to allow, and a CDP client is no web page.
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=10, suppress_origin=True
        )
        self._id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _devtools_port(self, active_port: Path, timeout: float = 20.0) -> int:
        """Chromium writes its DevTools port to DevToolsActivePort once it listens."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited: {self._log_path.read_text()[-2000:]}")
            if active_port.exists():
                first = active_port.read_text().splitlines()
                if first and re.fullmatch(r"\d+", first[0]):
                    return int(first[0])
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one CDP command and return its result (events in between are skipped)."""
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self._id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def js(self, expression: str) -> Any:
        """Evaluate ``expression`` in the page; its value (promises awaited)."""
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait(self, expression: str, what: str, timeout: float = 10.0) -> Any:
        """Poll ``expression`` until it is truthy; its value (an element found: True)."""
        deadline = time.monotonic() + timeout
        value = None
        # a DOM node does not travel by value: it comes back as true
        wrapped = f"(() => {{ const v = ({expression}); return v instanceof Node ? true : v; }})()"
        while time.monotonic() < deadline:
            try:
                value = self.js(wrapped)
            except RuntimeError as err:
                # e.g. the page is still loading (no document.body yet)
                value = err
            if value and not isinstance(value, RuntimeError):
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what} (last value: {value!r})")

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the element (scrolled into view first)."""
        box = self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path: Path) -> Path:
        """A PNG of the page as it is (the top of it, at the window's size)."""
        self.js("window.scrollTo(0, 0)")
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self._log.close()
            self._profile.cleanup()
