"""tests/data/rules_cases.yaml must hold exactly the ```yaml blocks of RULES.md §5, and the
repository's RULES.md must be the authority, ../shared/RULES.md, where that exists.

Regenerate with ``python tests/tools/extract_rules_cases.py``.
"""

from __future__ import annotations

import difflib

import pytest
import rules_cases

REGENERATE = "regenerate it with: python tests/tools/extract_rules_cases.py"


def test_data_file_matches_rules_md() -> None:
    if not rules_cases.RULES_PATH.parent.is_dir():
        pytest.skip(
            f"{rules_cases.RULES_PATH.parent} (../shared relative to the repository root) "
            "is missing; "
            "cannot check tests/data/rules_cases.yaml against RULES.md"
        )
    if not rules_cases.RULES_PATH.is_file():
        pytest.skip(
            f"{rules_cases.RULES_PATH} is missing; cannot check tests/data/rules_cases.yaml"
        )
    expected = rules_cases.blocks_from_rules()
    actual = rules_cases.blocks_from_data()
    if expected == actual:
        return

    exp_ids = [rules_cases.block_id(b) for b in expected]
    act_ids = [rules_cases.block_id(b) for b in actual]
    exp_by_id = dict(zip(exp_ids, expected, strict=True))
    act_by_id = dict(zip(act_ids, actual, strict=True))
    lines = [
        f"tests/data/rules_cases.yaml is out of date with {rules_cases.RULES_PATH}; {REGENERATE}"
    ]
    missing = [i for i in exp_ids if i not in act_by_id]
    extra = [i for i in act_ids if i not in exp_by_id]
    if missing:
        lines.append(f"  blocks only in RULES.md: {', '.join(missing)}")
    if extra:
        lines.append(f"  blocks only in the data file: {', '.join(extra)}")
    for block_id in exp_ids:
        if block_id in act_by_id and act_by_id[block_id] != exp_by_id[block_id]:
            lines.append(f"  block {block_id} differs:")
            diff = difflib.unified_diff(
                act_by_id[block_id].splitlines(),
                exp_by_id[block_id].splitlines(),
                "rules_cases.yaml",
                "RULES.md",
                lineterm="",
                n=0,
            )
            lines.extend(f"    {d}" for d in diff)
    common = [i for i in exp_ids if i in act_by_id]
    if [i for i in act_ids if i in exp_by_id] != common:
        lines.append("  the blocks are in a different order")
    pytest.fail("\n".join(lines), pytrace=False)


def test_data_file_is_rendered_canonically() -> None:
    """The data file round-trips through split/render (header and separators untouched)."""
    text = rules_cases.DATA_PATH.read_text(encoding="utf-8")
    assert rules_cases.render_data_file(rules_cases.split_data_file(text)) == text, REGENERATE


def test_repository_copy_is_the_authority() -> None:
    authority = rules_cases.AUTHORITY_PATH
    if not authority.is_file():
        pytest.skip(f"{authority} (the shared authority) is not here to compare with")
    assert rules_cases.RULES_PATH.read_text(encoding="utf-8") == authority.read_text(
        encoding="utf-8"
    ), f"RULES.md differs from {authority}: copy it (cp {authority} RULES.md)"
