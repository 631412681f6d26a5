"""The package layout, and the compiled build of the move generator.

All metadata lives in pyproject.toml. This file says where the import package ``nardy`` lives:

    nardy            ← nardy/       (the CLI, nardy.testing, …)
    nardy.core       ← core/
    nardy.variants   ← variants/
    nardy.arena      ← arena/

Every folder with an ``__init__.py`` below these four is a subpackage, found when the project is
built: a new module or subpackage needs no list to be kept. The folders are real folders (no
symlinks), so a checkout without symlinks builds the same package.

By default (``pip install .``, ``pip install -e . --config-settings editable_mode=strict``, ``python -m build``) ``nardy.core.movegen``
(``core/movegen.py``, the move generator) is also compiled with mypyc into a C extension that
shadows the .py module, which stays in the wheel as the reference (docs/performance.md). mypy
(which provides mypyc) is then asked for as a build requirement. ``NARDY_COMPILE`` chooses:

    (unset)          compile when a C compiler is found; otherwise, or when compiling fails, build
                     the pure-Python package and say so once (a warning in the build's output)
    NARDY_COMPILE=0  the pure-Python package (a ``py3-none-any`` wheel)
    NARDY_COMPILE=1  compile, and fail the build when that is not possible

An editable install builds the extension in place (``core/movegen.<platform tag>.so``, ignored by
git). The compiled module carries the SHA-256 of the source it was built from; when
``core/movegen.py`` changes afterwards, ``nardy.core`` loads the source instead (with a warning)
until the project is installed again. ``nardy --version`` says which generator is loaded, and
``NARDY_MOVEGEN=pure`` in the environment loads the source at run time (nardy.core._engine).

The compiled build also has a small hand-written C extension, ``nardy.core._batchgen``
(``core/_batchgen.c``): the generator's fast path, ordered search and pinning search for batches
(``nardy.core.batch``), optional like the mypyc one (without it, or with ``NARDY_MOVEGEN=pure``,
the batch API calls the generator per pair). It carries its source's SHA-256 too: after an edit of ``core/_batchgen.c`` the batch API
leaves it unused (with a warning) until the project is installed again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import BaseError as DistutilsError
from setuptools.errors import CCompilerError

ROOT = Path(__file__).resolve().parent
PACKAGE_DIRS = {
    "nardy": "nardy",
    "nardy.core": "core",
    "nardy.variants": "variants",
    "nardy.arena": "arena",
}
"""Import package → folder of the repository (subpackages follow their folders)."""


def find_packages() -> list[str]:
    """Every package under :data:`PACKAGE_DIRS`: each folder holding an ``__init__.py``."""
    found: list[str] = []
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("__init__.py")):
            parts = path.parent.relative_to(ROOT / folder).parts
            if "__pycache__" not in parts:
                found.append(".".join((package, *parts)))
    return found


class BuildPy(build_py):
    """Also ships RULES.md, the rules the kernel implements, as ``nardy/RULES.md``, and the
    protocol's .proto files (``protos/nardy``) as ``nardy/arena/protos`` (``nardy protos``)."""

    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "nardy"
        package.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "RULES.md", package / "RULES.md")
        protos = package / "arena" / "protos"
        shutil.rmtree(protos, ignore_errors=True)
        shutil.copytree(
            ROOT / "protos" / "nardy", protos, ignore=shutil.ignore_patterns("*.py", "__pycache__")
        )


LAYOUT: dict[str, Any] = {
    "packages": find_packages(),
    "package_dir": dict(PACKAGE_DIRS),
    "cmdclass": {"build_py": BuildPy},
}

COMPILED = "nardy/core/movegen.py"
SOURCE = ROOT / "core" / "movegen.py"
STAGE = ROOT / "build" / "mypyc-src"
BATCH_SOURCE = "core/_batchgen.c"
"""The batch API's C generator, ``nardy.core._batchgen`` (hand-written, no mypyc)."""
# mypyc type-checks what the module imports (nardy.core imports pluggy), so that is needed too.
BUILD_REQUIRES = ["mypy>=1.10", "pluggy>=1.5,<2"]
DIGEST_NAME = "COMPILED_FROM_SHA256"
"""The constant appended to the compiled copy: the SHA-256 of core/movegen.py (nardy.core._engine
compares it with the source beside the extension)."""


def warn(message: str) -> None:
    """Say it once, where pip (with -v) and ``python -m build`` show the build's output: in the
    build itself, not in the front end's earlier metadata runs of this file."""
    if {"egg_info", "dist_info"} & set(sys.argv[1:]):
        return
    print(f"\nWARNING (nardy): {message}\n", file=sys.stderr, flush=True)


def compile_mode() -> str:
    """``"0"`` (pure), ``"1"`` (compile or fail) or ``"auto"`` (compile if possible)."""
    mode = os.environ.get("NARDY_COMPILE", "").strip()
    if mode in ("", "auto"):
        return "auto"
    if mode not in ("0", "1"):
        sys.exit(f"NARDY_COMPILE must be 0, 1 or unset (auto), not {mode!r}")
    return mode


def c_compiler() -> str | None:
    """The C compiler this Python builds extensions with, if it is on PATH."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    name = command.split()[0] if command.split() else "cc"
    return shutil.which(name)


def compiled_extensions() -> list[Any]:
    """mypyc's extension of nardy.core.movegen. mypyc names a module after its path, so it compiles
    a staged copy laid out as the import package (nardy/core/movegen.py and what it imports), with
    the source's digest appended."""
    from mypyc.build import mypycify

    shutil.rmtree(STAGE, ignore_errors=True)
    for package in ("nardy", "nardy.core"):
        shutil.copytree(
            ROOT / PACKAGE_DIRS[package],
            STAGE.joinpath(*package.split(".")),
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "testing", "cli.py"),
            dirs_exist_ok=True,
        )
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    staged = STAGE / COMPILED
    staged.write_bytes(source + f'\n{DIGEST_NAME} = "{digest}"\n'.encode())
    os.chdir(STAGE)  # mypycify takes paths relative to the working directory
    try:
        extensions: list[Any] = mypycify([COMPILED], opt_level="3")
    finally:
        os.chdir(ROOT)
    for extension in extensions:  # the generated C lies in the stage
        extension.sources = [str(STAGE / source) for source in extension.sources]
        extension.include_dirs = [str(STAGE / folder) for folder in extension.include_dirs]
    # Last: a failure stops the extensions after it (OptionalBuildExt), and this one is optional.
    # It carries its source's digest too (nardy.core.batch skips a stale one).
    batch_digest = hashlib.sha256((ROOT / BATCH_SOURCE).read_bytes()).hexdigest()
    extensions.append(
        Extension(
            "nardy.core._batchgen",
            [BATCH_SOURCE],
            define_macros=[("COMPILED_FROM_SHA256", f'"{batch_digest}"')],
        )
    )
    return extensions


class OptionalBuildExt(build_ext):
    """Builds the compiled generator; in the default (auto) mode a failure leaves the pure one."""

    def run(self) -> None:
        try:
            super().run()
        except (CCompilerError, DistutilsError, OSError) as error:
            if compile_mode() == "1":
                raise
            if not self.failed:  # e.g. copying an extension that was not built into the source
                warn(f"compiling the move generator failed ({error}); installing the pure one")

    failed = False
    """Whether an extension failed: the others (mypyc's shim and library) are then not tried."""

    def build_extension(self, ext: Any) -> None:
        if self.failed:
            return
        try:
            super().build_extension(ext)
        except (CCompilerError, DistutilsError, OSError) as error:
            if compile_mode() == "1":
                raise
            self.failed = True
            warn(f"compiling {ext.name} failed ({error}); installing the pure-Python one")


class BdistWheel(bdist_wheel):
    """An editable wheel holds no extension (it is built in place, in core/), so it keeps the pure
    tag: its link tree stays ``build/__editable__.nardy-<version>-py3-none-any`` (pyproject.toml's
    mypy_path)."""

    def get_tag(self) -> tuple[str, str, str]:
        if "editable_wheel" in self.distribution.commands:
            return ("py3", "none", "any")
        tag: tuple[str, str, str] = super().get_tag()
        return tag


def main() -> None:
    mode = compile_mode()
    if mode == "0":
        setup(**LAYOUT)
        return
    if mode == "auto" and c_compiler() is None:
        warn(
            "no C compiler found: installing the pure-Python move generator "
            "(`nardy --version` says which one is loaded; NARDY_COMPILE=0 silences this)"
        )
        setup(**LAYOUT)
        return
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        # The build front end first asks for the build requirements (an ``egg_info`` run, which
        # gets here without mypy and learns of it from setup_requires); a real build needs mypyc.
        if "egg_info" not in sys.argv[1:] and "dist_info" not in sys.argv[1:]:
            if mode == "1":
                sys.exit(
                    "NARDY_COMPILE=1 needs mypy (for mypyc) installed in the build environment"
                )
            warn("mypy (mypyc) is not installed in the build environment: pure-Python generator")
            setup(**LAYOUT)
            return
        setup(setup_requires=BUILD_REQUIRES, **LAYOUT)
        return
    try:
        extensions = compiled_extensions()
    except (Exception, SystemExit) as error:  # mypyc reports type errors by exiting
        if mode == "1":
            raise
        warn(f"mypyc could not compile the move generator ({error}): pure-Python generator")
        setup(**LAYOUT)
        return
    cmdclass = {**LAYOUT["cmdclass"], "build_ext": OptionalBuildExt, "bdist_wheel": BdistWheel}
    setup(
        setup_requires=BUILD_REQUIRES,
        ext_modules=extensions,
        **{**LAYOUT, "cmdclass": cmdclass},
    )


if __name__ == "__main__":
    main()
