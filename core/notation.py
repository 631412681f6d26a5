"""Steps and their text, exactly as RULES.md §1.5 writes them.

"Steps, in the mover's coordinates: ``24/18`` (board step), ``bar/20`` (entry), ``6/off`` (bear-off),
``13/10*`` (a step that hits), ``24/18(2)`` (the same step twice), ``24/18/13`` (one checker, two steps,
landing on 18 in between). Steps are separated by spaces and written in the order made."

:func:`format_steps` writes the canonical text and :func:`parse_steps` reads it back to the same list of
steps (``parse_steps(format_steps(s))`` gives ``s`` with the dice of bear-offs left open, see
:class:`Step`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from nardy.core.errors import InvalidPlayError

BAR = 25
"""The mover's bar as a source point (RULES.md §1.1: "the mover's checkers on the bar are at point 25")."""
OFF = 0
"""The destination of a bear-off."""


class Step(NamedTuple):
    """One checker moved by the number of one die: a board step, an entry or a bear-off."""

    src: int
    """Source point, 1…24, or :data:`BAR` (25)."""
    dst: int
    """Destination point, 1…24, or :data:`OFF` (0)."""
    die: int
    """The die (or progression/transfer unit) played; a bear-off may use a die larger than ``src``."""
    hit: bool = False
    """Whether the step hit a lone opposing checker (backgammon, trictrac)."""


def _point_text(point: int) -> str:
    if point == BAR:
        return "bar"
    if point == OFF:
        return "off"
    return str(point)


def format_steps(steps: Sequence[Step]) -> str:
    """The text of a play, in the order made: ``24/18(2)`` for the same step made twice in a row,
    ``24/21/18`` for one checker moving on (its next step comes right after), ``*`` for a hit, and
    ``(n)`` again for identical consecutive chains (``24/21/18(2)``). The empty play is ``""``.

    :func:`parse_steps` reads the text back to exactly these steps in this order.
    """
    chains: list[list[Step]] = []
    repeats: list[int] = []
    i = 0
    while i < len(steps):
        step = steps[i]
        run = 1
        while i + run < len(steps) and steps[i + run] == step:
            run += 1
        previous = chains[-1][-1] if chains else None
        if (
            run == 1
            and repeats
            and repeats[-1] == 1
            and previous is not None
            and previous.dst == step.src
        ):
            chains[-1].append(step)  # the checker that just moved moves on
        else:
            chains.append([step])
            repeats.append(run)
        i += run
    tokens: list[str] = []
    counts: list[int] = []
    for chain, repeat in zip(chains, repeats, strict=True):
        text = _point_text(chain[0].src) + "".join(
            "/" + _point_text(s.dst) + ("*" if s.hit else "") for s in chain
        )
        if repeat == 1 and tokens and tokens[-1] == text and "/" in text[text.index("/") + 1 :]:
            counts[-1] += 1  # identical consecutive chains of one checker each: 24/21/18(2)
        else:
            tokens.append(text)
            counts.append(repeat)
    return " ".join(t if n == 1 else f"{t}({n})" for t, n in zip(tokens, counts, strict=True))


# -- the same text, fast --------------------------------------------------------------------------
# Every step's two halves are precomputed: its source (``24``, ``bar``) and its landing (``/18``,
# ``/18*``, ``/off``), so a play's text is joined from table entries instead of formatted. The move
# generator returns the steps of every play in the order made; most plays have two steps.

_SOURCE_TEXT = tuple(_point_text(point) for point in range(BAR + 1))
"""``_SOURCE_TEXT[src]``: ``off`` (unused), ``1`` … ``24``, ``bar``."""
_LANDING_TEXT = tuple(
    ("/" + _point_text(point), "/" + _point_text(point) + "*") for point in range(BAR + 1)
)
"""``_LANDING_TEXT[dst][hit]``: ``/off``, ``/1`` … ``/24``, each also with ``*``."""


def play_text(steps: Sequence[Step]) -> str:
    """:func:`format_steps`, with the text of every step taken from tables: the same text, faster.

    ``tests/test_notation.py`` checks that both give the same text for every play of the oracle and
    for arbitrary step lists.
    """
    n = len(steps)
    if n == 2:
        a, b = steps
        if a == b:
            return _SOURCE_TEXT[a[0]] + _LANDING_TEXT[a[1]][a[3]] + "(2)"
        if a[1] == b[0]:  # one checker, two steps: 24/21/18
            return _SOURCE_TEXT[a[0]] + _LANDING_TEXT[a[1]][a[3]] + _LANDING_TEXT[b[1]][b[3]]
        return (
            _SOURCE_TEXT[a[0]]
            + _LANDING_TEXT[a[1]][a[3]]
            + " "
            + _SOURCE_TEXT[b[0]]
            + _LANDING_TEXT[b[1]][b[3]]
        )
    if n == 1:
        a = steps[0]
        return _SOURCE_TEXT[a[0]] + _LANDING_TEXT[a[1]][a[3]]
    if n == 0:
        return ""
    if n == 4:
        a, b, c, d = steps
        if a != b and b != c and c != d:
            # No step repeated: only chains (a step from where the previous one landed) group.
            text = _SOURCE_TEXT[a[0]] + _LANDING_TEXT[a[1]][a[3]]
            second = _LANDING_TEXT[b[1]][b[3]]
            third = _LANDING_TEXT[c[1]][c[3]]
            fourth = _LANDING_TEXT[d[1]][d[3]]
            if a[1] == b[0]:
                text += second
                if b[1] != c[0] and c[1] == d[0]:  # two chains of two steps: 24/21/18(2)?
                    other = _SOURCE_TEXT[c[0]] + third + fourth
                    return text + "(2)" if other == text else text + " " + other
            else:
                text += " " + _SOURCE_TEXT[b[0]] + second
            text += third if b[1] == c[0] else " " + _SOURCE_TEXT[c[0]] + third
            return text + fourth if c[1] == d[0] else text + " " + _SOURCE_TEXT[d[0]] + fourth
        # A repeated step (equal dice played from the same point) is a run: ``13/10(2)``. After a
        # run nothing chains on; a single step chains on a single step that landed where it starts.
        first = _SOURCE_TEXT[a[0]] + _LANDING_TEXT[a[1]][a[3]]
        if a == b:
            if b == c:
                if c == d:
                    return first + "(4)"
                return first + "(3) " + _SOURCE_TEXT[d[0]] + _LANDING_TEXT[d[1]][d[3]]
            third = _SOURCE_TEXT[c[0]] + _LANDING_TEXT[c[1]][c[3]]
            if c == d:
                return first + "(2) " + third + "(2)"
            if c[1] == d[0]:
                return first + "(2) " + third + _LANDING_TEXT[d[1]][d[3]]
            return first + "(2) " + third + " " + _SOURCE_TEXT[d[0]] + _LANDING_TEXT[d[1]][d[3]]
        second = _SOURCE_TEXT[b[0]] + _LANDING_TEXT[b[1]][b[3]]
        if b == c:
            if c == d:
                return first + " " + second + "(3)"
            return first + " " + second + "(2) " + _SOURCE_TEXT[d[0]] + _LANDING_TEXT[d[1]][d[3]]
        if c == d:
            text = first + _LANDING_TEXT[b[1]][b[3]] if a[1] == b[0] else first + " " + second
            return text + " " + _SOURCE_TEXT[c[0]] + _LANDING_TEXT[c[1]][c[3]] + "(2)"
    # The grouping of format_steps: runs of one step become ``(n)``; a single step whose source is the
    # landing of a single previous step extends its chain; identical consecutive chains of two or more
    # steps become ``(n)`` too.
    texts: list[str] = []
    counts: list[int] = []
    chain = ""
    chain_repeat = 0
    chain_long = False
    last_dst = -1
    i = 0
    while i < n:
        step = steps[i]
        run = 1
        while i + run < n and steps[i + run] == step:
            run += 1
        if run == 1 and chain_repeat == 1 and last_dst == step[0]:
            chain += _LANDING_TEXT[step[1]][step[3]]
            chain_long = True
        else:
            if chain:
                if chain_repeat == 1 and chain_long and texts and texts[-1] == chain:
                    counts[-1] += 1
                else:
                    texts.append(chain)
                    counts.append(chain_repeat)
            chain = _SOURCE_TEXT[step[0]] + _LANDING_TEXT[step[1]][step[3]]
            chain_repeat = run
            chain_long = False
        last_dst = step[1]
        i += run
    if chain_repeat == 1 and chain_long and texts and texts[-1] == chain:
        counts[-1] += 1
    else:
        texts.append(chain)
        counts.append(chain_repeat)
    return " ".join(t if c == 1 else f"{t}({c})" for t, c in zip(texts, counts, strict=True))


_TOKEN = re.compile(r"^(?P<chain>[^()]+?)(?:\((?P<count>\d+)\))?$")


def _parse_point(text: str, token: str) -> int:
    lowered = text.lower()
    if lowered == "bar":
        return BAR
    if lowered == "off":
        return OFF
    if not text.isdigit():
        raise InvalidPlayError(f"bad point {text!r} in {token!r}: expected 1-25, 'bar', 0 or 'off'")
    value = int(text)
    if not 0 <= value <= BAR:
        raise InvalidPlayError(f"point {value} in {token!r} is outside 0-25")
    return value


def parse_steps(text: str) -> list[Step]:
    """Parse play text into steps; the die of each step is ``src - dst`` (a bear-off's smallest die).

    Accepts the canonical form and the usual relaxations (``25`` for ``bar``, ``0`` for ``off``, any
    case, ``*`` anywhere in a chain, ``^`` for a pin). Raises :class:`InvalidPlayError` for malformed text.
    """
    steps: list[Step] = []
    for token in text.split():
        match = _TOKEN.match(token)
        if match is None:
            raise InvalidPlayError(f"malformed step {token!r}")
        count = int(match.group("count") or 1)
        if not 1 <= count <= 4:
            raise InvalidPlayError(f"repeat count in {token!r} must be 1-4")
        parts = match.group("chain").split("/")
        if len(parts) < 2:
            raise InvalidPlayError(f"malformed step {token!r}: expected 'from/to'")
        # ``^`` marks a pin (RULES.md §3.12.2: ``13/7^``); the variant decides what a landing does.
        points = [_parse_point(p.rstrip("*^"), token) for p in parts]
        hits = [p.endswith("*") for p in parts]
        chain: list[Step] = []
        for src, dst, hit in zip(points, points[1:], hits[1:], strict=False):
            if dst >= src or src == OFF or dst == BAR:
                raise InvalidPlayError(f"step {src}/{dst} in {token!r} does not move towards home")
            chain.append(Step(src, dst, src - dst, hit))
        steps.extend(chain * count)
    return steps
