"""Cross-check of nardy's backgammon analysis against GNU Backgammon's own (the ``gnubg`` program).

A ``.mat`` file is given to ``gnubg -t`` (``import mat``, ``analyse match`` at cubeless 0-ply,
``export match text``); the exported text lists, for each roll, gnubg's ranked candidate plays
with their equities and marks the play made. :func:`compare` pairs these decisions with nardy's
(:func:`nardy.analysis.game.analyse_game` on the same file) and counts the decisions where the two
best plays agree (same resulting position), and where the errors agree.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nardy.analysis.game import GameAnalysis

__all__ = [
    "Agreement",
    "GnubgDecision",
    "canonical_play",
    "compare",
    "gnubg_program",
    "parse_export",
    "run_gnubg",
]

_ROLLED = re.compile(r"^Rolled (\d)(\d)\b")
_CANDIDATE = re.compile(r"^(\*?)\s+(\d+\.|\?\?)\s+Cubeless 0-ply\s+(.+?)\s+Eq\.:\s+([+-]?\d+\.\d+)")
"""A ranked play; ``??`` ranks a play made that is below the listed ones."""
_COMMANDS = """set analysis chequerplay evaluation plies 0
set analysis chequerplay evaluation cubeful off
set analysis cubedecision evaluation plies 0
set analysis luck off
import mat {mat}
analyse match
export match text {out}
"""


def gnubg_program() -> str | None:
    """The path of the ``gnubg`` program (Debian puts it in /usr/games), or None."""
    return shutil.which("gnubg") or shutil.which("gnubg", path="/usr/games")


@dataclass(frozen=True, slots=True)
class GnubgDecision:
    """One chequer-play decision as gnubg analysed it: candidates best first (play, equity)."""

    dice: tuple[int, int]
    candidates: tuple[tuple[str, float], ...]
    played: int
    """Index in :attr:`candidates` of the play made."""

    @property
    def loss(self) -> float:
        return self.candidates[0][1] - self.candidates[self.played][1]


def run_gnubg(mat: Path, program: str, timeout: float = 300.0) -> str:
    """gnubg's text export of its 0-ply cubeless analysis of ``mat``; :class:`RuntimeError`
    when gnubg fails."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "analysis.txt"
        commands = _COMMANDS.format(mat=mat.resolve(), out=out)
        proc = subprocess.run(
            [program, "-t", "-q"],
            input=commands,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if not out.exists():
            raise RuntimeError(f"gnubg wrote no analysis (exit {proc.returncode}): {proc.stdout}")
        return out.read_text(encoding="utf-8", errors="replace")


def parse_export(text: str) -> list[GnubgDecision]:
    """The decisions with at least one candidate listed, in order of the export."""
    out: list[GnubgDecision] = []
    dice: tuple[int, int] | None = None
    candidates: list[tuple[str, float]] = []
    played = -1

    def flush() -> None:
        if dice is not None and candidates:
            out.append(GnubgDecision(dice, tuple(candidates), played))

    for line in text.splitlines():
        rolled = _ROLLED.match(line)
        if rolled:
            flush()
            dice, candidates, played = (int(rolled[1]), int(rolled[2])), [], -1
            continue
        candidate = _CANDIDATE.match(line)
        if candidate and dice is not None:
            if candidate[1]:
                played = len(candidates)
            candidates.append((candidate[3], float(candidate[4])))
        elif line.startswith(("Game ", " Game ")) or "cannot move" in line:
            flush()
            dice, candidates = None, []
    flush()
    return out


def canonical_play(text: str) -> tuple[tuple[tuple[int, int], ...], frozenset[int]]:
    """A play's effect whatever its notation: the net checker change per point (bar 25, off 0)
    and the points where it hits ("24/18/13", "24/13" and "13/7 7/2"-style chains agree)."""
    net: Counter[int] = Counter()
    hits: set[int] = set()
    for token in text.split():
        count = 1
        repeat = re.fullmatch(r"(.+)\((\d)\)", token)
        if repeat:
            token, count = repeat[1], int(repeat[2])
        points = []
        for part in token.split("/"):
            if part.endswith("*"):
                part = part[:-1]
                hits.add(_point(part))
            points.append(_point(part))
        net[points[0]] -= count
        net[points[-1]] += count
    return tuple(sorted((p, n) for p, n in net.items() if n)), frozenset(hits)


def _point(text: str) -> int:
    text = text.lower()
    return 25 if text == "bar" else 0 if text == "off" else int(text)


@dataclass
class Agreement:
    """Counts over the decisions compared (only those with two plays or more)."""

    decisions: int = 0
    same_best: int = 0
    equal_best: int = 0
    """Other best play, but of the same equity to gnubg's 3 decimals (a tie)."""
    loss_within: int = 0
    """Decisions whose equity lost agrees within the tolerance (gnubg prints 3 decimals)."""
    misaligned: int = 0
    max_best_gap: float = 0.0
    """Where the best plays differ: the largest gnubg equity gap between its best play and
    nardy's (inf when nardy's is not among gnubg's listed plays)."""
    max_loss_diff: float = 0.0
    """The largest |nardy's equity lost - gnubg's| over the decisions compared."""
    disagreements: list[str] = field(default_factory=list)

    @property
    def best_rate(self) -> float:
        return self.same_best / self.decisions if self.decisions else float("nan")

    def add(self, other: Agreement) -> None:
        """Count ``other``'s decisions too."""
        self.decisions += other.decisions
        self.same_best += other.same_best
        self.equal_best += other.equal_best
        self.loss_within += other.loss_within
        self.misaligned += other.misaligned
        self.max_loss_diff = max(self.max_loss_diff, other.max_loss_diff)
        self.max_best_gap = max(self.max_best_gap, other.max_best_gap)
        self.disagreements.extend(other.disagreements)

    def line(self) -> str:
        return (
            f"{self.decisions} decisions: same best play {self.same_best} "
            f"({100 * self.best_rate:.1f} %), a tie in {self.equal_best} more (largest gap "
            f"{self.max_best_gap:.3f}); "
            f"equity lost within 0.002 in {self.loss_within} (largest difference "
            f"{self.max_loss_diff:.4f}); misaligned {self.misaligned}"
        )


def compare(
    analyses: Sequence[GameAnalysis], gnubg: Sequence[GnubgDecision], tolerance: float = 0.002
) -> Agreement:
    """Pair nardy's play decisions (with two plays or more) with gnubg's in order and count the
    agreement; a pair whose played moves differ counts as misaligned, not compared."""
    ours = [d for a in analyses for d in a.decisions if d.kind == "play" and d.choices > 1]
    theirs = [d for d in gnubg if len(d.candidates) > 1]
    result = Agreement()
    if len(ours) != len(theirs):
        result.misaligned = abs(len(ours) - len(theirs))
        result.disagreements.append(f"nardy {len(ours)} decisions, gnubg {len(theirs)}")
    for mine, other in zip(ours, theirs, strict=False):
        if canonical_play(mine.played) != canonical_play(other.candidates[other.played][0]):
            result.misaligned += 1
            result.disagreements.append(
                f"{mine.dice}: nardy played {mine.played}, gnubg {other.candidates[other.played]}"
            )
            continue
        result.decisions += 1
        best = other.candidates[0][0]
        if canonical_play(mine.best) == canonical_play(best):
            result.same_best += 1
        else:
            equities = [
                eq for p, eq in other.candidates if canonical_play(p) == canonical_play(mine.best)
            ]
            gap = other.candidates[0][1] - equities[0] if equities else math.inf
            result.max_best_gap = max(result.max_best_gap, gap)
            if gap < 5e-4:
                result.equal_best += 1
            else:
                result.disagreements.append(
                    f"{mine.dice}: nardy {mine.best}, gnubg {best} ({other.candidates[:3]})"
                )
        result.max_loss_diff = max(result.max_loss_diff, abs(mine.loss - other.loss))
        if abs(mine.loss - other.loss) <= tolerance:
            result.loss_within += 1
        else:
            result.disagreements.append(
                f"{mine.dice} {mine.played}: nardy loses {mine.loss:.4f}, gnubg {other.loss:.3f}"
            )
    return result
