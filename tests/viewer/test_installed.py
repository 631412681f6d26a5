"""The spectator and the CLI as the README installs them, not as pytest imports them.

``python -m pytest`` puts the repository first on ``sys.path``, so every other test imports
``nardy`` from the source folders. A user runs the ``nardy`` command of the install instead:
with the README's editable install (``editable_mode=strict``) that is a tree of links into the
source, and Starlette refused the linked static files (issue 35: every page without its CSS and
script, while the tests passed). These tests start the installed command from a folder outside
the repository, as a user would.
"""

from __future__ import annotations

import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from spectator_browser import SOURCE_TREE, installed_nardy, outside_environment, spectator

STATIC = SOURCE_TREE / "nardy" / "web" / "static"


def run_installed(*args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="nardy-cli-") as cwd:
        return subprocess.run(
            [installed_nardy(), *args],
            cwd=cwd,
            env=outside_environment(),
            capture_output=True,
            text=True,
            timeout=60,
        )


def fetch(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.headers.get_content_type(), response.read()


def test_the_installed_command_runs_the_installed_package() -> None:
    """The command answers, and the package it imports is not the source folder pytest sees
    (else the next test would prove nothing about the install)."""
    version = run_installed("--version")
    assert version.returncode == 0 and version.stdout.startswith("nardy "), version
    assert run_installed("web", "--help").returncode == 0
    python = Path(installed_nardy()).with_name("python")
    with tempfile.TemporaryDirectory() as cwd:
        where = subprocess.run(
            [str(python), "-c", "import nardy.web.app as m; print(m.__file__)"],
            cwd=cwd,
            env=outside_environment(),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
    assert Path(where) != SOURCE_TREE / "nardy" / "web" / "app.py", where


def test_the_installed_web_serves_its_pages_with_their_css_and_script(
    finished_db: Path,
) -> None:
    with spectator(finished_db) as base:
        status, kind, page = fetch(base + "/")
        assert (status, kind) == (200, "text/html")
        assert b'href="/static/nardy.css"' in page and b'src="/static/nardy.js"' in page
        for name, expected in (
            ("nardy.css", "text/css"),
            ("nardy.js", "text/javascript"),
            ("favicon.svg", "image/svg+xml"),
        ):
            status, kind, body = fetch(f"{base}/static/{name}")
            assert (status, kind) == (200, expected), name
            assert body == (STATIC / name).read_bytes(), name
        # The folder check still holds with the links followed: nothing outside it is served.
        for escape in ("/static/../app.py", "/static/%2e%2e/app.py"):
            try:
                status = fetch(base + escape)[0]
            except urllib.error.HTTPError as exc:
                status = exc.code
            assert status == 404, escape
