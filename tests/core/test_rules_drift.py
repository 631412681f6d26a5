"""tests/data/rules_cases.yaml must hold exactly the ```yaml blocks of RULES.md §5, and the
repository's RULES.md must equal the authority named by NARDY_RULES_AUTHORITY, where that is set.

Regenerate with ``python tests/tools/extract_rules_cases.py``.
"""

from __future__ import annotations

import difflib
import re

import pytest
import rules_cases

REGENERATE = "regenerate it with: python tests/tools/extract_rules_cases.py"


def test_data_file_matches_rules_md() -> None:
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


NO_AUTHORITY = (
    f"no authority to compare RULES.md with: set {rules_cases.AUTHORITY_ENV}=PATH (.ci/run does "
    "where the project keeps a shared copy)"
)


def test_repository_copy_is_the_authority() -> None:
    authority = rules_cases.authority_path()
    if authority is None:
        pytest.skip(NO_AUTHORITY)
    assert authority.is_file(), f"{rules_cases.AUTHORITY_ENV} names {authority}, which is no file"
    assert rules_cases.RULES_PATH.read_text(encoding="utf-8") == authority.read_text(
        encoding="utf-8"
    ), f"RULES.md differs from {authority}: copy it (cp {authority} RULES.md)"


def test_no_skip_names_a_path_outside_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the variable, the comparison skips with a reason that names no place outside the
    repository (a fresh clone has no such place); with it, the comparison runs."""
    monkeypatch.delenv(rules_cases.AUTHORITY_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        test_repository_copy_is_the_authority()
    reason = str(skipped.value)
    outside = str(rules_cases.REPO_ROOT.parent)
    assert not re.search(r"(^|[\s(=])(/|\.\./)", reason) and outside not in reason, reason
    monkeypatch.setenv(rules_cases.AUTHORITY_ENV, str(rules_cases.RULES_PATH))
    test_repository_copy_is_the_authority()
    monkeypatch.setenv(rules_cases.AUTHORITY_ENV, str(rules_cases.REPO_ROOT / "no-such-rules.md"))
    with pytest.raises(AssertionError, match="which is no file"):
        test_repository_copy_is_the_authority()
