"""The machine-readable cases of RULES.md §5 (kinds ``plays`` and ``score``) against the kernel.

Cases are read from tests/data/rules_cases.yaml (a verbatim copy of the §5 blocks, see
tests/core/test_rules_drift.py). Kinds ``turn`` and ``procedure`` are tested elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import rules_cases as rc

# =============================================================================================
# KERNEL ADAPTERS — the only code in this file that touches the kernel API.
# If the kernel's API differs, fix it here and nowhere else.
# =============================================================================================


def load(variant_name: str, options: Mapping[str, Any]) -> Any:
    """ADAPTER: a compiled variant."""
    from nardy.core import load_variant

    return load_variant(variant_name, dict(options))


def legal_results(
    variant_name: str,
    options: Mapping[str, Any],
    position_json: rc.PositionJson,
    dice: Sequence[int],
) -> list[dict[str, Any]]:
    """ADAPTER: the result positions (JSON, mover's view, not flipped) of every legal play.

    A kernel that answers "no legal play" with an empty list is normalised to the empty play
    (the unchanged position), which is how §5 writes ``plays: []``.
    """
    from nardy.core.position import Position

    variant = load(variant_name, options)
    position = Position.from_json(position_json)
    plays = variant.legal_plays(position, tuple(dice))
    results: list[dict[str, Any]] = [play.result.to_json() for play in plays]
    return results or [position.to_json()]


def score_case(
    variant_name: str,
    loser_json_own_view: rc.PositionJson,
    cube_value: int,
    cube_owner: str,
    options: Mapping[str, Any],
) -> int:
    """ADAPTER: what the winner scores when the game ends in this position.

    ``loser_json_own_view``: position JSON seen by the LOSER (index 0 of bar/off = loser); the
    winner has borne off all 15. ``cube_owner``: ``centre`` | ``loser`` | ``winner``.

    """
    from nardy.core.position import Position

    variant = load(variant_name, options)
    loser = Position.from_json(loser_json_own_view)
    return int(
        variant.game_points(
            variant.loser_side(loser, 0), cube_value, cube_centred=cube_owner == "centre"
        )
    )


def game_value(
    variant_name: str, options: Mapping[str, Any], result_json: Mapping[str, Any]
) -> int:
    """ADAPTER: points the mover wins with a game-ending play (cube 1, centred, no Jacoby)."""
    from nardy.core.position import Position

    variant = load(variant_name, options)
    result = Position.from_json(dict(result_json))
    return int(variant.game_value(variant.loser_side(result, 1)))


def play_score(
    variant_name: str, options: Mapping[str, Any], result_json: Mapping[str, Any]
) -> int | None:
    """ADAPTER: points the mover wins because his play ended the game (bear-off or, in plakoto,
    the mother rule; cube 1), 0 for a draw, None while the game goes on."""
    from nardy.core.position import Position

    variant = load(variant_name, options)
    outcome = variant.outcome(Position.from_json(dict(result_json)))
    if outcome is None:
        return None
    assert outcome.outcome != "loss", "a player's own play cannot lose the game"
    return int(outcome.value)


# =============================================================================================


#: Kinds this module tests.
HANDLED_KINDS = (rc.KIND_PLAYS, rc.KIND_SCORE)
#: Kinds tested by other modules (turn sequences, scripted procedures).
OTHER_KINDS = (rc.KIND_TURN, rc.KIND_PROCEDURE)
#: The §5 cases left to those other modules, by kind.
OTHER_KIND_CASE_IDS: dict[str, tuple[str, ...]] = {
    kind: tuple(case["id"] for case in rc.cases_of_kind(kind)) for kind in OTHER_KINDS
}

PLAYS_CASES = [pytest.param(case, id=case["id"]) for case in rc.cases_of_kind(rc.KIND_PLAYS)]
SCORE_CASES = [pytest.param(case, id=case["id"]) for case in rc.cases_of_kind(rc.KIND_SCORE)]


def test_every_case_kind_is_known() -> None:
    unknown = [
        f"{case['id']}: {case['kind']!r}"
        for case in rc.load_cases()
        if case["kind"] not in HANDLED_KINDS + OTHER_KINDS
    ]
    assert not unknown, f"RULES.md §5 cases of an unknown kind (add a test for them): {unknown}"


def test_cases_are_well_formed() -> None:
    """Every side of every plays/turn/score case is valid and totals 15 (RULES.md §5.0)."""
    for case in rc.load_cases():
        if case["kind"] in (rc.KIND_PLAYS, rc.KIND_TURN):
            rc.case_position(case)
        if case["kind"] == rc.KIND_PLAYS:
            rc.dice_of(case)
            keys = [rc.position_key(j) for j in rc.expected_results(case)]
            assert len(set(keys)) == len(keys), f"{case['id']}: duplicate expected results"
            if "score" in case:
                assert all(k[2][0] == rc.CHECKERS for k in keys), (
                    f"{case['id']}: score without game end"
                )
            for play in case["plays"]:
                score = play.get("score")
                assert score is None or (isinstance(score, int) and score >= 0), case["id"]
        if case["kind"] == rc.KIND_SCORE:
            rc.score_cases(case)
    # The counts are a guard against a silently truncated data file.
    assert len(PLAYS_CASES) > 0 and len(SCORE_CASES) > 0


def _steps_of(case: Mapping[str, Any], key: rc.PositionKey) -> str:
    for i, play in enumerate(case["plays"]):
        if rc.position_key(rc.play_result_json(case, i)) == key:
            return str(play.get("steps", "?"))
    return "(empty play)"


@pytest.mark.parametrize("case", PLAYS_CASES)
def test_plays(case: dict[str, Any]) -> None:
    start = rc.case_position(case)
    dice = rc.dice_of(case)
    expected = {rc.position_key(j) for j in rc.expected_results(case)}
    results = legal_results(case["variant"], case["options"], start, dice)
    actual_list = [rc.position_key(j) for j in results]
    actual = set(actual_list)

    if actual != expected:
        lines = [
            f"{case['id']} ({case['variant']}, options {case['options']}, dice {list(dice)}): "
            f"legal results differ (expected {len(expected)}, got {len(actual)})",
            f"  start:      {rc.describe(start)}",
        ]
        lines += [
            f"  missing:    {rc.describe(k)}   [{_steps_of(case, k)}]"
            for k in sorted(expected - actual)
        ]
        lines += [f"  unexpected: {rc.describe(k)}" for k in sorted(actual - expected)]
        pytest.fail("\n".join(lines), pytrace=False)

    duplicates = len(actual_list) - len(actual)
    assert duplicates == 0, (
        f"{case['id']}: {duplicates} duplicate result(s) (§2.3 item 7 deduplicates)"
    )

    by_key = {rc.position_key(j): j for j in results}
    for i, play in enumerate(case["plays"]):
        # §3.12: a result's own ``score`` is what the mover wins because that play ends the game
        # (the mother rule); a result without one lets the game go on (unless all are borne off).
        expected_json = rc.play_result_json(case, i)
        got = play_score(case["variant"], case["options"], by_key[rc.position_key(expected_json)])
        if "score" in play:
            assert got == play["score"], f"{case['id']} play {i}: scores {got}, not {play['score']}"
        elif "score" not in case and expected_json["off"][0] != rc.CHECKERS:
            assert got is None, f"{case['id']} play {i}: the game must go on, not score {got}"

    if "score" in case:
        for result in results:
            assert result["off"][0] == rc.CHECKERS, f"{case['id']}: the play must end the game"
            value = game_value(case["variant"], case["options"], result)
            assert value == case["score"], (
                f"{case['id']}: game value {value}, expected {case['score']}"
                f" for {rc.describe(result)}"
            )


@pytest.mark.parametrize("case", SCORE_CASES)
def test_score(case: dict[str, Any]) -> None:
    failures: list[str] = []
    for sc in rc.score_cases(case):
        try:
            got = score_case(sc.variant, sc.loser_json, sc.cube, sc.cube_owner, sc.options)
        except Exception as exc:  # report every sub-case, not just the first
            failures.append(f"{sc.label}: {type(exc).__name__}: {exc}")
            continue
        if got != sc.points:
            failures.append(
                f"{sc.label}: expected {sc.points}, got {got} "
                f"(loser {dict(sc.loser)}, cube {sc.cube} {sc.cube_owner}, options {sc.options})"
            )
    assert not failures, "\n".join(failures)
