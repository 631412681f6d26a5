"""Helpers for the machine-readable test cases of RULES.md §5.

The cases live in ``tests/data/rules_cases.yaml``: one YAML document per fenced ```yaml block
of the repository's ``RULES.md`` §5, each block's text kept byte for byte (regenerate the file with
``python tests/tools/extract_rules_cases.py``; ``tests/core/test_rules_drift.py`` checks it).

This module has no dependency on the kernel. It

* extracts the blocks from RULES.md and renders / splits the data file;
* loads the cases (``load_cases``), applying the §5.0 defaults (``kind: plays``, ``options: {}``);
* converts side specs ``{points: {p: n}, bar: n, borne_off: n}`` into the kernel's position JSON
  ``{"points": [24 signed ints], "bar": [mover, opp], "off": [mover, opp]}`` (mover's view) and
  checks that each side totals 15 (``BadCaseError`` otherwise);
* converts the expected results of a ``plays`` case and the loser sides of a ``score`` case.

The tests import it as ``import rules_cases`` (``tests/`` is put on ``sys.path`` by
``tests/conftest.py``; pytest's default ``prepend`` import mode does the same).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
DATA_PATH = TESTS_DIR / "data" / "rules_cases.yaml"
RULES_PATH = REPO_ROOT / "RULES.md"
"""The repository's copy of the rules (tests/core/test_rules_drift.py checks it against the authority
named by :data:`AUTHORITY_ENV`, where that is set)."""
AUTHORITY_ENV = "NARDY_RULES_AUTHORITY"
"""An environment variable naming the authoritative RULES.md this copy must equal (a project's
shared copy outside the repository; .ci/run sets it where one exists)."""


def authority_path() -> Path | None:
    """The authoritative RULES.md named by :data:`AUTHORITY_ENV`, or ``None`` when it is unset."""
    value = os.environ.get(AUTHORITY_ENV, "").strip()
    return Path(value) if value else None


CHECKERS = 15
NUM_POINTS = 24

#: Case kinds of RULES.md §5.0.
KIND_PLAYS = "plays"
KIND_SCORE = "score"
KIND_TURN = "turn"
KIND_PROCEDURE = "procedure"
KNOWN_KINDS = frozenset({KIND_PLAYS, KIND_SCORE, KIND_TURN, KIND_PROCEDURE})

Geometry = Literal["opposite", "same"]

#: RULES.md §1.2: backgammon and trictrac run in opposite directions, all others the same way.
GEOMETRY: dict[str, Geometry] = {
    "backgammon": "opposite",
    "trictrac": "opposite",
    "long": "same",
    "nardgammon": "same",
    "mad": "same",
    "gulbar": "same",
    "mad_gulbar": "same",
    "khachapuri": "same",
    "fevga": "same",
    "giul": "same",
    "portes": "opposite",
    "plakoto": "opposite",
    "tavli": "opposite",
}

PositionJson = dict[str, list[int]]
#: Hashable form of a position JSON: (points, bar, off, pinned points).
PositionKey = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]

_DATA_HEADER = (
    "# GENERATED from ../shared/RULES.md section 5 by tests/tools/extract_rules_cases.py;\n"
    "# do not edit by hand.\n"
    "# One YAML document per fenced yaml block of RULES.md section 5, each block's text verbatim,\n"
    "# in the order of RULES.md. tests/core/test_rules_drift.py checks that the two agree.\n"
)
_DOC_SEPARATOR = "---\n"


class BadCaseError(ValueError):
    """A test case of RULES.md §5 is malformed (wrong totals, bad keys, ...)."""


# --------------------------------------------------------------------------------------------
# Extraction from RULES.md and the data file
# --------------------------------------------------------------------------------------------

_SECTION5_RE = re.compile(r"^## 5\.", re.MULTILINE)
_SECTION3_RE = re.compile(r"^## 3\.", re.MULTILINE)
_SECTION_RE = re.compile(r"^## ", re.MULTILINE)


def _section(rules_text: str, start_re: re.Pattern[str], name: str) -> str:
    start = start_re.search(rules_text)
    if start is None:
        raise BadCaseError(f"RULES.md has no '## {name}.' section")
    end = _SECTION_RE.search(rules_text, start.end())
    return rules_text[start.start() : end.start() if end else len(rules_text)]


def extract_blocks(rules_text: str) -> list[str]:
    """The text of every fenced ```yaml block of §3 and §5 of RULES.md, in order, verbatim
    (§5 holds the tests of the seeds' variants; §3.12 those of the Tavli family, written inside
    their variant's section).

    A block's text is every line between the ```yaml line and the closing ``` line, each
    with its newline.
    """
    section = _section(rules_text, _SECTION3_RE, "3") + _section(rules_text, _SECTION5_RE, "5")
    blocks: list[str] = []
    current: list[str] | None = None
    for line in section.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if current is None:
            if bare == "```yaml":
                current = []
        elif bare == "```":
            blocks.append("".join(current))
            current = None
        else:
            current.append(line)
    if current is not None:
        raise BadCaseError("unterminated ```yaml block in RULES.md §5")
    for text in blocks:
        for line in text.splitlines():
            if line.startswith(("---", "...")):
                raise BadCaseError(
                    f"a §5 block contains a YAML document marker line {line!r}; "
                    "the data file format (one document per block) cannot hold it"
                )
    return blocks


def render_data_file(blocks: Iterable[str]) -> str:
    """The content of ``tests/data/rules_cases.yaml`` for the given blocks."""
    parts = [_DATA_HEADER]
    for text in blocks:
        if not text.endswith("\n"):
            text += "\n"
        parts.append(_DOC_SEPARATOR)
        parts.append(text)
    return "".join(parts)


def split_data_file(text: str) -> list[str]:
    """Inverse of ``render_data_file``: the block texts stored in the data file."""
    chunks = re.split(r"^---\n", text, flags=re.MULTILINE)
    # chunks[0] is the header comment.
    return chunks[1:]


def blocks_from_rules(path: Path = RULES_PATH) -> list[str]:
    return extract_blocks(path.read_text(encoding="utf-8"))


def blocks_from_data(path: Path = DATA_PATH) -> list[str]:
    return split_data_file(path.read_text(encoding="utf-8"))


def block_id(text: str) -> str:
    """The ``id`` of a block (for messages); falls back to its first line."""
    try:
        obj = yaml.safe_load(text)
    except yaml.YAMLError:
        obj = None
    if isinstance(obj, Mapping) and "id" in obj:
        return str(obj["id"])
    return text.splitlines()[0] if text else "<empty block>"


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def parse_block(text: str) -> dict[str, Any]:
    try:
        obj = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadCaseError(f"unparsable §5 block starting {text[:60]!r}: {exc}") from exc
    if not isinstance(obj, dict):
        raise BadCaseError(f"§5 block starting {text[:60]!r} is not a mapping")
    for key in ("id", "variant"):
        if key not in obj:
            raise BadCaseError(f"§5 block starting {text[:60]!r} has no {key!r}")
    case: dict[str, Any] = dict(obj)
    case.setdefault("kind", KIND_PLAYS)
    if case.get("options") is None:
        case["options"] = {}
    if not isinstance(case["options"], dict):
        raise BadCaseError(f"{case['id']}: options must be a mapping")
    return case


@functools.cache
def _load_cases_cached(path: Path) -> tuple[dict[str, Any], ...]:
    cases = tuple(parse_block(text) for text in blocks_from_data(path))
    seen: set[str] = set()
    for case in cases:
        if case["id"] in seen:
            raise BadCaseError(f"duplicate case id {case['id']}")
        seen.add(case["id"])
    return cases


def load_cases(path: Path = DATA_PATH) -> tuple[dict[str, Any], ...]:
    """All §5 cases, in RULES.md order, with ``kind`` and ``options`` defaulted.

    The dicts are shared between callers: do not mutate them.
    """
    return _load_cases_cached(path.resolve())


def cases_of_kind(kind: str, path: Path = DATA_PATH) -> list[dict[str, Any]]:
    return [case for case in load_cases(path) if case["kind"] == kind]


# --------------------------------------------------------------------------------------------
# Sides and positions
# --------------------------------------------------------------------------------------------

_SIDE_KEYS = frozenset({"points", "bar", "borne_off", "pinned"})
# Keys a play result may carry besides the mover's side.
_RESULT_EXTRA_KEYS = frozenset({"steps", "opponent", "note", "score"})


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadCaseError(f"{what}: expected a non-negative integer, got {value!r}")
    return value


def side_points(spec: Mapping[str, Any], what: str) -> dict[int, int]:
    """The ``points`` of a side spec as {point: count}, validated (points 1…24, counts ≥ 1)."""
    raw = spec.get("points") or {}
    if not isinstance(raw, Mapping):
        raise BadCaseError(f"{what}: points must be a mapping")
    out: dict[int, int] = {}
    for point, count in raw.items():
        if isinstance(point, bool) or not isinstance(point, int) or not 1 <= point <= NUM_POINTS:
            raise BadCaseError(f"{what}: bad point {point!r}")
        if _count(count, f"{what} point {point}") == 0:
            raise BadCaseError(f"{what}: point {point} listed with 0 checkers")
        out[point] = count
    return out


def side_pinned(spec: Mapping[str, Any], what: str) -> list[int]:
    """The ``pinned`` points of a side spec (§3.12: "the points, in the mover's coordinates, where
    that side has one pinned checker, which is not counted in its ``points``")."""
    raw = spec.get("pinned") or []
    if not isinstance(raw, list) or not all(
        isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= NUM_POINTS for p in raw
    ):
        raise BadCaseError(f"{what}: pinned must be a list of points 1…24, got {raw!r}")
    if len(set(raw)) != len(raw):
        raise BadCaseError(f"{what}: a point is pinned twice: {raw}")
    return sorted(raw)


def check_side(
    spec: Mapping[str, Any], what: str, *, extra_keys: frozenset[str] = frozenset()
) -> None:
    """Raise ``BadCaseError`` unless ``spec`` is a valid side totalling 15 checkers."""
    if not isinstance(spec, Mapping):
        raise BadCaseError(f"{what}: side must be a mapping, got {spec!r}")
    unknown = set(spec) - _SIDE_KEYS - extra_keys
    if unknown:
        raise BadCaseError(f"{what}: unknown keys {sorted(map(str, unknown))}")
    total = (
        sum(side_points(spec, what).values())
        + _count(spec.get("bar", 0), f"{what} bar")
        + _count(spec.get("borne_off", 0), f"{what} borne_off")
        + len(side_pinned(spec, what))
    )
    if total != CHECKERS:
        raise BadCaseError(f"{what}: side totals {total} checkers, not {CHECKERS}: {dict(spec)}")


def position_json(
    mover: Mapping[str, Any],
    opponent: Mapping[str, Any],
    what: str = "position",
    *,
    mover_extra_keys: frozenset[str] = frozenset(),
) -> PositionJson:
    """Position JSON (mover's view) from two side specs, both in the MOVER's coordinates."""
    check_side(mover, f"{what}: mover", extra_keys=mover_extra_keys)
    check_side(opponent, f"{what}: opponent")
    points = [0] * NUM_POINTS
    for point, count in side_points(mover, f"{what}: mover").items():
        points[point - 1] = count
    for point, count in side_points(opponent, f"{what}: opponent").items():
        if points[point - 1]:
            raise BadCaseError(f"{what}: point {point} holds checkers of both sides")
        points[point - 1] = -count
    pinned: list[int] = []
    for sign, side, name in ((-1, mover, "mover"), (1, opponent, "opponent")):
        for point in side_pinned(side, f"{what}: {name}"):
            # A pinned checker lies beneath a stack of the other side.
            if points[point - 1] * sign <= 0:
                raise BadCaseError(
                    f"{what}: the {name}'s checker pinned on {point} has no opposing stack above"
                )
            pinned.append(point)
    found = {
        "points": points,
        "bar": [int(mover.get("bar", 0)), int(opponent.get("bar", 0))],
        "off": [int(mover.get("borne_off", 0)), int(opponent.get("borne_off", 0))],
    }
    if pinned:
        found["pinned"] = sorted(pinned)
    return found


def case_position(case: Mapping[str, Any]) -> PositionJson:
    """The starting position of a ``plays`` (or ``turn``) case, mover's view."""
    if "mover" not in case or "opponent" not in case:
        raise BadCaseError(f"{case['id']}: needs both 'mover' and 'opponent'")
    return position_json(case["mover"], case["opponent"], str(case["id"]))


def play_result_json(case: Mapping[str, Any], index: int) -> PositionJson:
    """Expected result ``index`` of a ``plays`` case as position JSON (mover's view, not flipped).

    The result gives the mover's full side after the play; ``opponent`` (mover's coordinates)
    only if the play hits, otherwise the opponent is unchanged.
    """
    play = case["plays"][index]
    if not isinstance(play, Mapping):
        raise BadCaseError(f"{case['id']}: play {index} is not a mapping")
    opponent = play.get("opponent", case["opponent"])
    return position_json(
        play, opponent, f"{case['id']} play {index}", mover_extra_keys=_RESULT_EXTRA_KEYS
    )


def expected_results(case: Mapping[str, Any]) -> list[PositionJson]:
    """Expected results of a ``plays`` case (``plays: []`` = the empty play: the start position)."""
    plays = case.get("plays")
    if not isinstance(plays, list):
        raise BadCaseError(f"{case['id']}: 'plays' must be a list")
    if not plays:
        return [case_position(case)]
    return [play_result_json(case, i) for i in range(len(plays))]


def dice_of(case: Mapping[str, Any]) -> tuple[int, ...]:
    dice = case.get("dice")
    if (
        not isinstance(dice, list)
        or not dice
        or not all(isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice)
    ):
        raise BadCaseError(f"{case['id']}: bad dice {dice!r}")
    return tuple(dice)


def position_key(obj: Mapping[str, Sequence[int]]) -> PositionKey:
    """Hashable form of a position JSON (``points``, ``bar``, ``off`` and ``pinned``)."""
    return (
        tuple(int(x) for x in obj["points"]),
        tuple(int(x) for x in obj["bar"]),
        tuple(int(x) for x in obj["off"]),
        tuple(sorted(int(x) for x in obj.get("pinned", ()))),
    )


def describe(obj: Mapping[str, Sequence[int]] | PositionKey) -> str:
    """Compact human-readable form of a position, e.g. ``M{24:13 18:2} O{12:15}`` + bar/off."""
    points, bar, off, pinned = position_key(obj) if isinstance(obj, Mapping) else obj
    mover = " ".join(f"{i + 1}:{n}" for i, n in reversed(list(enumerate(points))) if n > 0)
    opp = " ".join(f"{i + 1}:{-n}" for i, n in reversed(list(enumerate(points))) if n < 0)
    text = f"M{{{mover}}} O{{{opp}}}"
    if pinned:
        text += f" pinned{list(pinned)}"
    if any(bar):
        text += f" bar{list(bar)}"
    if any(off):
        text += f" off{list(off)}"
    return text


# --------------------------------------------------------------------------------------------
# Geometry (for the score of a game-ending play)
# --------------------------------------------------------------------------------------------


def geometry_of(variant: str) -> Geometry:
    try:
        return GEOMETRY[variant]
    except KeyError:
        raise BadCaseError(f"unknown variant {variant!r}") from None


def opp_point(geometry: Geometry, point: int) -> int:
    """RULES.md §1.2: my point ``point`` in the other player's coordinates."""
    if geometry == "opposite":
        return 25 - point
    return point + 12 if point <= 12 else point - 12


def flip_json(obj: Mapping[str, Sequence[int]], geometry: Geometry) -> PositionJson:
    """The same position seen by the other player (his checkers positive, his coordinates)."""
    points = [0] * NUM_POINTS
    for i, n in enumerate(obj["points"]):
        points[opp_point(geometry, i + 1) - 1] = -int(n)
    bar, off = obj["bar"], obj["off"]
    return {"points": points, "bar": [int(bar[1]), int(bar[0])], "off": [int(off[1]), int(off[0])]}


# --------------------------------------------------------------------------------------------
# Score cases
# --------------------------------------------------------------------------------------------

_SCORE_CASE_KEYS = frozenset({"loser", "cube", "cube_owner", "options", "points", "note"})
CUBE_OWNERS = ("centre", "loser", "winner")


@dataclass(frozen=True)
class ScoreCase:
    """One entry of the ``cases`` list of a ``score`` case."""

    case_id: str
    index: int
    variant: str
    loser: Mapping[str, Any]  # the loser's side spec, in HIS OWN coordinates
    loser_json: PositionJson  # position JSON from the loser's view; the winner has off = 15
    cube: int
    cube_owner: str  # centre | loser | winner
    options: dict[str, Any] = field(default_factory=dict)  # test options updated by the case's
    points: int = 0  # what the winner scores
    note: str | None = None

    @property
    def label(self) -> str:
        return f"{self.case_id}[{self.index}]"


def loser_json(loser: Mapping[str, Any], what: str = "loser") -> PositionJson:
    """Position JSON from the loser's own view: his side as given, the winner all borne off."""
    return position_json(loser, {"borne_off": CHECKERS}, what)


def score_cases(case: Mapping[str, Any]) -> list[ScoreCase]:
    if case.get("kind") != KIND_SCORE:
        raise BadCaseError(f"{case['id']}: not a score case")
    entries = case.get("cases")
    if not isinstance(entries, list) or not entries:
        raise BadCaseError(f"{case['id']}: score case needs a non-empty 'cases' list")
    out: list[ScoreCase] = []
    for i, entry in enumerate(entries):
        what = f"{case['id']}[{i}]"
        if not isinstance(entry, Mapping):
            raise BadCaseError(f"{what}: not a mapping")
        unknown = set(entry) - _SCORE_CASE_KEYS
        if unknown:
            raise BadCaseError(f"{what}: unknown keys {sorted(map(str, unknown))}")
        if "loser" not in entry or "points" not in entry:
            raise BadCaseError(f"{what}: needs 'loser' and 'points'")
        cube_owner = entry.get("cube_owner", "centre")
        if cube_owner not in CUBE_OWNERS:
            raise BadCaseError(f"{what}: bad cube_owner {cube_owner!r}")
        override = entry.get("options") or {}
        if not isinstance(override, Mapping):
            raise BadCaseError(f"{what}: options must be a mapping")
        out.append(
            ScoreCase(
                case_id=str(case["id"]),
                index=i,
                variant=str(case["variant"]),
                loser=entry["loser"],
                loser_json=loser_json(entry["loser"], f"{what} loser"),
                cube=_count(entry.get("cube", 1), f"{what} cube"),
                cube_owner=str(cube_owner),
                options={**case["options"], **override},
                points=_count(entry["points"], f"{what} points"),
                note=entry.get("note"),
            )
        )
    return out
