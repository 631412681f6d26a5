"""Generate the Python protobuf and gRPC code of the nardy protocol into ``arena/_gen/``.

Usage::

    python protos/generate.py            # (re)write arena/_gen/
    python protos/generate.py --check    # exit 1, listing the stale files, if arena/_gen/ is old

The protos live in ``protos/nardy/<domain>/v1/*.proto`` (proto packages ``nardy.<domain>.v1``).
protoc (from ``grpcio-tools``) writes ``*_pb2.py``, plus ``*_pb2_grpc.py`` for files that declare
a service, and mypy-protobuf writes the ``.pyi`` stubs. The output mirrors the proto packages
under ``arena/_gen/``: ``nardy/bot/v1/bot.proto`` becomes ``nardy.arena._gen.nardy.bot.v1.bot_pb2``.

protoc assumes that the proto package is also the top-level Python package and emits absolute
imports such as ``from nardy.game.v1 import game_pb2`` (protocolbuffers/protobuf#1491). This
script rewrites them to ``from nardy.arena._gen.nardy.game.v1 import game_pb2``, and likewise the
module name that protobuf stamps on the generated classes, so that ``__module__`` and pickling
name the real module. It also writes the ``__init__.py`` files and a header on every file (the
temporalio ``gen_protos.py`` approach, STYLE.md §H).

The output depends on the versions of grpcio-tools and mypy-protobuf (protoc embeds its version
and a runtime check); the header records them so that a ``--check`` failure caused by a different
toolchain is easy to recognise.
"""

from __future__ import annotations

import argparse
import filecmp
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parent
"""The buf module root: ``protos/``. Import paths in the protos are relative to it."""
REPO_ROOT = PROTO_ROOT.parent
OUT_DIR = REPO_ROOT / "arena" / "_gen"
"""Where the generated tree lives; importable as :data:`OUT_PACKAGE`."""
OUT_PACKAGE = "nardy.arena._gen"
"""The Python package of :data:`OUT_DIR` (``nardy/arena`` is a symlink to ``arena/``)."""

GENERATED_SUFFIXES = (".py", ".pyi")
"""Files under :data:`OUT_DIR` with these suffixes are owned by this script; others are kept."""
IGNORED_DIRS = frozenset({"__pycache__"})

_SERVICE_RE = re.compile(r"^\s*service\s+\w+", re.MULTILINE)


class GenerateError(RuntimeError):
    """The toolchain is missing or protoc failed."""


# -- discovery ------------------------------------------------------------------------------------


def proto_files() -> list[Path]:
    """All ``.proto`` files of the module, relative to :data:`PROTO_ROOT`, sorted."""
    return sorted(p.relative_to(PROTO_ROOT) for p in PROTO_ROOT.rglob("*.proto"))


def proto_packages(protos: Iterable[Path]) -> list[str]:
    """The dotted Python package of each proto directory, e.g. ``nardy.bot.v1``; sorted, unique."""
    return sorted({".".join(p.parent.parts) for p in protos})


def _plugin(name: str) -> Path:
    """Find a protoc plugin executable installed with the running interpreter (or on PATH)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise GenerateError(
            f"{name} not found; install mypy-protobuf (pip install -e '.[dev]' --config-settings editable_mode=strict)"
        )
    return Path(found)


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _well_known_include() -> Path:
    """The directory holding ``google/protobuf/*.proto`` shipped with grpcio-tools."""
    spec = importlib.util.find_spec("grpc_tools")
    if spec is None or not spec.submodule_search_locations:
        raise GenerateError(
            "grpcio-tools is not installed (pip install -e '.[dev]' --config-settings editable_mode=strict)"
        )
    return Path(next(iter(spec.submodule_search_locations))).resolve() / "_proto"


# -- generation -----------------------------------------------------------------------------------


def _protoc(args: Sequence[str]) -> None:
    cmd = [sys.executable, "-m", "grpc_tools.protoc", *args]
    result = subprocess.run(cmd, cwd=PROTO_ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise GenerateError(f"protoc failed ({result.returncode}):\n{result.stderr}{result.stdout}")


def _run_protoc(protos: Sequence[Path], out: Path) -> None:
    """Run protoc (and the mypy-protobuf plugins) on ``protos`` into ``out``."""
    includes = [f"-I{PROTO_ROOT}", f"-I{_well_known_include()}"]
    names = [p.as_posix() for p in protos]
    _protoc(
        [
            *includes,
            f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
            f"--python_out={out}",
            f"--mypy_out={out}",
            *names,
        ]
    )
    # gRPC stubs only for files with a service; protoc would emit empty modules for the others.
    with_services = [n for n, p in zip(names, protos, strict=True) if _declares_service(p)]
    if with_services:
        _protoc(
            [
                *includes,
                f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
                f"--grpc_python_out={out}",
                f"--mypy_grpc_out={out}",
                *with_services,
            ]
        )


def _declares_service(proto: Path) -> bool:
    return _SERVICE_RE.search((PROTO_ROOT / proto).read_text(encoding="utf-8")) is not None


def _import_rewriter(packages: Sequence[str]) -> re.Pattern[str]:
    """Match the proto packages where they name Python modules, not in descriptors or RPC paths.

    Matches ``nardy.bot.v1`` in ``from nardy.bot.v1 import bot_pb2``, in
    ``import nardy.bot.v1.bot_pb2`` and in the module name ``'nardy.bot.v1.bot_pb2'`` given to
    protobuf's builder. It does not match
    ``/nardy.bot.v1.BotService/ChoosePlay`` (gRPC method paths), ``.nardy.game.v1.Position``
    (descriptor type names) or prose in docstrings, because those are not followed by a ``*_pb2``
    module name or ``import``.
    """
    alternatives = "|".join(re.escape(p) for p in sorted(packages, key=len, reverse=True))
    return re.compile(rf"(?<![\w./])({alternatives})(?=\.\w+_pb2(?:_grpc)?\b| import )")


def _header(source: str | None) -> str:
    origin = f" from protos/{source}" if source else ""
    return (
        f"# Generated by protos/generate.py{origin}. DO NOT EDIT BY HAND.\n"
        "# Regenerate with `python protos/generate.py`; `--check` reports stale files.\n"
        f"# Toolchain: grpcio-tools {_version('grpcio-tools')}, "
        f"mypy-protobuf {_version('mypy-protobuf')}.\n"
    )


def _source_of(module: Path) -> str:
    """``nardy/bot/v1/bot_pb2_grpc.pyi`` -> ``nardy/bot/v1/bot.proto``."""
    stem = module.name.split("_pb2", 1)[0]
    return (module.parent / f"{stem}.proto").as_posix()


def _fix_file(path: Path, relative: Path, pattern: re.Pattern[str]) -> None:
    text = path.read_text(encoding="utf-8")
    text = pattern.sub(lambda m: f"{OUT_PACKAGE}.{m.group(1)}", text)
    leftover = re.search(r"^(?:from|import) nardy\.(?!arena\._gen\b)\S+", text, re.MULTILINE)
    if leftover:
        raise GenerateError(f"{relative}: import not rewritten: {leftover.group(0)!r}")
    path.write_text(_header(_source_of(relative)) + text, encoding="utf-8")


def _write_inits(out: Path, packages: Sequence[str]) -> None:
    """Write an ``__init__.py`` into every directory of the generated tree."""
    (out / "__init__.py").write_text(
        _header(None)
        + '"""Generated protobuf and gRPC modules of the nardy protocol (protos/).\n\n'
        "The tree mirrors the proto packages: ``nardy.bot.v1`` is\n"
        "``nardy.arena._gen.nardy.bot.v1``.\n"
        "Hand-written code imports these modules through :mod:`nardy.arena.protocol`.\n"
        '"""\n',
        encoding="utf-8",
    )
    directories: set[tuple[str, ...]] = set()
    for package in packages:
        parts = tuple(package.split("."))
        directories.update(parts[:n] for n in range(1, len(parts) + 1))
    for parts in sorted(directories):
        dotted = ".".join(parts)
        (out.joinpath(*parts) / "__init__.py").write_text(
            _header(None)
            + f'"""Generated code of the proto package ``{dotted}`` '
            + f'(protos/{"/".join(parts)}/)."""\n',
            encoding="utf-8",
        )


def generate(out: Path) -> list[Path]:
    """Generate the whole tree into the empty directory ``out``; return its files (relative)."""
    protos = proto_files()
    if not protos:
        raise GenerateError(f"no .proto files under {PROTO_ROOT}")
    packages = proto_packages(protos)
    _run_protoc(protos, out)
    pattern = _import_rewriter(packages)
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.suffix in GENERATED_SUFFIXES:
            _fix_file(path, path.relative_to(out), pattern)
    _write_inits(out, packages)
    return _owned_files(out)


# -- comparing and syncing ------------------------------------------------------------------------


def _owned_files(root: Path) -> list[Path]:
    """The files under ``root`` this script owns, relative to ``root``, sorted."""
    if not root.is_dir():
        return []
    return sorted(
        p.relative_to(root)
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix in GENERATED_SUFFIXES
        and not IGNORED_DIRS.intersection(p.relative_to(root).parts)
    )


def diff(fresh: Path, current: Path) -> list[tuple[Path, str]]:
    """Compare a fresh tree with the checked-in one; return ``(relative path, problem)`` pairs."""
    new = set(_owned_files(fresh))
    old = set(_owned_files(current))
    problems: list[tuple[Path, str]] = []
    for rel in sorted(new | old):
        if rel not in old:
            problems.append((rel, "missing"))
        elif rel not in new:
            problems.append((rel, "not generated any more"))
        elif not filecmp.cmp(fresh / rel, current / rel, shallow=False):
            problems.append((rel, "differs"))
    return problems


def sync(fresh: Path, current: Path) -> list[tuple[Path, str]]:
    """Make ``current`` equal to ``fresh`` (owned files only); return what changed."""
    changes = diff(fresh, current)
    for rel, problem in changes:
        target = current / rel
        if problem == "not generated any more":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(fresh / rel, target)
    # Remove directories left empty (or holding only caches) by deleted files.
    for directory in sorted((d for d in current.rglob("*") if d.is_dir()), reverse=True):
        if directory.name in IGNORED_DIRS or not directory.exists():
            continue
        if not any(c for c in directory.iterdir() if c.name not in IGNORED_DIRS):
            shutil.rmtree(directory)
    return changes


# -- command line ---------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 and list the stale files if arena/_gen/ is out of date",
    )
    args = parser.parse_args(argv)
    display = OUT_DIR.relative_to(REPO_ROOT).as_posix()
    with tempfile.TemporaryDirectory(prefix="nardy-protos-") as tmp:
        fresh = Path(tmp)
        try:
            generate(fresh)
        except GenerateError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.check:
            problems = diff(fresh, OUT_DIR)
            if not problems:
                print(f"{display}/ is up to date")
                return 0
            print(f"{display}/ is stale; run `python protos/generate.py`:", file=sys.stderr)
            for rel, problem in problems:
                print(f"  {display}/{rel.as_posix()}: {problem}", file=sys.stderr)
            return 1
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        changes = sync(fresh, OUT_DIR)
    for rel, problem in changes:
        verb = "removed" if problem == "not generated any more" else "wrote"
        print(f"{verb} {display}/{rel.as_posix()}")
    print(f"{display}/ regenerated ({len(changes)} file(s) changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
