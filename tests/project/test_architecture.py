"""The layers (docs/architecture.md): the kernel ``nardy.core`` imports nothing from the rest of the
package, statically (every import statement of core/, at any depth) and at run time (importing
it and playing a game loads no module above it but the variant plugins it was asked for)."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "nardy.core"

ALLOWED_UPWARD: dict[str, set[str]] = {}
"""Kernel files allowed an upward reference: none (0.2.0 removed the alias nardy.core.bots)."""


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


# -- docs/architecture.md: the table of layers matches the code -----------------------------------

DOC = ROOT / "docs" / "architecture.md"
PACKAGE_FOLDERS = {"core": "nardy.core", "variants": "nardy.variants", "arena": "nardy.arena"}
APPLICATIONS = 4


def _section(title: str) -> str:
    return DOC.read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _layers() -> dict[str, int]:
    """Path → layer, from the table of docs/architecture.md."""
    found: dict[str, int] = {}
    for number, paths in re.findall(
        r"^\| (\d) [\w ,]+ \| (.+) \|$", _section("Where each folder sits"), re.M
    ):
        for path in re.findall(r"`([^`]+)`", paths):
            found[path] = int(number)
    return found


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = PACKAGE_FOLDERS.get(parts[0], "nardy")
    rest = parts[1:]
    name = ".".join((package, *rest))
    return name.removesuffix(".__init__")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in (*PACKAGE_FOLDERS, "nardy"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "_gen" not in path.parts and "__pycache__" not in path.parts:
                found[_module_name(path)] = path
    return found


@functools.cache
def _trees() -> dict[str, ast.Module]:
    """Every module of the package, parsed once for the tests below."""
    return {name: ast.parse(path.read_text()) for name, path in _modules().items()}


def _is_command_line(path: Path) -> bool:
    return path.name in ("cli.py", "__main__.py") or path.name.endswith("_cli.py")


def _layer_of(path: Path, layers: dict[str, int]) -> int | None:
    if _is_command_line(path):
        return APPLICATIONS
    relative = path.relative_to(ROOT).as_posix()
    matches = [p for p in layers if relative == p or (p.endswith("/") and relative.startswith(p))]
    return layers[max(matches, key=len)] if matches else None


def test_the_layer_table_names_existing_paths() -> None:
    layers = _layers()
    assert set(layers.values()) == {0, 1, 2, 3, 4}
    assert [p for p in layers if not (ROOT / p).exists()] == []


def test_every_module_is_in_one_layer() -> None:
    layers = _layers()
    assert [name for name, path in _modules().items() if _layer_of(path, layers) is None] == []


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    layers = _layers()
    modules = _modules()
    layer = {name: _layer_of(path, layers) for name, path in modules.items()}

    def target_layer(imported: str) -> int | None:
        while imported and imported not in layer:
            imported = imported.rpartition(".")[0]
        return layer.get(imported)

    upward = []
    for name in modules:
        for node in ast.walk(_trees()[name]):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for imported in names:
                above = target_layer(imported) if imported.startswith("nardy") else None
                own = layer[name]
                if above is not None and own is not None and above > own:
                    upward.append(f"{name} (layer {own}) imports {imported} (layer {above})")
    assert upward == []


def test_the_doc_names_every_top_level_folder() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    folders = {line.split("/")[0] + "/" for line in tracked if "/" in line}
    named = set(re.findall(r"`([^`]+/)`", DOC.read_text()))
    assert folders - named == set()


def test_command_line_modules_follow_the_rule() -> None:
    """A module that defines click commands is a cli.py or a <group>_cli.py."""
    decorator = re.compile(r"^\s*@(?:click|[\w.]+)\.(?:command|group)\(", re.M)
    misplaced = [
        name
        for name, path in _modules().items()
        if decorator.search(path.read_text()) and not _is_command_line(path)
    ]
    assert misplaced == []


# -- no import cycle ------------------------------------------------------------------------------


def _imported_modules(
    name: str, path: Path, known: set[str], tree: ast.AST | None = None
) -> set[str]:
    """The package's modules that module ``name`` imports, at any depth (inside functions too),
    but not under ``if TYPE_CHECKING:`` (never run). ``from a import b`` names the module ``a.b``
    where that is one, else ``a``; a relative import is resolved against ``name``'s package."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    if tree is None:
        tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in known else base)
    return {module for module in found if module in known and module != name}


@functools.cache
def _import_graph() -> dict[str, set[str]]:
    """Each module's imports of the package's modules, found once for the tests below (which
    only read it)."""
    modules = _modules()
    known = set(modules)
    trees = _trees()
    return {
        name: _imported_modules(name, path, known, trees[name]) for name, path in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_cycle_finder_finds_cycles_through_function_level_imports(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    files = {
        "a": "from pkg import b\n",
        "b": "def f():\n    from pkg.c import x\n",
        "c": "import pkg.a\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.d\n",
        "d": "from . import c\n",
    }
    for stem, text in files.items():
        (tmp_path / "pkg" / f"{stem}.py").write_text(text)
    known = {f"pkg.{stem}" for stem in files}
    graph = {m: _imported_modules(m, tmp_path / "pkg" / f"{m[4:]}.py", known) for m in known}
    assert graph["pkg.d"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert _cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


KNOWN_CYCLES: list[list[str]] = []


def test_the_package_has_no_import_cycle() -> None:
    """Every module can be read, and imported, without first importing itself: a cycle, even
    through an import inside a function, means two modules that are one, or a layer upside down.
    (Imports under ``if TYPE_CHECKING:`` do not count: they never run.)"""
    assert _cycles(_import_graph()) == KNOWN_CYCLES


def test_the_engines_are_below_the_bots_and_the_analysis() -> None:
    """nardy.engines (the net, the evaluators, the search, gnubg's probabilities) is what the bots
    and the analysis both use: it imports neither (docs/architecture.md)."""
    above = ("nardy.bots", "nardy.analysis")
    upward = {
        name: sorted(m for m in imported if m.startswith(above))
        for name, imported in _import_graph().items()
        if name.startswith("nardy.engines") and any(m.startswith(above) for m in imported)
    }
    assert upward == {}


# -- no private name used across modules ----------------------------------------------------------


def _is_private(name: str) -> bool:
    """``_name``: private to its module (or package). Not ``__dunder__``, nor ``_sunder_``, which
    are protocols (IPython's ``_repr_svg_``)."""
    return name.startswith("_") and not name.endswith("_")


def _private_names_defined(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, assignments (``_x = …``,
    ``self._x = …``), parameters, ``as`` names and string constants (``__slots__``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return {name for name in names if _is_private(name)}


def _private_uses(name: str, tree: ast.AST, own: set[str], elsewhere: set[str]) -> set[str]:
    """What module ``name`` reaches of another module's privates: ``from x import _y`` (unless
    ``x`` is ``name``'s own package: a package's private submodules are its modules'), an import
    through a private module of another package, and ``obj._y`` where ``_y`` is a private name
    that another module of the package defines and this one does not (``self``/``cls`` aside)."""

    def reaches_into(module: str) -> bool:
        parts = module.split(".")
        for i, part in enumerate(parts):
            if _is_private(part):
                owner = ".".join(parts[:i])
                return not name.startswith(owner + ".")
        return False

    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "nardy":
                continue
            if reaches_into(node.module):
                found.add(f"from {node.module} import …")
            own_package = name == node.module or name.startswith(node.module + ".")
            for alias in node.names:
                if _is_private(alias.name) and not own_package:
                    found.add(f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            found.update(
                f"import {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] == "nardy" and reaches_into(alias.name)
            )
        elif isinstance(node, ast.Attribute) and _is_private(node.attr):
            value = node.value
            if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                continue
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "super"
            ):
                continue
            if node.attr not in own and node.attr in elsewhere:
                found.add(ast.unparse(node))
    return found


def _private_names_used_across_modules() -> dict[str, set[str]]:
    trees = _trees()
    defined = {name: _private_names_defined(tree) for name, tree in trees.items()}
    definers = Counter(private for names in defined.values() for private in names)
    uses = {}
    for name, tree in trees.items():
        own = defined[name]
        elsewhere = {private for private, n in definers.items() if n > (private in own)}
        found = _private_uses(name, tree, own, elsewhere)
        if found:
            uses[name] = found
    return uses


def test_the_private_name_finder_finds_each_kind_of_use() -> None:
    source = (
        "from nardy.core.movegen import _pin, board_of\nfrom nardy.core import _engine\n"
        "import nardy.arena._gen.bot_pb2\nfrom nardy.bots import _helper\n"
        "def f(bot, self):\n    self._mine, bot._scale, super()._x\n    return bot._net(), bot._own\n"
        "_own = 1\n"
    )
    tree = ast.parse(source)
    found = _private_uses(
        "nardy.bots.neural", tree, _private_names_defined(tree), {"_net", "_scale", "_x"}
    )
    assert found == {
        "from nardy.core.movegen import _pin",
        "from nardy.core import _engine",
        "import nardy.arena._gen.bot_pb2",
        "bot._scale",
        "bot._net",
    }


KNOWN_PRIVATE_USES: dict[str, set[str]] = {}


def test_no_private_name_is_used_across_modules() -> None:
    """A module's ``_name`` is its own: another module that needs it asks for a public name with
    a docstring (one home, a stated contract), not for the implementation behind it."""
    assert _private_names_used_across_modules() == KNOWN_PRIVATE_USES


# -- docs/architecture.md: the arena's rooms ------------------------------------------------------

ROOMS_BELOW_THE_SERVICE = ("competition", "clients", "records")
ARENA_API = ("nardy.arena.protocol.arena_pb2", "nardy.arena._gen.nardy.arena")


def _rooms() -> dict[str, str]:
    """Path → room of the arena, from the rooms table of docs/architecture.md."""
    found: dict[str, str] = {}
    for room, paths in re.findall(
        r"^\| (\w+) \| (.+?) \| [^|]+ \|$", _section("The arena's rooms"), re.M
    ):
        for path in re.findall(r"`([^`]+)`", paths):
            found[path] = room
    return found


def _arena_rooms() -> dict[str, str | None]:
    """Module → its room (None: in no row), for every module of nardy.arena."""
    rooms = _rooms()

    def room_of(path: Path) -> str | None:
        relative = path.relative_to(ROOT).as_posix()
        matches = [
            p for p in rooms if relative == p or (p.endswith("/") and relative.startswith(p))
        ]
        return rooms[max(matches, key=len)] if matches else None

    return {
        name: room_of(path) for name, path in _modules().items() if name.startswith("nardy.arena")
    }


def test_every_arena_module_is_in_one_room() -> None:
    rooms = _rooms()
    assert set(rooms.values()) == {"faces", "service", *ROOMS_BELOW_THE_SERVICE}
    assert [p for p in rooms if not (ROOT / p).exists()] == []
    # Each room but the faces is a subpackage: its folder, with nothing of it elsewhere.
    assert {f"arena/{room}/" for room in ("service", *ROOMS_BELOW_THE_SERVICE)} <= set(rooms)
    assert [name for name, room in _arena_rooms().items() if room is None] == []


def test_the_rooms_import_as_the_drawing_says() -> None:
    """Nothing below the service imports it, and a room reaches the faces only through
    ``nardy.arena.protocol`` (the commands and the SDK are built on the rooms, not under them)."""
    room = _arena_rooms()
    wrong = []
    for name, imported in _import_graph().items():
        own = room.get(name)
        if own is None or own == "faces":
            continue
        for target in sorted(imported):
            theirs = room.get(target)
            if own in ROOMS_BELOW_THE_SERVICE and theirs == "service":
                wrong.append(f"{name} ({own}) imports {target} (the service)")
            if theirs == "faces" and target != "nardy.arena.protocol":
                wrong.append(f"{name} ({own}) imports {target} (a face)")
    assert wrong == []


ACROSS_THE_ROOMS_BELOW: dict[str, set[str]] = {
    "nardy.arena.records.storage": {"nardy.arena.competition.totals"},
    "nardy.arena.records.verify": {"nardy.arena.competition.schedule"},
}
"""The imports from one room below the service into another that docs/architecture.md names
("What is still across rooms"): a store opened without a keeper takes the competition's; the
verifier checks stored games against their schedule."""


def test_the_records_and_the_clients_reach_no_other_room() -> None:
    """The store only stores: the records import another room only where the architecture says
    (the default keeper of the totals, the verifier), the clients none (the SPRT's messages are
    the servicer's); the competition uses both."""
    room = _arena_rooms()
    found: dict[str, set[str]] = {}
    for name, imported in _import_graph().items():
        if room.get(name) not in ("records", "clients"):
            continue
        for target in imported:
            theirs = room.get(target)
            if theirs in ROOMS_BELOW_THE_SERVICE and theirs != room.get(name):
                found.setdefault(name, set()).add(target)
    assert found == ACROSS_THE_ROOMS_BELOW


def test_only_the_servicer_translates_the_arena_api() -> None:
    """Of the service, the competition and the records, only the servicer makes or reads
    ``nardy.arena.v1`` messages: the core answers with values (the clients speak the bots'
    protocol, the dial-out stream included)."""
    room = _arena_rooms()
    users = set()
    for name, tree in _trees().items():
        if room.get(name) not in ("service", "competition", "records"):
            continue
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            if any(m.startswith(ARENA_API) for m in modules):
                users.add(name)
    assert users == {"nardy.arena.service.servicer"}
