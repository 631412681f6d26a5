"""The spectator's analysis of one game (lichess's analysis board as the model).

A game is analysed on demand at 0-ply by :func:`nardy.analysis.game.analyse_game` with the
shipped neural evaluator (or gnubg's, for backgammon, when asked for and installed). Analyses are
kept in memory, the most recently used :data:`CACHE_SIZE` of them; requests for a game whose
analysis is being computed wait for that computation instead of repeating it. The records come
from the spectator's own data access (:meth:`nardy.web.data.Spectator.game`), so a game the
spectator does not show (a sealed round's) is never analysed either.

:func:`equity_graph` draws the equity over the game from White's side (the mover's equity after
each decision, negated for Black's), each decision a dot coloured by its mark, with the luck of
each roll as bars beneath: server-side SVG (ElementTree, so every text is escaped).
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from nardy.analysis.evaluator import Evaluator, make_evaluator
from nardy.analysis.game import DecisionAnalysis, GameAnalysis, analyse_game
from nardy.analysis.records import RecordError, from_arena_record
from nardy.analysis.search import RankedPlay, Searcher
from nardy.core.errors import NardyError
from nardy.core.game import COLOURS
from nardy.core.notation import Step, parse_steps
from nardy.core.position import Position
from nardy.core.variant import Variant
from nardy.game_view import DecisionStep, MatchSetup
from nardy.svg import CubeOwner, SvgBoard, board

__all__ = [
    "CACHE_SIZE",
    "EVALUATORS",
    "Analyst",
    "Coalescing",
    "NoAnalysis",
    "NoEvaluator",
    "analysis_board",
    "decision_steps",
    "equity_graph",
    "evaluators_for",
    "shown_ranking",
    "white_equity",
]

EVALUATORS = ("neural", "gnubg")
"""What ``?evaluator=`` may ask for (the first is the default)."""
CACHE_SIZE = 32
"""Analysed games kept in memory."""
EVALUATOR_CACHE = 4
"""Loaded evaluators kept (a net per variant)."""
SYMBOLS = {"blunder": "??", "error": "?", "doubtful": "?!"}
"""lichess's annotation of each mark."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class NoAnalysis(Exception):
    """A game that cannot be analysed (its variant has no evaluator, its record does not
    replay): the message says why, for the page."""


class NoEvaluator(NoAnalysis):
    """The variant has no such evaluator (no shipped net; gnubg for another variant or not
    installed)."""


class Coalescing(Generic[K, V]):
    """A bounded least-recently-used cache whose concurrent misses on one key make a single
    computation: the first caller computes, the others wait for its result (or its error,
    which is not cached)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a cache holds at least one item, not {size}")
        self.size = size
        self._done: OrderedDict[K, V] = OrderedDict()
        self._running: dict[K, Future[V]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def __contains__(self, key: K) -> bool:
        with self._lock:
            return key in self._done

    def get(self, key: K, compute: Callable[[], V]) -> V:
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            future = self._running.get(key)
            owner = future is None
            if future is None:
                future = self._running[key] = Future()
        if not owner:
            return future.result()
        try:
            value = compute()
        except BaseException as error:
            with self._lock:
                del self._running[key]
            future.set_exception(error)
            raise
        with self._lock:
            self._done[key] = value
            while len(self._done) > self.size:
                self._done.popitem(last=False)
            del self._running[key]
        future.set_result(value)
        return value


class Analyst:
    """Analyses games of any variant for the spectator, cached and coalesced per game."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.results: Coalescing[tuple[str, str, str], GameAnalysis] = Coalescing(size)
        self._evaluators: Coalescing[str, tuple[Evaluator, threading.Lock]] = Coalescing(
            EVALUATOR_CACHE
        )
        self.computed = 0
        """How many analyses were computed (not taken from the cache)."""
        self._count_lock = threading.Lock()

    def analyse(
        self, tournament_id: str, game_id: str, record: Mapping[str, Any], evaluator: str
    ) -> GameAnalysis:
        """The 0-ply analysis of a stored game's ``record``; :class:`NoAnalysis` if there is
        none (no such evaluator for its variant, a record that does not replay)."""
        if evaluator not in EVALUATORS:
            raise NoAnalysis(f"unknown evaluator {evaluator!r}; the spectator has {EVALUATORS}")
        return self.results.get(
            (tournament_id, game_id, evaluator),
            lambda: self.compute(game_id, record, evaluator),
        )

    def compute(self, game_id: str, record: Mapping[str, Any], spec: str) -> GameAnalysis:
        """The analysis of a record, made now (not cached: a whole tournament's analysis goes
        through here without pushing the pages' analyses out of the cache)."""
        try:
            game = from_arena_record(game_id, dict(record))
        except RecordError as error:
            raise NoAnalysis(f"the game's record cannot be analysed: {error}") from None
        variant = game.variant
        key = json.dumps([spec, variant.name, variant.options], sort_keys=True, default=str)

        def load() -> tuple[Evaluator, threading.Lock]:
            try:
                return make_evaluator(spec, variant), threading.Lock()
            except (ValueError, NardyError, OSError, ImportError) as error:
                raise NoEvaluator(
                    f"there is no {spec} analysis of {variant.name} games: {error}"
                ) from None

        evaluator, lock = self._evaluators.get(key, load)
        # One analysis at a time per evaluator (gnubg's is not thread-safe); a fresh searcher
        # each time, so that its position caches go with the game.
        with lock:
            try:
                analysis = analyse_game(game, Searcher(variant, evaluator), 0)
            except RecordError as error:
                raise NoAnalysis(f"the game cannot be analysed: {error}") from None
        with self._count_lock:
            self.computed += 1
        return analysis


def evaluators_for(variant: str, current: str) -> list[str]:
    """The evaluators the page offers for a variant: neural, and gnubg for backgammon where its
    package is installed (and whichever was asked for)."""
    offered = [EVALUATORS[0]]
    if variant == "backgammon" and importlib.util.find_spec("gnubg") is not None:
        offered.append("gnubg")
    if current not in offered:
        offered.append(current)
    return offered


def white_equity(decision: DecisionAnalysis) -> float:
    """The equity after the decision (the decider's, per unit of the cube) from White's side."""
    return decision.equity_played if decision.player == 0 else -decision.equity_played


def decision_steps(
    decisions: Sequence[DecisionAnalysis], steps: Sequence[DecisionStep]
) -> list[int | None]:
    """The game page's step number of each analysed decision, or None for a decision the bots
    were not asked (a forced play, which the analysis lists and the arena plays by itself).
    Both are replays of one record in order; cube steps the analysis leaves out (match play)
    are passed over."""
    out: list[int | None] = []
    pointer = 0
    for decision in decisions:
        found = None
        for index in range(pointer, len(steps)):
            step = steps[index]
            if _same(decision, step):
                found = index
                break
            if step.kind not in ("double", "take"):
                break
        out.append(None if found is None else steps[found].number)
        if found is not None:
            pointer = found + 1
    return out


def _same(decision: DecisionAnalysis, step: DecisionStep) -> bool:
    if step.kind != decision.kind or step.player != COLOURS[decision.player]:
        return False
    if step.position.id() != decision.position:
        return False
    if decision.kind == "play":
        return tuple(step.dice or ()) == decision.dice and step.choices == decision.choices
    return True


def shown_ranking(decision: DecisionAnalysis, top: int = 5) -> list[tuple[int, RankedPlay]]:
    """The ``top`` best plays with their ranks, and the play made if it is not among them."""
    ranked = list(enumerate(decision.ranking, start=1))
    shown = ranked[:top]
    played = next((item for item in ranked if item[1].text == decision.played), None)
    if played is not None and played not in shown:
        shown.append(played)
    return shown


# -- the graph ----------------------------------------------------------------------------------

_W = 1000
_LEFT = 46
_RIGHT = 12
_TOP = 12
_EQ_H = 170
_GAP = 26
_LUCK_H = 56
_BOTTOM = 22


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _el(parent: ET.Element, tag: str, **attrs: object) -> ET.Element:
    clean = {k.rstrip("_").replace("_", "-"): str(v) for k, v in attrs.items() if v is not None}
    return ET.SubElement(parent, tag, clean)


def equity_graph(
    decisions: Sequence[DecisionAnalysis],
    names: tuple[str, str],
    current: int | None = None,
    href: Callable[[int], str] | None = None,
) -> str:
    """The SVG graph: one dot per decision (``circle.decision``, ``data-decision`` its number,
    ``data-mark`` its mark or ``none``, ``data-equity`` White's equity), linked to
    ``href(number)``; the area between the curve and 0 light where White is ahead, dark where
    Black is; the luck of each roll a bar beneath (``rect.luck``, up for White's luck)."""
    n = len(decisions)
    equities = [white_equity(d) for d in decisions]
    top_equity = max((abs(e) for e in equities), default=0.0)
    scale = min(3.0, max(1.0, math.ceil(top_equity * 2) / 2))
    top_luck = max((abs(d.luck) for d in decisions if d.luck is not None), default=0.0)
    luck_scale = max(0.5, math.ceil(top_luck * 4) / 4)
    height = _TOP + _EQ_H + _GAP + _LUCK_H + _BOTTOM
    inner = _W - _LEFT - _RIGHT
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {_W} {height}",
            "class": "equity-graph",
            "role": "img",
            "data-decisions": str(n),
        },
    )
    _el(root, "title").text = (
        f"Equity over the game from White's side ({names[0]}; {names[1]} is Black), "
        "one dot per decision, and the luck of each roll"
    )

    def x(index: int) -> float:
        return _LEFT + (index + 0.5) * inner / max(n, 1)

    def y(equity: float) -> float:
        clipped = max(-scale, min(scale, equity))
        return _TOP + (scale - clipped) / (2 * scale) * _EQ_H

    zero = y(0.0)
    _el(root, "rect", class_="field", x=_LEFT, y=_TOP, width=inner, height=_EQ_H)
    for value in (scale, scale / 2, 0.0, -scale / 2, -scale):
        _el(
            root,
            "line",
            class_="grid zero" if value == 0 else "grid",
            x1=_LEFT,
            x2=_W - _RIGHT,
            y1=_f(y(value)),
            y2=_f(y(value)),
        )
        label = _el(root, "text", class_="tick", x=_LEFT - 5, y=_f(y(value) + 4))
        label.text = f"{value:+g}" if value else "0"
    if n:
        curve = " ".join(f"{_f(x(i))},{_f(y(e))}" for i, e in enumerate(equities))
        area = f"{_f(x(0))},{_f(zero)} {curve} {_f(x(n - 1))},{_f(zero)}"
        defs = _el(root, "defs")
        for side, (y0, h) in {
            "white": (_TOP, zero - _TOP),
            "black": (zero, _TOP + _EQ_H - zero),
        }.items():
            clip = _el(defs, "clipPath", id=f"equity-{side}")
            _el(clip, "rect", x=_LEFT, y=_f(y0), width=inner, height=_f(h))
            _el(
                root,
                "polygon",
                class_=f"area {side}",
                points=area,
                clip_path=f"url(#equity-{side})",
            )
        _el(root, "polyline", class_="curve", points=curve)
    side_label = _el(root, "text", class_="side", x=_LEFT + 6, y=_TOP + 14)
    side_label.text = f"White ({names[0]}) ahead"
    side_label = _el(root, "text", class_="side", x=_LEFT + 6, y=_TOP + _EQ_H - 6)
    side_label.text = f"Black ({names[1]}) ahead"

    # The luck band: each roll's luck from White's side.
    middle = _TOP + _EQ_H + _GAP + _LUCK_H / 2
    luck_label = _el(root, "text", class_="band", x=_LEFT + 6, y=_TOP + _EQ_H + _GAP - 6)
    luck_label.text = f"luck of each roll (White's up, Black's down; ±{luck_scale:g})"
    _el(root, "line", class_="grid zero", x1=_LEFT, x2=_W - _RIGHT, y1=_f(middle), y2=_f(middle))
    bar_width = max(1.0, min(10.0, inner / max(n, 1) * 0.7))
    for index, decision in enumerate(decisions):
        if decision.luck is None:
            continue
        luck = decision.luck if decision.player == 0 else -decision.luck
        h = abs(luck) / luck_scale * _LUCK_H / 2
        rect = _el(
            root,
            "rect",
            class_=f"luck {COLOURS[decision.player].lower()}",
            data_decision=decision.number,
            data_luck=f"{decision.luck:.4f}",
            x=_f(x(index) - bar_width / 2),
            y=_f(middle - h if luck > 0 else middle),
            width=_f(bar_width),
            height=_f(max(h, 0.5)),
        )
        _el(rect, "title").text = (
            f"{decision.number}. {COLOURS[decision.player]} rolls "
            f"{'-'.join(map(str, decision.dice))}: luck {decision.luck:+.3f}"
        )

    # The cursor, then the dots (on top, each a link).
    if current is not None and 1 <= current <= n:
        cx = _f(x(current - 1))
        _el(root, "line", class_="cursor", x1=cx, x2=cx, y1=_TOP, y2=_TOP + _EQ_H + _GAP + _LUCK_H)
    for index, (decision, equity) in enumerate(zip(decisions, equities, strict=True)):
        parent = root
        if href is not None:
            parent = _el(root, "a", href=href(decision.number))
        marked = decision.mark
        classes = ["decision", marked or "none"]
        if decision.number == current:
            classes.append("current")
        dot = _el(
            parent,
            "circle",
            class_=" ".join(classes),
            data_decision=decision.number,
            data_mark=marked or "none",
            data_equity=f"{equity:.4f}",
            cx=_f(x(index)),
            cy=_f(y(equity)),
            r=5.5 if marked else 3,
        )
        what = decision.played or "(no move)"
        note = f", {marked} {SYMBOLS[marked]} (lost {decision.loss:.3f})" if marked else ""
        _el(dot, "title").text = (
            f"{decision.number}. {COLOURS[decision.player]}: {what}, "
            f"White's equity {equity:+.3f}{note}"
        )
    axis = _el(root, "text", class_="tick axis", x=_W - _RIGHT, y=height - 6)
    axis.text = f"decision 1 … {n}"
    return ET.tostring(root, encoding="unicode")


def analysis_board(
    decision: DecisionAnalysis,
    step: DecisionStep | None,
    variant: Variant,
    names: tuple[str, str],
    match: MatchSetup | None,
) -> SvgBoard:
    """The board of one decision as the game page draws it (from White's seat, numbered as the
    decider numbers his points), with the play made as arrows and the best play, when another,
    as dashed arrows beside it; the cube from the game page's step when the bots were asked."""
    position = Position.from_id(decision.position, variant.checkers)
    black = decision.player == 1
    played = best = None
    if decision.kind == "play":
        played = _steps(decision.played)
        if decision.best != decision.played:
            best = _steps(decision.best)
    cube: tuple[int, CubeOwner] | None = None
    offered = None
    if step is not None and variant.rules.cube.available:
        value, owner_colour = step.cube
        owner: CubeOwner = (
            None if owner_colour is None else "mover" if owner_colour == step.player else "opponent"
        )
        cube, offered = (value, owner), step.offered
    return board(
        position,
        variant,
        flipped=black,
        mover="black" if black else "white",
        numbering="mover",
        last_play=played,
        best_play=best,
        dice=decision.dice or None,
        cube=cube,
        offered=offered,
        pips=True,
        names=names,
        score=None if match is None or not match.length else match.score,
        match_length=0 if match is None else match.length,
        crawford=match is not None and match.crawford,
    )


def _steps(play: str) -> list[Step] | None:
    """A play's steps to draw, or None (a play text the notation does not parse draws nothing:
    the page still writes it)."""
    try:
        return parse_steps(play) or None
    except (NardyError, ValueError):
        return None
