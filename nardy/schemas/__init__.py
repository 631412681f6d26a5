"""JSON Schemas (draft 2020-12) of nardy's JSON outputs, shipped with the package.

``play`` (``nardy play --json``), ``variants`` (``nardy variants --json``), ``check-variant``
(``nardy check-variant --json``) and ``plays-answer`` (each line of ``nardy plays --jsonl``), and ``tournament``, the tournament TOML of
``nardy arena run FILE``. The arena's: ``arena-standings`` (``nardy arena standings --json``
and ``nardy arena run --json``), ``arena-tournaments`` (``nardy arena standings --list --json``
and the viewer's ``/api/tournaments``) and ``arena-verify`` (``nardy arena verify --json``). The Play page's: ``play-state`` (``GET
/api/play/{id}``) and ``play-new`` (the body of ``POST /api/play``), docs/play.md.
Editors and scripts can validate against them; the tests validate real outputs.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

NAMES = (
    "play",
    "variants",
    "check-variant",
    "plays-answer",
    "tournament",
    "arena-standings",
    "arena-tournaments",
    "arena-verify",
    "play-state",
    "play-new",
)


def schema(name: str) -> dict[str, Any]:
    """The schema ``name`` (one of :data:`NAMES`) as a dict."""
    if name not in NAMES:
        raise ValueError(f"no schema {name!r}; schemas: {', '.join(NAMES)}")
    text = (resources.files(__name__) / f"{name}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded
