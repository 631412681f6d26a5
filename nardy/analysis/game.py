"""One game analysed: every decision against the best, the luck of every roll, and the
luck-adjusted result (``docs/analysis.md`` defines the quantities)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nardy.analysis.cube import (
    CubeAnalysis,
    MatchScore,
    analyse_cube,
    analyse_match_cube,
    probabilities_from_equity,
)
from nardy.analysis.met import MAX_AWAY, MatchEquityTable, table_for
from nardy.analysis.quantities import quantities
from nardy.analysis.records import GameInput, RecordError
from nardy.core.errors import NardyError
from nardy.core.game import COLOURS, DoubleDecision, Game, PlayDecision, TakeDecision
from nardy.core.record import MatchInfo, Replay
from nardy.core.turnplan import NO_TRANSFER, Transfer, transfer_groups
from nardy.engines.search import RankedPlay, Searcher, handed_over

if TYPE_CHECKING:
    from nardy.analysis.rollout import Rollout

__all__ = [
    "MARKS",
    "DecisionAnalysis",
    "GameAnalysis",
    "MatchOutcome",
    "PlayerStats",
    "analyse_game",
    "mark",
]

MARKS: tuple[tuple[float, str], ...] = ((0.16, "blunder"), (0.08, "error"), (0.04, "doubtful"))
"""gnubg's thresholds (``arSkillLevel``: very bad 0.16, bad 0.08, doubtful 0.04) on the equity
lost, normalised to the cube."""
PR_FACTOR = 500.0
"""gnubg's performance rating: the mean error per decision × 500."""


def mark(loss: float) -> str | None:
    """``blunder``, ``error``, ``doubtful`` or None for an equity loss."""
    for threshold, name in MARKS:
        if loss >= threshold - 1e-12:
            return name
    return None


@dataclass(frozen=True, slots=True)
class DecisionAnalysis:
    """One decision of the game."""

    number: int
    player: int
    """Colour (0 White, 1 Black)."""
    kind: str
    """``play``, ``double`` (double or roll) or ``take`` (take, drop or beaver)."""
    position: str
    """The position id, from the deciding player's side."""
    played: str
    best: str
    equity_played: float
    equity_best: float
    loss: float
    """Equity lost against the best (normalised to the cube; cubeless for plays)."""
    counted: bool
    """Whether it counts in the error rate (an unforced play, a cube action taken or missed)."""
    segment: str = ""
    dice: tuple[int, ...] = ()
    choices: int = 1
    luck: float | None = None
    """The luck of the roll just made (points, × the cube), on the segment that follows it."""
    ranking: tuple[RankedPlay, ...] = ()
    cube: CubeAnalysis | None = None
    match_luck: float | None = None
    """In a match game with a match equity table: the same luck in match equity (``2·MWC − 1``,
    :class:`MatchOutcome`), what the roll did to the mover's chance of winning the match."""
    rollout: Rollout | None = None
    """The decision rolled out (``nardy analyze --rollout``: :mod:`nardy.analysis.rollout_errors`),
    or None."""

    @property
    def mark(self) -> str | None:
        return mark(self.loss) if self.counted else None

    def to_json(self, top: int = 5) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "player": COLOURS[self.player],
            "kind": self.kind,
            "position": self.position,
            "played": self.played,
            "best": self.best,
            "equity_played": round(self.equity_played, 5),
            "equity_best": round(self.equity_best, 5),
            "loss": round(self.loss, 5),
            "mark": self.mark,
        }
        if self.kind == "play":
            out.update(segment=self.segment, dice=list(self.dice), choices=self.choices)
            out["ranking"] = [
                {
                    "play": r.text,
                    "equity": round(r.equity, 5),
                    "ply": r.ply,
                    "loss": round(r.loss, 5),
                }
                for r in self.ranking[:top]
            ]
        if self.luck is not None:
            out["luck"] = round(self.luck, 5)
        if self.match_luck is not None:
            out["match_luck"] = round(self.match_luck, 5)
        if self.cube is not None:
            out["cube"] = {
                "no_double": round(self.cube.no_double, 5),
                "double_take": round(self.cube.double_take, 5),
                "double_pass": round(self.cube.double_pass, 5),
                "proper": self.cube.best,
            }
            if self.cube.mwc is not None:
                out["cube"]["mwc"] = [round(x, 5) for x in self.cube.mwc]
        if self.rollout is not None:
            out["rollout"] = self.rollout.played_json(self.played)
        return out


@dataclass(slots=True)
class PlayerStats:
    """One player's numbers over one or more games."""

    name: str
    decisions: int = 0
    """Decisions counted in the error rate."""
    total_loss: float = 0.0
    marks: dict[str, int] = field(default_factory=lambda: {name: 0 for _, name in MARKS})
    luck: float = 0.0
    """Sum of the luck of his rolls (points)."""
    points: float = 0.0
    """Net points won."""
    adjusted: float = 0.0
    """Net points minus his luck plus the opponent's."""
    games: int = 0
    match_result: float | None = None
    """A match game's result in match equity (:class:`MatchOutcome`): what the game did to his
    chance of winning the match, ``2·(MWC after − MWC before)``; None in money play."""
    match_luck: float | None = None
    """The luck of his rolls in match equity (None in money play, and where the variant has no
    match equity table)."""
    match_adjusted: float | None = None
    """``match_result`` minus his match luck plus the opponent's."""
    quantity_sums: dict[str, float] = field(default_factory=dict)
    """By registered quantity (:mod:`nardy.analysis.quantities`): the sum over his decisions."""
    quantity_counts: dict[str, int] = field(default_factory=dict)
    """By registered quantity: how many of his decisions counted for it."""

    def quantity(self, name: str) -> float | None:
        """The mean of the registered quantity ``name`` over his decisions (None: none counted)."""
        count = self.quantity_counts.get(name, 0)
        return self.quantity_sums[name] / count if count else None

    @property
    def error_rate(self) -> float:
        """Mean equity lost per counted decision."""
        return self.total_loss / self.decisions if self.decisions else 0.0

    @property
    def pr(self) -> float:
        return PR_FACTOR * self.error_rate

    def add(self, other: PlayerStats, *, points: bool = True) -> None:
        """Add ``other``'s numbers; without ``points`` only its games and decisions (a match
        game's points, luck in points and adjusted points are not what a match is played for:
        :mod:`nardy.analysis.stats` sums its match equity per match instead)."""
        self.decisions += other.decisions
        self.total_loss += other.total_loss
        for key, count in other.marks.items():
            self.marks[key] = self.marks.get(key, 0) + count
        for key, total in other.quantity_sums.items():
            self.quantity_sums[key] = self.quantity_sums.get(key, 0.0) + total
            self.quantity_counts[key] = (
                self.quantity_counts.get(key, 0) + other.quantity_counts[key]
            )
        if points:
            self.luck += other.luck
            self.points += other.points
            self.adjusted += other.adjusted
        self.games += other.games

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "games": self.games,
            "decisions": self.decisions,
            "error_rate": round(self.error_rate, 5),
            "pr": round(self.pr, 2),
            "marks": dict(self.marks),
            "luck": round(self.luck, 4),
            "points": self.points,
            "luck_adjusted": round(self.adjusted, 4),
        }
        if self.match_result is not None:  # a match game's (money games' JSON is unchanged)
            out["match_result"] = round(self.match_result, 5)
            out["match_luck"] = None if self.match_luck is None else round(self.match_luck, 5)
            out["match_luck_adjusted"] = (
                None if self.match_adjusted is None else round(self.match_adjusted, 5)
            )
        if self.quantity_sums:  # only where a quantity is registered: outputs stay as they were
            digits = {q.name: q.digits for q in quantities()}
            means = {name: self.quantity(name) for name in self.quantity_sums}
            out["quantities"] = {
                name: None if mean is None else round(mean, digits.get(name, 3))
                for name, mean in means.items()
            }
        return out


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """A match game in match terms, White's view.

    A match is played for the match, not for points: a game's points add uncapped
    (:meth:`~nardy.core.match.Match.add_result`), so a 3-point match can see a game "win 64",
    and points per game mean nothing there.
    Match equity (ME) is ``2·MWC − 1``, MWC the chance to win the match from the variant's match
    equity table (:func:`~nardy.analysis.met.table_for`): +1 a match won, −1 one lost, 0 at an
    even start, the unit ``nardy play --match`` reports. A game's result is the ME it moved:
    ``equity_after − equity_before``; over the games of a whole match these add up to its +1 or
    −1 (each game's after is the next one's before), so the luck-adjusted figure, in the same
    unit, estimates the match equity per match.

    Without a table (per-checker stakes, the tavli cycle: :func:`~nardy.analysis.met.table_for`)
    only the match's end is known: the game that ends it moves the ME by ±1, the others by 0
    (so a whole match from 0-0 still adds to ±1), and the luck has no match measure (None).
    """

    match_id: str
    length: int
    score: tuple[int, int]
    """The score before the game (White, Black)."""
    crawford: bool
    ends_match: bool
    """The game's winner reached the match length."""
    rated: bool
    """Whether the variant has a match equity table (else only the end is known)."""
    equity_before: float | None
    """White's match equity before the game (None without a table, but at 0-0: 0)."""
    equity_after: float | None
    """White's match equity after it (None without a table, but at the match's end: ±1)."""
    result: float
    """White's match result of the game: ``equity_after − equity_before`` (module note)."""

    def to_json(self) -> dict[str, Any]:
        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, 5)

        return {
            "match_id": self.match_id,
            "length": self.length,
            "score": list(self.score),
            "crawford": self.crawford,
            "ends_match": self.ends_match,
            "rated": self.rated,
            "equity_before": rounded(self.equity_before),
            "equity_after": rounded(self.equity_after),
            "result": round(self.result, 5),
        }


class _MatchTerms:
    """The match equity of a match game's scores, from one colour's side (:class:`MatchOutcome`):
    before the game, and after it once a side has won ``points``."""

    def __init__(self, info: MatchInfo, table: MatchEquityTable | None) -> None:
        self.info = info
        self.table = table if table is not None and info.length <= MAX_AWAY else None

    def before(self, colour: int) -> float | None:
        info, table = self.info, self.table
        if table is None:
            return 0.0 if info.score == (0, 0) else None
        # With a side 1-away the game is the Crawford game or after it (post-Crawford).
        mwc = table.mwc(info.away(colour), info.away(1 - colour), crawford_done=not info.crawford)
        return 2.0 * mwc - 1.0

    def after(self, colour: int, winner: int | None, points: int) -> float | None:
        """``colour``'s ME once ``winner`` has won ``points`` (None: no one, a drawn or unfinished
        game, which moves no score)."""
        info, table = self.info, self.table
        me, them = info.away(colour), info.away(1 - colour)
        if winner == colour:
            me -= points
        elif winner is not None:
            them -= points
        if me <= 0 or them <= 0:
            return 1.0 if me <= 0 else -1.0
        if table is None:
            return None if winner is not None or info.score != (0, 0) else 0.0
        # The next game is post-Crawford once this one was the Crawford game or after it; a
        # game before it that leaves a side 1-away makes the next one the Crawford game.
        done = info.crawford or info.post_crawford
        return 2.0 * table.after(me, them, crawford_done=done) - 1.0

    def luck_rate(self, colour: int, cube: int) -> float | None:
        """ME per unit of cubeless equity (per cube) for ``colour`` with the cube at ``cube``:
        ``W − L`` with ``W``, ``L`` his MWC after winning, losing the cube's points (half the
        same difference in ME). The cubeless equity ``e`` maps to the MWC ``L + (W − L)·(e +
        1)/2`` (gnubg's eq2mwc), so a roll's luck, an equity minus its mean over the rolls, maps
        by this factor and keeps its mean of 0: still a control variate. Gammons count at the
        same rate (the map is linear), an approximation of their match worth that leaves the
        mean at 0. None without a table."""
        if self.table is None:
            return None
        win = self.after(colour, colour, cube)
        loss = self.after(colour, 1 - colour, cube)
        assert win is not None and loss is not None
        return (win - loss) / 2.0


@dataclass(slots=True)
class GameAnalysis:
    """The analysis of one game."""

    label: str
    variant: str
    ply: int
    decisions: list[DecisionAnalysis]
    players: tuple[PlayerStats, PlayerStats]
    """White's and Black's numbers."""
    winner: int | None
    points: int
    complete: bool
    """Whether the record was replayed to its end."""
    match: MatchOutcome | None = None
    """A match game's result in match terms (None: money play, or a match whose score the
    record does not give)."""

    def to_json(self, *, decisions: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game": self.label,
            "variant": self.variant,
            "ply": self.ply,
            "winner": None if self.winner is None else COLOURS[self.winner],
            "points": self.points,
            "complete": self.complete,
            "players": {COLOURS[c]: self.players[c].to_json() for c in (0, 1)},
        }
        if self.match is not None:
            out["match"] = self.match.to_json()
        if decisions:
            out["decisions"] = [d.to_json() for d in self.decisions]
        return out


def analyse_game(
    game_input: GameInput,
    searcher: Searcher,
    ply: int = 0,
    *,
    luck_ply: int | None = 0,
    on_decision: Callable[[], None] | None = None,
) -> GameAnalysis:
    """Replay ``game_input`` and analyse every decision at ``ply`` and every roll's luck at
    ``luck_ply`` (None: no luck, for error rates alone, which it then costs several times less);
    :class:`RecordError` if the record does not replay."""
    variant = game_input.variant
    if searcher.variant.name != variant.name or searcher.variant.options != variant.options:
        raise RecordError(f"{game_input.label}: the searcher is for another variant")
    label = game_input.label
    try:
        run = Replay(game_input.record, auto_forced=False, variant=variant)
    except RecordError as error:
        raise RecordError(f"{label}: {error}") from None
    game = run.game
    analyse_cubes = game_input.rate_cube
    terms = None if game_input.match is None else _MatchTerms(game_input.match, table_for(variant))
    decisions: list[DecisionAnalysis] = []
    luck = [0.0, 0.0]
    match_luck = [0.0, 0.0]
    complete = True
    steps = iter(run)
    while True:
        try:
            step = next(steps, None)
        except RecordError as error:
            raise RecordError(f"{label}: {error}") from None
        if step is None:
            break
        decision = step.decision
        player = decision.player
        try:
            if isinstance(decision, PlayDecision):
                if step.answer is None:
                    complete = False
                    break
                per_cube = (
                    None if luck_ply is None else _roll_luck(game, searcher, decision, luck_ply)
                )
                roll_luck = None if per_cube is None else per_cube * game.cube.value
                roll_match_luck = None
                if roll_luck is not None:
                    luck[player] += roll_luck
                rate = None if terms is None else terms.luck_rate(player, game.cube.value)
                if per_cube is not None and rate is not None:
                    roll_match_luck = per_cube * rate
                    match_luck[player] += roll_match_luck
                # A progression's first stage follows its roll; a later one, the stage before.
                first_stage = not game.events or game.events[-1].kind != "play"
                decisions.append(
                    _play(
                        decision,
                        str(step.text),
                        searcher,
                        ply,
                        len(decisions) + 1,
                        roll_luck,
                        first_stage,
                        _handed_after(game, decision),
                        roll_match_luck,
                    )
                )
            elif isinstance(decision, DoubleDecision):
                if step.answer is None:
                    complete = False
                    break
                doubled = step.answer is True
                if analyse_cubes:
                    decisions.append(
                        _double(
                            game,
                            decision,
                            searcher,
                            ply,
                            doubled,
                            len(decisions) + 1,
                            game_input.match,
                        )
                    )
            else:
                if step.answer is None:
                    raise RecordError(f"{label}: a double without its answer")
                if analyse_cubes and not decision.after_beaver:
                    decisions.append(
                        _take(
                            game,
                            decision,
                            searcher,
                            ply,
                            str(step.answer),
                            len(decisions) + 1,
                            game_input.match,
                        )
                    )
        except NardyError as error:
            if isinstance(error, RecordError):
                raise
            raise RecordError(f"{label}: decision {len(decisions)}: {error}") from None
        if on_decision is not None:
            on_decision()
    stats = (
        PlayerStats(game_input.players[0], games=1),
        PlayerStats(game_input.players[1], games=1),
    )
    for item in decisions:
        if item.counted:
            own = stats[item.player]
            own.decisions += 1
            own.total_loss += item.loss
            name = item.mark
            if name is not None:
                own.marks[name] += 1
    for quantity in quantities():
        for own in stats:
            own.quantity_sums[quantity.name] = 0.0
            own.quantity_counts[quantity.name] = 0
        for item in decisions:
            value = quantity.of_decision(item)
            if value is not None:
                own = stats[item.player]
                own.quantity_sums[quantity.name] += value
                own.quantity_counts[quantity.name] += 1
    winner, points = game_input.winner, game_input.points
    white_points = 0 if winner is None else (points if winner == 0 else -points)
    for colour in (0, 1):
        sign = 1 if colour == 0 else -1
        stats[colour].luck = luck[colour]
        stats[colour].points = sign * white_points
        stats[colour].adjusted = sign * white_points - luck[colour] + luck[1 - colour]
    outcome = None
    if terms is not None:
        outcome = _match_outcome(terms, winner, points)
        rated = outcome.rated and luck_ply is not None
        for colour in (0, 1):
            sign = 1 if colour == 0 else -1
            own = stats[colour]
            own.match_result = sign * outcome.result + 0.0  # + 0.0: no -0.0 for Black's 0
            if rated:
                own.match_luck = match_luck[colour]
                own.match_adjusted = own.match_result - match_luck[colour] + match_luck[1 - colour]
    return GameAnalysis(
        label, variant.name, ply, decisions, stats, winner, points, complete, outcome
    )


def _match_outcome(terms: _MatchTerms, winner: int | None, points: int) -> MatchOutcome:
    """The game in match terms, White's view (:class:`MatchOutcome`)."""
    info = terms.info
    before, after = terms.before(0), terms.after(0, winner, points)
    ends = winner is not None and info.score[winner] + points >= info.length
    if before is not None and after is not None:
        result = after - before
    else:  # no table: only the match's end moves the equity (MatchOutcome)
        result = 0.0 if not ends else (1.0 if winner == 0 else -1.0)
    return MatchOutcome(
        info.match_id,
        info.length,
        info.score,
        info.crawford,
        ends,
        terms.table is not None,
        before,
        after,
        result,
    )


def _roll_luck(game: Game, searcher: Searcher, decision: PlayDecision, ply: int) -> float | None:
    """The luck of the roll this segment starts, per unit of the cube (the caller weighs it by
    the cube in points, or by the score's rate in match equity), or None (a later segment of the
    turn, or steps transferred).

    The first roll after an opening throw also carries the throw's luck: who starts is decided by
    it (50/50, the same start position either way), so the starter's luck is his whole value
    after the roll — its mean over who starts is 0 — whether he plays the thrown numbers
    (backgammon) or rolls anew (long nardy): the value's mean, his pre-roll equity, is then the
    throw's luck and the rest the roll's."""
    events = game.events
    last = events[-1] if events else None
    if last is None or last.kind != "roll" or last.player != decision.player:
        return None
    a, b = last.data["dice"]
    if len(events) >= 2 and events[-2].kind == "opening":
        return searcher.luck_values(decision.position, ply)[(min(a, b), max(a, b))]
    return searcher.throw_luck(decision.position, (a, b), ply)


def _handed_after(game: Game, decision: PlayDecision) -> Transfer:
    """For a segment of steps handed to the mover, the groups handed to him that he plays after
    it, before his roll (:func:`~nardy.core.turnplan.transfer_groups`); () for any other."""
    segment = decision.segment
    if segment.kind != "transfer":
        return NO_TRANSFER
    handed = next(e for e in reversed(game.events) if e.kind == "transfer")
    groups = transfer_groups([(v, c) for v, c in handed.data["steps"]])
    return tuple((v, c) for v, c in groups if v > segment.dice[0])


def _play(
    decision: PlayDecision,
    answer: str,
    searcher: Searcher,
    ply: int,
    number: int,
    luck: float | None,
    first_stage: bool = True,
    then: Transfer = NO_TRANSFER,
    match_luck: float | None = None,
) -> DecisionAnalysis:
    plays = decision.plays
    chosen = plays.find(answer)
    index = plays.index_of(chosen.result)
    segment = decision.segment
    handed = [
        handed_over(
            searcher.variant,
            segment.dice,
            segment.kind,
            plays.dice_used,
            start=decision.position,
            result=play.result,
            first_stage=first_stage,
        )
        for play in plays
    ]
    ranking = searcher.rank(
        decision.position,
        segment.dice,
        ply,
        include=index,
        handed_by_play=handed,
        kind=segment.kind,
        then=then,
    )
    mine = next(r for r in ranking if r.index == index)
    best = ranking[0]
    return DecisionAnalysis(
        number,
        decision.player,
        "play",
        decision.position.id(),
        chosen.text,
        best.text,
        mine.equity,
        best.equity,
        max(0.0, best.equity - mine.equity),
        len(plays) > 1,
        decision.segment.description,
        decision.segment.dice,
        len(plays),
        luck,
        tuple(ranking),
        match_luck=match_luck,
    )


def _cube_of(
    game: Game,
    searcher: Searcher,
    position: Any,
    ply: int,
    owner: str,
    doubler: int,
    match: MatchInfo | None,
    cube_value: int,
) -> CubeAnalysis:
    """The cube decision of ``doubler``, on roll in ``position`` (his view) with the cube at
    ``cube_value`` before the double: money play, or match play at the score of ``match``."""
    probabilities = searcher.evaluator.probabilities(position)
    if probabilities is None:
        probabilities = probabilities_from_equity(searcher.equity(position, ply))
    if match is not None:
        score = MatchScore(match.away(doubler), match.away(1 - doubler), match.post_crawford)
        return analyse_match_cube(
            probabilities,
            score,
            cube_value,
            "centre" if owner == "centre" else "me",
            table_for(game.variant),
        )
    centred = owner == "centre"
    return analyse_cube(
        probabilities, "centre" if centred else "me", jacoby=game.cube_settings.jacoby
    )


def _double(
    game: Game,
    decision: DoubleDecision,
    searcher: Searcher,
    ply: int,
    doubled: bool,
    number: int,
    match: MatchInfo | None,
) -> DecisionAnalysis:
    owner = "centre" if decision.cube.owner is None else "me"
    cube = _cube_of(
        game, searcher, decision.position, ply, owner, decision.player, match, decision.cube.value
    )
    loss = cube.double_loss(doubled)
    if_doubled = min(cube.double_take, cube.double_pass)
    return DecisionAnalysis(
        number,
        decision.player,
        "double",
        decision.position.id(),
        "double" if doubled else "roll",
        "double" if cube.should_double else "roll",
        if_doubled if doubled else cube.no_double,
        max(cube.no_double, if_doubled),
        loss,
        doubled or loss > 0,
        cube=cube,
    )


def _take(
    game: Game,
    decision: TakeDecision,
    searcher: Searcher,
    ply: int,
    answer: str,
    number: int,
    match: MatchInfo | None,
) -> DecisionAnalysis:
    # The doubler is on roll: his side of the board is the taker's flipped.
    doubler_view = searcher.variant.flip(decision.position)
    owner = "centre" if decision.cube.owner is None else "me"
    cube = _cube_of(
        game, searcher, doubler_view, ply, owner, 1 - decision.player, match, decision.cube.value
    )
    taken = answer != "drop"
    take, drop = -cube.double_take, -cube.double_pass
    return DecisionAnalysis(
        number,
        decision.player,
        "take",
        decision.position.id(),
        answer,
        "take" if cube.should_take else "drop",
        take if taken else drop,
        max(take, drop),
        cube.take_loss(taken),
        True,
        cube=cube,
    )
