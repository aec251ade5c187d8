"""A headless Chromium screenshot of a page that draws itself late (Rerun's web viewer is a WebAssembly
app): the page is loaded over the DevTools protocol and captured once it has drawn something."""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def distinct_colors(png: bytes) -> int:
    import cv2

    image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    return int(len(np.unique(image.reshape(-1, 3), axis=0)))


def screenshot(url: str, out: Path, *, min_colors: int = 1500, timeout_s: float = 90.0,
               size: tuple[int, int] = (1200, 720), ready=None) -> int:
    """Save a PNG of ``url`` once it shows at least ``min_colors`` distinct colours (a drawn 3-D view,
    not a loading screen) and ``ready(png_bytes)`` holds (when given); returns the colour count.
    Raises TimeoutError if it never does."""
    from websockets.sync.client import connect

    port = _free_port()
    # chromium's helper processes may still write its profile as it exits: cleaned up as far as it can be
    with tempfile.TemporaryDirectory(prefix="chromium_profile_", ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen([chromium(), *FLAGS, f"--user-data-dir={profile}",
                                 f"--window-size={size[0]},{size[1]}", f"--remote-debugging-port={port}",
                                 "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            return _capture(connect, port, url, Path(out), min_colors, timeout_s, ready)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _capture(connect, port: int, url: str, out: Path, min_colors: int, timeout_s: float, ready) -> int:
    deadline = time.monotonic() + timeout_s
    targets = None
    while targets is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=1) as r:
                targets = json.load(r)
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium's DevTools endpoint never answered") from None
            time.sleep(0.2)
    page = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
    with connect(page, max_size=64 * 2**20) as ws:
        ids = iter(range(1, 10**6))

        def call(method: str, **params):
            n = next(ids)
            ws.send(json.dumps({"id": n, "method": method, "params": params}))
            while True:
                msg = json.loads(ws.recv())
                if msg.get("id") == n:
                    return msg.get("result", {})

        call("Page.enable")
        call("Page.navigate", url=url)
        colors = 0
        while time.monotonic() < deadline:
            time.sleep(1.0)   # a capture waits for the next frame: the page's start-up paces this loop
            png = base64.b64decode(call("Page.captureScreenshot", format="png")["data"])
            colors = distinct_colors(png)
            out.write_bytes(png)   # the last one seen: what to look at when it never gets ready
            if colors >= min_colors and (ready is None or ready(png)):
                return colors
    raise TimeoutError(f"the page never got ready in {timeout_s:.0f} s ({colors} colours; last view: {out})")
