"""The package layout (setup.py): nardy.core ← core/, nardy.variants ← variants/, nardy.arena ←
arena/, with every package found and one import path per module. (.ci/layout.sh also installs a
checkout made without symlinks and type-checks a plugin package against the editable install.)"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import nardy.core.position

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_no_symlinks_in_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    links = [line.split("\t")[1] for line in tracked.splitlines() if line.startswith("120000")]
    assert links == []


def test_one_import_path_per_module() -> None:
    assert Path(nardy.core.position.__file__).resolve() == ROOT / "core" / "position.py"
    done = _python("import core.position")
    assert done.returncode == 1
    assert (
        "'core' is the folder of the package nardy.core: import nardy.core instead" in done.stderr
    )
    for folder in ("variants", "arena"):
        done = _python(f"import {folder}")
        assert f"import nardy.{folder} instead" in done.stderr, done.stderr


def test_setup_finds_every_package() -> None:
    setup = runpy.run_path(str(ROOT / "setup.py"), run_name="not_main_no_setup")
    packages = set(setup["find_packages"]())
    expected = set()
    for package, folder in setup["PACKAGE_DIRS"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            expected.add(".".join((package, *init.parent.relative_to(ROOT / folder).parts)))
    assert packages == expected
    assert {"nardy.testing", "nardy.core", "nardy.arena._gen.nardy.game.v1"} <= packages
    assert os.path.isdir(ROOT / "core") and not (ROOT / "nardy" / "core").exists()
