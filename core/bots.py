"""Deprecated alias of :mod:`nardy.bots`, kept for the 0.1 release only.

Bots moved out of the kernel into :mod:`nardy.bots` (the kernel knows no bot). Until the alias is
removed, ``from nardy.core.bots import Bot`` still works and warns (:class:`DeprecationWarning`);
write ``from nardy.bots import Bot``. The kernel itself never imports this module, and it imports
:mod:`nardy.bots` only when a name is asked of it (``tests/test_architecture.py`` allows exactly this
one upward reference).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    bots = None if name.startswith("__") else importlib.import_module("nardy.bots")
    if bots is None or name not in bots.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"nardy.core.bots is deprecated: import {name} from nardy.bots",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(bots, name)
