"""Load a Python file that is not in an importable package, for the tests that exercise it.

``benchmarks/`` and ``examples/`` are folders of scripts, not packages, and a test of an older
module (a schema migration) reads its source from git into a temporary file: each is loaded by
path, one way, here.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(name: str, path: Path, *, register: bool = False) -> ModuleType:
    """Execute ``path`` as a module called ``name`` and return it.

    ``register`` also puts it in ``sys.modules`` first, as an import would: a module whose
    dataclasses or pickles look themselves up by module name needs it.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
