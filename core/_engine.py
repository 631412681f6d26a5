"""Which move generator ``nardy.core.movegen`` is: the compiled extension or the Python source.

The default install compiles ``core/movegen.py`` with mypyc (setup.py); the extension shadows the
.py file beside it, which stays as the reference. ``nardy.core`` imports this module first, so the
choice is made before anything imports the generator:

* ``NARDY_MOVEGEN=pure`` in the environment loads the source (to test or compare the two);
* ``NARDY_MOVEGEN=compiled`` requires the extension (an ImportError without one, e.g. in CI);
* otherwise the extension when there is one built from the source beside it, else the source.

The extension carries the SHA-256 of the source it was compiled from; an extension older than the
source (an editable install whose ``core/movegen.py`` was edited since) is not used: the source is
loaded with a warning, until the project is installed again.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from types import ModuleType

from nardy.core.position import use_json_reader

MODULE = "nardy.core.movegen"
ENVIRONMENT = "NARDY_MOVEGEN"
DIGEST_NAME = "COMPILED_FROM_SHA256"
"""The constant setup.py appends to the compiled copy of the source."""

KIND = "pure"
"""``"compiled"`` or ``"pure"``: the generator loaded as :data:`MODULE`."""
DETAIL = ""
"""Why, in a few words (for ``nardy --version``)."""


def source_path() -> Path:
    """The Python source of the generator (``core/movegen.py``, or its copy in a wheel)."""
    return Path(__file__).with_name("movegen.py")


def extension_path() -> Path | None:
    """The compiled generator beside the source, if one is installed (loaded or not)."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = source_path().with_name("movegen" + suffix)
        if path.is_file():
            return path
    return None


def load_source(name: str = MODULE) -> ModuleType:
    """Executes the generator's Python source as module ``name`` (registered in sys.modules).

    With another name than :data:`MODULE` this gives the pure generator beside the loaded one, to
    compare the two (tests/core/test_compiled.py)."""
    spec = importlib.util.spec_from_file_location(name, source_path())
    if spec is None or spec.loader is None:  # pragma: no cover - the file ships with the package
        raise ImportError(f"cannot load {source_path()}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    if name == MODULE:  # what the import system does for a submodule: nardy.core.movegen
        setattr(sys.modules["nardy.core"], "movegen", module)  # noqa: B010
    return module


def is_compiled(module: ModuleType) -> bool:
    """True for an extension module (the compiled generator)."""
    origin = getattr(module, "__file__", None) or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def _select() -> tuple[str, str]:
    wanted = os.environ.get(ENVIRONMENT, "").strip().lower()
    if wanted not in ("", "pure", "compiled"):
        raise ImportError(f"{ENVIRONMENT} must be 'pure', 'compiled' or unset, not {wanted!r}")
    if wanted == "pure":
        load_source()
        return "pure", f"Python source; {ENVIRONMENT}=pure"
    module = importlib.import_module(MODULE)
    if not is_compiled(module):
        if wanted == "compiled":
            raise ImportError(
                f"{ENVIRONMENT}=compiled, but no compiled {MODULE} is installed (setup.py)"
            )
        return "pure", "Python source; no compiled extension installed"
    built_from = getattr(module, DIGEST_NAME, None)
    source = source_path()
    if source.is_file() and built_from != hashlib.sha256(source.read_bytes()).hexdigest():
        message = (
            f"the compiled {MODULE} ({module.__file__}) was built from another version of "
            f"{source}; using the Python source until nardy is installed again"
        )
        if wanted == "compiled":
            raise ImportError(message)
        warnings.warn(message, stacklevel=2)
        load_source()
        return "pure", "Python source; the compiled extension is out of date: reinstall nardy"
    return "compiled", f"mypyc, {Path(module.__file__ or '').name}"


KIND, DETAIL = _select()
# Position.from_json's fast path is the chosen generator's reader (core/position.py, which the
# generator imports, so it cannot import the generator itself).
use_json_reader(sys.modules[MODULE].position_from_json)
