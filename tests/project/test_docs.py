"""Every code block of the documentation is a test, so the docs cannot drift from the code.

Fenced blocks of README.md, docs/**/*.md and examples/**/*.md run by their language:

* ``python`` — executed; the blocks of one file share one namespace, in file order (a later
  block may use what an earlier one defined), in a temporary working directory;
* ``sh``, ``bash``, ``shell`` — run with ``bash -e``; ``console`` — the ``$ `` lines are run, the
  other lines are the output shown (not compared);
* ``toml``, ``json`` — parsed.

Commands run in a temporary folder holding links to the repository's ``examples/`` and ``protos/``,
with this Python's ``nardy`` first on ``PATH``. A block that cannot run here is marked, visibly,
by an HTML comment on the line before it (or among the HTML comments right above it), which the
test reports as its skip reason::

    <!-- doc-test: skip (needs a running arena) -->

Two more markers, which may be combined with each other: ``<!-- doc-test: slow (the reason) -->``
leaves the block out of the default run like any test marked ``slow`` (tests/conftest.py), and
``<!-- doc-test: needs go protoc (the reason) -->`` skips it, saying so, where one of those programs
is not on ``PATH``.

A block without a language is text (output, a listing, a diagram) and is reported as skipped.
Indented (unfenced) blocks are text too: write commands meant to be run in fenced ``sh`` blocks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Installed dependencies and build outputs (an example bot's node_modules, say) are not our docs.
NOT_OURS = {"node_modules", ".venv", "build", "dist", "__pycache__"}
DOCS = sorted(
    path
    for path in [
        ROOT / "README.md",
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "examples").rglob("*.md"),
    ]
    if not NOT_OURS & set(path.relative_to(ROOT).parts)
)
MARKER = re.compile(
    r"^<!--\s*doc-test:\s*(?P<kind>skip|slow|needs)(?P<programs>(\s+[\w.+-]+)*)"
    r"\s*\((?P<reason>.+)\)\s*-->\s*$"
)
FENCE = re.compile(r"^(?P<indent> {0,3})```(?P<lang>[\w+-]*)[^\n]*$")
TIMEOUT = 120


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    lang: str
    code: str
    skip: str | None
    slow: str | None = None
    needs: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks_of(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with their skip markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines) and not re.match(r"^ {0,3}```\s*$", lines[index]):
            body.append(lines[index])
            index += 1
        # The markers are on the lines before the fence, among the HTML comments right above it.
        markers: dict[str, re.Match[str]] = {}
        for i in range(start - 1, -1, -1):
            line = lines[i].strip()
            if not line:
                continue
            if not (line.startswith("<!--") and line.endswith("-->")):
                break
            marker = MARKER.match(line)
            if marker:
                markers.setdefault(marker["kind"], marker)
        found.append(
            Block(
                path,
                start + 1,
                opening["lang"].lower(),
                "\n".join(body) + "\n",
                markers["skip"]["reason"] if "skip" in markers else None,
                markers["slow"]["reason"] if "slow" in markers else None,
                tuple(markers["needs"]["programs"].split()) if "needs" in markers else (),
            )
        )
        index += 1
    return found


BLOCKS = [block for path in DOCS for block in blocks_of(path)]
_NAMESPACES: dict[Path, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    for name in ("examples", "protos"):
        if (ROOT / name).exists():
            (folder / name).symlink_to(ROOT / name)
    return folder


def _environment() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "COLUMNS": "100",
    }
    env.pop("NARDY_DISABLE_PLUGIN_AUTOLOAD", None)
    return env


def _run_shell(script: str, cwd: Path, block: Block) -> None:
    # A session of its own, so that a block that hangs is stopped with everything it started.
    child = subprocess.Popen(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(),
        start_new_session=True,
    )
    try:
        stdout, stderr = child.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(f"{block.name}: still running after {TIMEOUT} s (mark it if it serves)")
    assert child.returncode == 0, (
        f"{block.name}: exit {child.returncode}\n{script}\n--- stdout\n{stdout[-2000:]}"
        f"\n--- stderr\n{stderr[-2000:]}"
    )


def _console_commands(code: str) -> str:
    commands: list[str] = []
    continuing = False
    for line in code.splitlines():
        if line.startswith("$ ") or continuing:
            text = line[2:] if line.startswith("$ ") and not continuing else line
            commands.append(text)
            continuing = text.rstrip().endswith("\\")
    return "\n".join(commands) + "\n"


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, marks=pytest.mark.slow if b.slow else ()) for b in BLOCKS],
    ids=[block.name for block in BLOCKS],
)
def test_doc_code_block(block: Block, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.skip:
        pytest.skip(f"marked in the doc: {block.skip}")
    missing = [program for program in block.needs if shutil.which(program) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}, not installed here (marked in the doc)")
    if block.lang in ("", "text", "output"):
        pytest.skip("text, not code (a block without a language)")
    if block.lang == "python":
        monkeypatch.chdir(workdir)
        namespace = _NAMESPACES.setdefault(block.path, {"__name__": "__doc_test__"})
        exec(compile(block.code, block.name, "exec"), namespace)
    elif block.lang in ("sh", "bash", "shell"):
        _run_shell(block.code, workdir, block)
    elif block.lang == "console":
        _run_shell(_console_commands(block.code), workdir, block)
    elif block.lang == "toml":
        tomllib.loads(block.code)
    elif block.lang == "json":
        json.loads(block.code)
    else:
        pytest.fail(f"{block.name}: no runner for ```{block.lang} blocks; mark it or tag it text")


def test_the_harness_finds_blocks_and_markers(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "text\n\n<!-- doc-test: skip (needs a running arena) -->\n```sh\nnardy arena serve\n```\n"
        "\n```python\nx = 1\n```\n"
        "<!-- doc-test: skip (a reason) -->\n<!-- other:marker -->\n```sh\nexit 1\n```\n"
    )
    first, second, third = blocks_of(doc)
    assert third.skip == "a reason"
    assert (first.lang, first.skip, first.line, first.code) == (
        "sh",
        "needs a running arena",
        4,
        "nardy arena serve\n",
    )
    assert (second.lang, second.skip, second.line) == ("python", None, 8)
    assert (first.slow, first.needs, third.slow, third.needs) == (None, (), None, ())
    doc.write_text(
        "<!-- doc-test: slow (builds a bot) -->\n<!-- doc-test: needs go protoc-gen-go (Go) -->\n"
        "```sh\nbuild\n```\n"
    )
    (marked,) = blocks_of(doc)
    assert (marked.skip, marked.slow, marked.needs) == (
        None,
        "builds a bot",
        ("go", "protoc-gen-go"),
    )
    assert _console_commands("$ nardy a \\\n   --b\noutput\n$ nardy c\n") == (
        "nardy a \\\n   --b\nnardy c\n"
    )
