"""A headless Chromium driven through the DevTools protocol over a pipe (standard library only).

``Browser`` starts Debian's ``chromium`` with ``--remote-debugging-pipe`` (commands on fd 3, answers
on fd 4, NUL-separated JSON), attaches to its page and offers what the UI tests need: open a URL,
wait until the page shows something, read the page's text, click, take a screenshot.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


_LAUNCH = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
           "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); os.execv(sys.argv[3], sys.argv[3:])")


def _above(fd: int, low: int) -> int:
    """A copy of ``fd`` numbered ``low`` or more (the original is closed)."""
    import fcntl

    copy = fcntl.fcntl(fd, fcntl.F_DUPFD, low)
    os.close(fd)
    return copy


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1600, height: int = 1000, timeout: float = 60.0):
        executable = chromium_path()
        if executable is None:
            raise RuntimeError("no chromium on PATH (.ci/chromium.sh installs Debian's)")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="fairops-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # Move the child's ends above 3 and 4, so placing them there cannot overwrite one with the other.
        to_browser_read, from_browser_write = (_above(fd, 100) for fd in (to_browser_read, from_browser_write))
        # A tiny launcher puts the pipe ends on the descriptors 3 and 4 that Chromium reads and writes.
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, str(to_browser_read), str(from_browser_write), executable, *FLAGS,
             f"--user-data-dir={self._profile}", f"--window-size={width},{height}", "about:blank"],
            pass_fds=(to_browser_read, from_browser_write), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._ids = itertools.count(1)
        self._answers: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # --------------------------------------------------------------------------- protocol
    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._lock:
                        box = self._answers.get(message["id"])
                    if box is not None:
                        box.put(message)

    def send(self, method: str, session: bool = False, **params):
        number = next(self._ids)
        box: queue.Queue = queue.Queue()
        with self._lock:
            self._answers[number] = box
        message = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        try:
            answer = box.get(timeout=self.timeout)
        except queue.Empty:
            raise TimeoutError(f"no answer to {method} within {self.timeout}s") from None
        finally:
            with self._lock:
                self._answers.pop(number, None)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    # ------------------------------------------------------------------------- page actions
    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        self.send("Page.navigate", session=True, url=url)

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def wait_for(self, condition: str, timeout: float = 120.0, what: str = "") -> None:
        """Poll the JavaScript expression ``condition`` until it is true."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.evaluate(condition):
                    return
            except RuntimeError:  # the page is between documents
                pass
            time.sleep(0.5)
        raise TimeoutError(f"page never showed {what or condition} in {timeout}s; it shows:\n{self.text()[:3000]}")

    def wait_for_text(self, *needles: str, timeout: float = 120.0) -> None:
        condition = " && ".join(f"document.body.innerText.includes({json.dumps(n)})" for n in needles)
        self.wait_for(f"!!document.body && {condition}", timeout, what=f"{needles}")

    def click(self, selector: str) -> bool:
        """Click the first element matching ``selector``; False when there is none."""
        return bool(self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (e) e.click(); return !!e; }})()"))

    def screenshot(self, path) -> None:
        data = self.send("Page.captureScreenshot", session=True, format="png")["data"]
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))

    # ------------------------------------------------------------------------------ closing
    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
