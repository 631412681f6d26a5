"""Every engine module asks for single-threaded BLAS before it imports numpy (nardy.engines.blas).

The request counts only before numpy's first import in a process. ``nardy.engines.search`` imported
numpy first: a program whose first nardy import was the search (or ``nardy.train.td``) ran with
BLAS threads that fought for the cores. On two busy cores the same analyses and rollouts took
twice the CPU (giul, khachapuri, mad_gulbar, long and backgammon, side by side). The learning
environments (``nardy.env``, ``nardy.encoding``, ``nardy.openspiel``) are left out on purpose: they
run inside a user's program and leave its numpy alone.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import nardy

PACKAGE = Path(nardy.__file__).resolve().parent
LEFT_ALONE = ("env/", "encoding.py", "openspiel.py")


def _imports_numpy(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] == "numpy" for alias in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "numpy"


def _imports_blas(node: ast.stmt) -> bool:
    if isinstance(node, ast.ImportFrom):
        named = {f"{node.module}.{alias.name}" for alias in node.names}
        return node.module == "nardy.engines.blas" or "nardy.engines.blas" in named
    return isinstance(node, ast.Import) and any(
        alias.name == "nardy.engines.blas" for alias in node.names
    )


def numpy_before_blas(source: str) -> bool:
    """Whether a module's top level imports numpy before it imports ``nardy.engines.blas``."""
    for node in ast.parse(source).body:
        if _imports_blas(node):
            return False
        if _imports_numpy(node):
            return True
    return False


def test_every_engine_module_asks_for_single_threaded_blas_before_numpy() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(LEFT_ALONE) or relative == "engines/blas.py":
            continue
        if numpy_before_blas(path.read_text(encoding="utf-8")):
            offenders.append(relative)
    assert offenders == [], (
        "import nardy.engines.blas before numpy "
        "(`from nardy.engines import blas  # noqa: F401  # isort: skip`) in: "
        + ", ".join(offenders)
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import numpy as np\nfrom nardy.engines import blas\n", True),
        ("from numpy.typing import NDArray\n", True),
        ("from nardy.engines import blas  # noqa\nimport numpy as np\n", False),
        ("import nardy.engines.blas\nimport numpy\n", False),
        ("import math\n", False),
    ],
)
def test_the_check_reads_the_order_of_the_imports(source: str, expected: bool) -> None:
    assert numpy_before_blas(source) is expected


WATCH_NUMPY = """
import sys
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            sys.meta_path.remove(self)
            print("blas first" if "nardy.engines.blas" in sys.modules else "numpy first")
sys.meta_path.insert(0, Watch())
import {module}
"""


@pytest.mark.parametrize("module", ["nardy.engines.search", "nardy.train.td"])
def test_a_program_importing_an_engine_first_gets_single_threaded_blas(module: str) -> None:
    """The behaviour itself, in a fresh process: the module as a program's first import."""
    code = WATCH_NUMPY.format(module=module)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "blas first"
