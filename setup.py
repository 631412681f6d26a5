"""The package layout, and the optional compiled build of the move generator.

All metadata lives in pyproject.toml. This file says where the import package ``nardy`` lives:

    nardy            ← nardy/       (the CLI, nardy.testing, …)
    nardy.core       ← core/
    nardy.variants   ← variants/
    nardy.arena      ← arena/

Every folder with an ``__init__.py`` below these four is a subpackage, found when the project is
built: a new module or subpackage needs no list to be kept. The folders are real folders (no
symlinks), so a checkout without symlinks builds the same package.

By default this is a plain pure-Python build. With ``NARDY_COMPILE=1`` in the environment,
``nardy.core.movegen`` (``core/movegen.py``) is also compiled with mypyc into a C extension that
shadows the .py module (which stays in the wheel):

    NARDY_COMPILE=1 python -m build --wheel

mypy (which provides mypyc) is then asked for as a build requirement; a C compiler is needed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_py import build_py

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
STAGE = ROOT / "build" / "mypyc-src"
# mypyc type-checks what the module imports (nardy.core imports pluggy), so that is needed too.
BUILD_REQUIRES = ["mypy>=1.10", "pluggy>=1.5,<2"]


def compiled_extensions() -> list[Any]:
    """mypyc's extension of nardy.core.movegen. mypyc names a module after its path, so it compiles
    a staged copy laid out as the import package (nardy/core/movegen.py and what it imports)."""
    from mypyc.build import mypycify

    shutil.rmtree(STAGE, ignore_errors=True)
    for package in ("nardy", "nardy.core"):
        shutil.copytree(
            ROOT / PACKAGE_DIRS[package],
            STAGE.joinpath(*package.split(".")),
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "testing", "cli.py"),
            dirs_exist_ok=True,
        )
    os.chdir(STAGE)  # mypycify takes paths relative to the working directory
    try:
        extensions: list[Any] = mypycify([COMPILED], opt_level="3")
    finally:
        os.chdir(ROOT)
    for extension in extensions:  # the generated C lies in the stage
        extension.sources = [str(STAGE / source) for source in extension.sources]
        extension.include_dirs = [str(STAGE / folder) for folder in extension.include_dirs]
    return extensions


def main() -> None:
    if os.environ.get("NARDY_COMPILE") != "1":
        setup(**LAYOUT)
        return
    try:
        import mypyc.build  # noqa: F401
    except ImportError:
        # The build front end first asks for the build requirements (an ``egg_info`` run, which
        # gets here without mypy and learns of it from setup_requires); a real build needs mypyc.
        if "egg_info" not in sys.argv[1:] and "dist_info" not in sys.argv[1:]:
            sys.exit("NARDY_COMPILE=1 needs mypy (for mypyc) installed in the build environment")
        setup(setup_requires=BUILD_REQUIRES, **LAYOUT)
        return
    setup(setup_requires=BUILD_REQUIRES, ext_modules=compiled_extensions(), **LAYOUT)


if __name__ == "__main__":
    main()
