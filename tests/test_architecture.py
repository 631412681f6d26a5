"""The layers (docs/architecture.md): the kernel ``nardy.core`` imports nothing from the rest of the
package, statically (every import statement of core/, at any depth) and at run time (importing
it and playing a game loads no module above it but the variant plugins it was asked for)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = "nardy.core"

ALLOWED_UPWARD = {
    # The deprecated alias of nardy.bots for the 0.1 release: it imports nardy.bots only when one
    # of its names is asked for, and nothing in the kernel imports it.
    "core/bots.py": {"nardy.bots"},
}


def _is_kernel(module: str) -> bool:
    return module == KERNEL or module.startswith(KERNEL + ".")


def _upward_references(source: str) -> set[str]:
    """The ``nardy.*`` modules outside the kernel that ``source`` imports: import statements, and
    ``importlib.import_module("nardy.…")`` with a literal name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        found.update(
            name for name in names if name.split(".")[0] == "nardy" and not _is_kernel(name)
        )
    return found


def test_the_checker_finds_upward_imports() -> None:
    source = (
        "import nardy.core.game\nfrom nardy.core import load_variant\nfrom . import dice\n"
        "def f():\n    from nardy.svg import board\n    import nardy.bots.neural as n\n"
        "    importlib.import_module('nardy.web')\n    import_module('nardy.core.rules')\n"
    )
    assert _upward_references(source) == {"nardy.svg", "nardy.bots.neural", "nardy.web"}


def test_the_kernel_imports_nothing_above_it() -> None:
    upward = {}
    for path in sorted((ROOT / "core").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        found = _upward_references(path.read_text()) - ALLOWED_UPWARD.get(name, set())
        if found:
            upward[name] = sorted(found)
    assert upward == {}


def test_importing_the_kernel_and_playing_loads_nothing_above_it() -> None:
    code = """
import sys
from nardy.core import load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision

game = Game(load_variant("backgammon"), SeededDice(3))
while (decision := game.decision) is not None:
    if isinstance(decision, PlayDecision):
        game.decide(0)
    else:
        game.decide(False if isinstance(decision, DoubleDecision) else "take")
print(" ".join(sorted(m for m in sys.modules if m.startswith("nardy."))))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = done.stdout.split()
    assert "nardy.core.game" in loaded
    # The variants are plugins the kernel loads by name (core/plugins.py), as it loads a third
    # party's; nothing else above the kernel is loaded.
    assert [m for m in loaded if not _is_kernel(m) and not m.startswith("nardy.variants")] == []
