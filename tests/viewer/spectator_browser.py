"""Helpers for the browser tests: Debian's Chromium driven by Playwright, a real server process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """Debian's chromium (``apt-get install chromium``); Playwright cannot download its own here."""
    for candidate in (
        os.environ.get("NARDY_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def why_no_browser() -> str | None:
    """None when the browser tests can run, else the reason they skip."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; .ci/run does)"
    if chromium_path() is None:
        return "no chromium binary (apt-get install chromium; .ci/run does)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SOURCE_TREE = Path(__file__).resolve().parents[2]
"""The repository: a server started from here would import ``nardy`` from its source folders."""


def installed_nardy() -> str:
    """The ``nardy`` command the install put beside this Python (``.venv/bin/nardy``), as a user
    runs it. ``python -m nardy`` from the repository would import the source tree instead (the
    working directory comes first on ``sys.path``) and hide a package that does not work once
    installed: issue 35, static files 404 only from the editable install's links."""
    beside = Path(sys.executable).parent / "nardy"
    found = str(beside) if beside.exists() else shutil.which("nardy")
    if found is None:
        raise RuntimeError("no installed `nardy` command: install the project as the README does")
    return found


def outside_environment() -> dict[str, str]:
    """The environment without ``PYTHONPATH``, which could point the server back at the source."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@contextmanager
def spectator(db: Path, *extra: str) -> Iterator[str]:
    """The installed ``nardy web --db DB`` in its own process on a free loopback port, started
    from a folder outside the repository (so it runs the installed package, not the source
    tree); yields its base URL and stops it (by its process id) afterwards."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="nardy-web-") as cwd:
        process = subprocess.Popen(
            [installed_nardy(), "web", "--db", str(db), "--port", str(port), *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=cwd,
            env=outside_environment(),
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(base + "/api/tournaments", timeout=2):
                        break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        process.kill()
                        output = process.stdout.read() if process.stdout else ""
                        raise RuntimeError(f"nardy web did not start: {output}") from None
                    time.sleep(0.1)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout:
                process.stdout.close()


@contextmanager
def browser_page(viewport: tuple[int, int] = (1280, 900)) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            yield page
        finally:
            browser.close()
