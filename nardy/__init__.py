"""nardy: a framework for the backgammon family of race games.

The import package ``nardy`` is assembled from four folders of the repository (setup.py):
``nardy/`` itself, ``core/`` (``nardy.core``), ``variants/`` (``nardy.variants``) and ``arena/``
(``nardy.arena``). An installed wheel holds them as ``nardy/core`` and so on. In a source checkout
(running from the repository, or an editable install) the finder below maps the three subpackages
to their folders, so that new modules there are found at once, and nothing else: ``import
core.position`` from the repository root is an error, not a second copy of the module.

In IPython and Jupyter, a :class:`nardy.core.Position` shows as an SVG board (:mod:`nardy.svg`):
registered here, above the kernel, which knows nothing of drawing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from types import ModuleType
from typing import Any

__version__ = "0.2.0"

_FOLDERS = {"nardy.core": "core", "nardy.variants": "variants", "nardy.arena": "arena"}


class _SourceFolders(MetaPathFinder):
    """Finds ``nardy.core``, ``nardy.variants`` and ``nardy.arena`` in a source checkout."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in _FOLDERS:
            return None
        return PathFinder.find_spec(fullname, [self.root])


def _source_root() -> Path | None:
    """The repository holding this file (resolving an editable install's links), if any."""
    root = Path(__file__).resolve().parent.parent
    if (root / "setup.py").is_file() and all(
        (root / f / "__init__.py").is_file() for f in _FOLDERS.values()
    ):
        return root
    return None


_root = _source_root()
if _root is not None and not any(isinstance(f, _SourceFolders) for f in sys.meta_path):
    sys.meta_path.insert(0, _SourceFolders(_root))


def _position_svg(position: Any) -> str:
    """A position drawn without a variant (:func:`nardy.svg.board`), for IPython's display."""
    from nardy.svg import board

    return str(board(position))


def _show_positions_as_boards() -> None:
    """In a running IPython (Jupyter's kernel included), show every ``nardy.core.position.Position``
    as an SVG board. IPython finds the type by its name when it first shows one, so nothing is
    imported now; outside IPython this does nothing."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)()
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if formatters is None or "image/svg+xml" not in formatters:
        return
    formatters["image/svg+xml"].for_type_by_name("nardy.core.position", "Position", _position_svg)


_show_positions_as_boards()
