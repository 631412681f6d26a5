"""Facts the docs state about the code, checked against the code: the variant table of the README,
the action spaces of docs/learning.md, and the editable install commands."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
}  # fmt: skip


def _builtin_variants() -> list[str]:
    """The variants nardy itself registers (third-party plugins switched off)."""
    done = subprocess.run(
        [sys.executable, "-c", "from nardy.core import variant_names; print(*variant_names())"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NARDY_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    return done.stdout.split()


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_readme_table_lists_every_builtin_variant() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## Variants\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    assert sorted(listed) == sorted(_builtin_variants())


def test_no_doc_states_a_wrong_number_of_variants() -> None:
    count = len(_builtin_variants())
    wrong = []
    pattern = re.compile(r"\b(\w+) (?:built-in |rule )?variants\b", re.I)
    for path in _docs():
        for number in pattern.findall(path.read_text()):
            if number.lower() in NUMBERS and NUMBERS[number.lower()] != count:
                wrong.append(f"{path.relative_to(ROOT)}: {number} variants (built in: {count})")
    assert wrong == []


def test_learning_md_gives_every_builtin_variants_action_space() -> None:
    pytest.importorskip("numpy", reason="the rl extra is not installed")
    from nardy.core import load_variant
    from nardy.env.spaces import BUILTIN_SIZE, action_space_size

    text = " ".join((ROOT / "docs" / "learning.md").read_text().split())
    assert f"**{BUILTIN_SIZE:,} actions for every measured variant**" in text
    for name in _builtin_variants():
        if load_variant(name).is_match_variant:  # tavli: no environment (refused, documented)
            assert f"`{name}`" in text and "MatchVariantError" in text, name
            continue
        size = action_space_size(load_variant(name))
        if size != BUILTIN_SIZE:
            assert f"`{name}`" in text and f"**{size:,} actions**" in text, name


EDITABLE = re.compile(r"pip install\b[^\n`]*?\s-e\s+['\"]?\.(?!\.)[^\n`]*")


def test_editable_installs_keep_the_strict_mode() -> None:
    """A plain ``pip install -e .[extra]`` after the README's install replaces its strict editable
    install, after which mypy (here and in a plugin's package) no longer finds nardy.core."""
    files = [
        *_docs(),
        *sorted((ROOT / "examples").rglob("*.md")),
        *(
            p
            for folder in ("examples", "benchmarks", "protos", "nardy", ".ci")
            for p in sorted((ROOT / folder).rglob("*.py"))
        ),
        ROOT / "setup.py",
        ROOT / ".ci" / "run",
        *sorted((ROOT / ".ci").glob("*.sh")),
    ]
    loose = [
        f"{path.relative_to(ROOT)}: {command.strip()}"
        for path in files
        if "node_modules" not in path.parts
        for command in EDITABLE.findall(path.read_text())
        if "editable_mode=strict" not in command
    ]
    assert loose == []


def test_the_editable_check_finds_a_loose_install() -> None:
    text = "    pip install -e '.[rl]'   # numpy\nthe next `pip install -e …` rebuilds"
    assert [c.strip() for c in EDITABLE.findall(text)] == ["pip install -e '.[rl]'   # numpy"]
