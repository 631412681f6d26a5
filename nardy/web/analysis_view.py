"""The spectator's analysis of one game (lichess's analysis board as the model).

A game is analysed on demand at 0-ply by :func:`nardy.analysis.game.analyse_game` with the
shipped neural evaluator (or gnubg's, for backgammon, or an installed plugin's, when asked for).
The evaluators offered are the built-in :data:`EVALUATORS` and the plugins' (registered with
:func:`nardy.engines.register_evaluator` or installed under the entry-point group
``nardy.evaluators``), by bare name: a query never passes an argument (``neural:FILE``). Analyses are
kept in memory, the most recently used :data:`CACHE_SIZE` of them; requests for a game whose
analysis is being computed wait for that computation instead of repeating it. The records come
from the spectator's own data access (:meth:`nardy.web.data.Spectator.game`), so a game the
spectator does not show (a sealed round's) is never analysed either.

:mod:`nardy.web.equity_graph` draws the graph.

A play decision the page shows can be rolled out on request (``?rollout=1``: the link under its
ranking), by the one rollout there is (:func:`nardy.analysis.rollout_errors.rollout_decision`,
as ``nardy analyze --rollout`` rolls out errors) with :data:`ROLLOUT`'s settings and the page's
evaluator; the rollouts made are kept (the most recent :data:`ROLLOUTS_KEPT`) and shown beside
the evaluator's figures whenever the decision is shown again, in the page and its JSON.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from nardy.analysis.game import DecisionAnalysis, GameAnalysis, analyse_game
from nardy.analysis.records import RecordError, from_arena_record
from nardy.analysis.rollout import Rollout, roll_decisions
from nardy.analysis.rollout_errors import RolloutSettings, rollout_decision
from nardy.core.errors import NardyError
from nardy.core.game import COLOURS
from nardy.core.notation import Step, parse_steps
from nardy.core.position import Position
from nardy.core.record import MatchInfo
from nardy.core.variant import Variant
from nardy.engines.evaluator import Evaluator, evaluator_names, make_evaluator
from nardy.engines.search import RankedPlay, Searcher
from nardy.game_view import DecisionStep, GameSteps
from nardy.svg import CubeOwner, SvgBoard, board
from nardy.web.equity_graph import equity_graph, white_equity
from nardy.words import result_words

__all__ = [
    "CACHE_SIZE",
    "EVALUATORS",
    "Analyst",
    "Coalescing",
    "NoAnalysis",
    "NoEvaluator",
    "analysis_board",
    "analysis_page",
    "decision_at",
    "decision_steps",
    "evaluators_for",
    "offered_evaluators",
    "shown_ranking",
    "step_labels",
    "with_rollout",
]

EVALUATORS = ("neural", "gnubg")
"""The built-in evaluators ``?evaluator=`` may ask for (the first is the default)."""
NOT_OFFERED = frozenset({"heuristic"})
"""Built-in evaluators the pages do not offer (weak on purpose: for tests)."""


def offered_evaluators() -> tuple[str, ...]:
    """What ``?evaluator=`` may ask for: :data:`EVALUATORS`, then the plugins' by name."""
    plugins = [n for n in evaluator_names() if n not in EVALUATORS and n not in NOT_OFFERED]
    return (*EVALUATORS, *plugins)


CACHE_SIZE = 32
"""Analysed games kept in memory."""
ROLLOUT = RolloutSettings(trials=36, truncate=5, seed=0, top=3)
"""How the page rolls out a decision: 36 trials of the top 3 plays (and the play made), truncated
after 5 rolls, variance-reduced; about 5 to 10 s of one core in backgammon (docs/analysis.md)."""
ROLLOUTS_KEPT = 256
"""Rolled-out decisions kept in memory."""
EVALUATOR_CACHE = 4
"""Loaded evaluators kept (a net per variant)."""

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

    def __init__(self, size: int = CACHE_SIZE, rollout: RolloutSettings = ROLLOUT) -> None:
        self.results: Coalescing[tuple[str, str, str], GameAnalysis] = Coalescing(size)
        self.rollout_settings = rollout
        self.rollouts: Coalescing[tuple[str, str, str, int], Rollout | None] = Coalescing(
            ROLLOUTS_KEPT
        )
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
        offered = offered_evaluators()
        if evaluator not in offered:
            raise NoAnalysis(f"unknown evaluator {evaluator!r}; the spectator has {offered}")
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
        evaluator, lock = self._evaluator(spec, game.variant)
        # One analysis at a time per evaluator (gnubg's is not thread-safe); a fresh searcher
        # each time, so that its position caches go with the game.
        with lock:
            try:
                analysis = analyse_game(game, Searcher(game.variant, evaluator), 0)
            except RecordError as error:
                raise NoAnalysis(f"the game cannot be analysed: {error}") from None
        with self._count_lock:
            self.computed += 1
        return analysis

    def _evaluator(self, spec: str, variant: Variant) -> tuple[Evaluator, threading.Lock]:
        """The evaluator ``spec`` of ``variant``, loaded once, and the lock that lets one
        computation at a time use it; :class:`NoEvaluator` if there is none."""
        key = json.dumps([spec, variant.name, variant.options], sort_keys=True, default=str)

        def load() -> tuple[Evaluator, threading.Lock]:
            try:
                return make_evaluator(spec, variant), threading.Lock()
            except (ValueError, NardyError, OSError, ImportError) as error:
                raise NoEvaluator(
                    f"there is no {spec} analysis of {variant.name} games: {error}"
                ) from None

        return self._evaluators.get(key, load)

    def rolled_out(
        self,
        tournament_id: str,
        game_id: str,
        record: Mapping[str, Any],
        spec: str,
        decision: DecisionAnalysis,
        *,
        compute: bool,
    ) -> Rollout | None:
        """The rollout of a decision of a stored game's analysis by ``spec``: the one kept, or,
        with ``compute``, made now (coalesced as analyses are); None where none is kept and
        ``compute`` is false, and where the decision cannot be rolled out (a cube decision, a
        forced play, a segment after the first of a roll)."""
        key = (tournament_id, game_id, spec, decision.number)
        if not compute and key not in self.rollouts:
            return None
        return self.rollouts.get(key, lambda: self._rollout(game_id, record, spec, decision))

    def _rollout(
        self, game_id: str, record: Mapping[str, Any], spec: str, decision: DecisionAnalysis
    ) -> Rollout | None:
        if decision.kind != "play" or decision.choices < 2:
            return None
        try:
            game = from_arena_record(game_id, dict(record))
            start = roll_decisions(game).get(decision.number)
        except RecordError as error:
            raise NoAnalysis(f"the game's record cannot be rolled out: {error}") from None
        if start is None:
            return None
        evaluator, lock = self._evaluator(spec, game.variant)
        with lock:  # as the analysis: one computation at a time per evaluator
            return rollout_decision(
                decision, start, Searcher(game.variant, evaluator), 0, self.rollout_settings
            )


def with_rollout(analysis: GameAnalysis, number: int, found: Rollout) -> GameAnalysis:
    """A copy of ``analysis`` whose decision ``number`` (1-based) carries the rollout ``found``
    (the cached analysis itself is shared between requests and stays as it was)."""
    decisions = list(analysis.decisions)
    decisions[number - 1] = dataclasses.replace(decisions[number - 1], rollout=found)
    return dataclasses.replace(analysis, decisions=decisions)


def evaluators_for(variant: str, current: str) -> list[str]:
    """The evaluators the page offers for a variant: neural, gnubg for backgammon where its
    package is installed, the plugins' (a plugin that has none for the variant says so when
    asked), and whichever was asked for."""
    offered = [EVALUATORS[0]]
    if variant == "backgammon" and importlib.util.find_spec("gnubg") is not None:
        offered.append("gnubg")
    offered.extend(offered_evaluators()[len(EVALUATORS) :])
    if current not in offered:
        offered.append(current)
    return offered


def decision_steps(
    decisions: Sequence[DecisionAnalysis], steps: Sequence[DecisionStep]
) -> list[int | None]:
    """The game page's step number of each analysed decision, or None for a decision the bots
    were not asked (a forced play, which the analysis lists and the arena plays by itself).
    Both are replays of one record in order; cube steps the analysis leaves out (the match
    games of variants other than backgammon) are passed over."""
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


def decision_at(plies: Sequence[int | None], ply: int) -> int:
    """The decision (1-based) that ``?ply=N`` opens on the analysis page: the one made at the
    game page's step ``ply``, so that one number names one move on both pages. A step the
    analysis leaves out (a match game's cube action in a variant other than backgammon) opens
    the next analysed decision, the final position the last one."""
    for index, step in enumerate(plies, start=1):
        if step is not None and step >= ply:
            return index
    return max(len(plies), 1)


def step_labels(plies: Sequence[int | None]) -> list[str]:
    """Each decision's name in the game page's numbering: ``"12"`` for the decision at step 12,
    ``"after 12"`` for a forced play the arena made after it (``"before 1"`` ahead of the
    first), since a forced play is no decision and has no number of its own on the game page."""
    out: list[str] = []
    last = 0
    for step in plies:
        if step is None:
            out.append(f"after {last}" if last else "before 1")
        else:
            last = step
            out.append(str(step))
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


def analysis_page(
    analysis: GameAnalysis,
    replay: GameSteps,
    names: Mapping[str, str],
    result: Mapping[str, Any] | None,
    evaluator: str,
    number: int,
    url: Callable[..., str],
    *,
    rollout_url: str | None = None,
    rollout_refused: bool = False,
) -> dict[str, Any]:
    """What analysis.html shows of decision ``number`` (1-based) of a game's ``analysis``,
    whichever page it is on (a tournament's game, a game played on the Play page): the
    decision, its step on the game page, the ranking, the board, the equity graph, the result.
    ``url(n, evaluator)`` is the link to decision ``n``. The page names decisions by the game
    page's step numbers (``labels``; ``asked`` is the game page's count), forced plays as
    such. ``rollout_url``: the link that rolls the decision out (None: no link); with
    ``rollout_refused`` the page says the decision cannot be rolled out."""
    decisions = analysis.decisions
    steps = replay.steps
    plies = decision_steps(decisions, steps)
    decision = decisions[number - 1] if decisions else None
    ply = plies[number - 1] if decisions else None
    step = None if ply is None else steps[ply - 1]
    seats = (names["White"], names["Black"])
    return {
        "names": names,
        "variant": replay.variant,
        "match": replay.match,
        "analysis": analysis,
        "evaluator": evaluator,
        "evaluators": evaluators_for(replay.variant.name, evaluator),
        "decisions": decisions,
        "plies": plies,
        "labels": step_labels(plies),
        "asked": len(steps) - 1,
        "number": number,
        "decision": decision,
        "ply": ply,
        "step": step,
        "ranking": [] if decision is None else shown_ranking(decision),
        "result_text": result_words(result, replay.variant, cube=steps[-1].cube[0], names=names),
        "graph": equity_graph(decisions, seats, number, lambda n: url(n, evaluator)),
        "board": None
        if decision is None
        else analysis_board(decision, step, replay.variant, seats, replay.match),
        "url": url,
        "white_equity": white_equity,
        "rollout_url": rollout_url,
        "rollout_refused": rollout_refused,
    }


def analysis_board(
    decision: DecisionAnalysis,
    step: DecisionStep | None,
    variant: Variant,
    names: tuple[str, str],
    match: MatchInfo | None,
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
        cube, offered = step.board_cube(), step.offered
    score, match_length, crawford = (match or MatchInfo()).board_score()
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
        score=score,
        match_length=match_length,
        crawford=crawford,
    )


def _steps(play: str) -> list[Step] | None:
    """A play's steps to draw, or None (a play text the notation does not parse draws nothing:
    the page still writes it)."""
    try:
        return parse_steps(play) or None
    except (NardyError, ValueError):
        return None
