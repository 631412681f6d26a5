"""Checking stored games: re-play one record through the kernel, or audit a whole tournament.

* :func:`replay_record` re-plays one game from its record alone: the recorded seed must give
  the recorded dice, the recorded decisions applied to a fresh :class:`~nardy.core.game.Game`
  must give every recorded event, and the recorded outcome (winner, points, multiplier,
  termination, who forfeited) and fault counts must be what that re-played game allows.
* :func:`check_row` compares the columns of a stored game, the ones the standings are computed
  from, with its record.
* :func:`verify_store` and :func:`verify_records` audit a tournament whose seed has been revealed
  (:mod:`nardy.arena.records.audit`): the commitment, every game's seed and every roll re-derived from
  the revealed seed (``docs/audit.md``), the setup of every match game, every game re-played,
  and every stored column.

Every problem is one line (``GAME_ID: what differs``); nothing here raises for a bad record.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nardy.arena.competition.schedule import (
    DefinitionError,
    TournamentDef,
    build_schedule,
    derive_seed,
)
from nardy.arena.records import audit
from nardy.arena.records.storage import GameRow, StorageError, Store, stored_tournament
from nardy.core.dice import SeededDice
from nardy.core.errors import NardyError
from nardy.core.game import (
    COLOURS,
    WHITE,
    DoubleDecision,
    Game,
    GameResult,
    PlayDecision,
    cube_settings_for,
)
from nardy.core.match import Match
from nardy.core.plugins import load_variant
from nardy.core.record import GameRecord, RecordError, Replay, from_json, outcome_of
from nardy.core.variant import Variant

__all__ = [
    "ReplayReport",
    "VerifyReport",
    "check_row",
    "replay_record",
    "verify_game",
    "verify_records",
    "verify_store",
]

FORFEITS = ("time_forfeit", "bot_failure")

_UNIT_ID = re.compile(
    r"^(?P<pool>[^:]+):(?P<a>[^~:]+)~(?P<b>[^~:]+):(?P<round>\d{4,})(?P<leg>[ab])$"
)


@functools.lru_cache(maxsize=64)
def _variant_cached(name: str, options_json: str) -> Variant:
    return load_variant(name, json.loads(options_json))


def cached_variant(name: str, options: Mapping[str, Any]) -> Variant:
    """The variant with these options, loaded once (a tournament replays many games of each)."""
    return _variant_cached(name, json.dumps(dict(options), sort_keys=True))


# ==================================================================================================
# One record
# ==================================================================================================


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """The outcome of re-playing a stored game against its record."""

    game_id: str
    ok: bool
    events: int
    decisions: int
    message: str
    rolls: int = 0
    """Rolls of the record regenerated from its seed."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _decision_kind(decision: object) -> str:
    if isinstance(decision, PlayDecision):
        return "play"
    return "double" if isinstance(decision, DoubleDecision) else "take"


def replay_record(record: Mapping[str, Any]) -> ReplayReport:
    """Re-play a game from its record and check the record against it (see the module doc).

    The kernel's log is re-played by the one replayer (:class:`nardy.core.record.Replay`);
    each decision the game asks must be the arena's next decision entry, of that player, of
    that kind and with that answer."""
    game_id = str(record.get("game_id", "?"))
    try:
        typed = from_json(record)
        variant = cached_variant(typed.variant, typed.options)
    except (NardyError, TypeError, ValueError) as exc:
        return ReplayReport(game_id, False, 0, 0, f"the record is incomplete: {exc}")
    if not typed.is_arena:
        return ReplayReport(game_id, False, 0, 0, "the record is incomplete: no game_id")
    applied = 0

    def fail(message: str, n_events: int = 0) -> ReplayReport:
        return ReplayReport(game_id, False, n_events, applied, message)

    if typed.seed is not None:
        dice = SeededDice(int(typed.seed))
        for i, want in enumerate(typed.rolls):
            got = dice.roll()
            if want != got:
                return fail(
                    f"seed {typed.seed} gives roll {i + 1} as {list(got)}, the record has "
                    f"{list(want)}"
                )
    answers = typed.answers
    try:
        run = Replay(typed, variant=variant)
        steps = iter(run)
        for n, entry in enumerate(answers):
            if entry.answer is None:
                if n != len(answers) - 1:
                    return fail(f"decision {entry.seq} has no answer but is not the last")
                break  # a fault that forfeited the game: nothing was applied
            if entry.fallback and entry.fault is None:
                return fail(f"decision {entry.seq}: a fallback answer without a fault")
            step = next(steps, None)
            if step is None:
                return fail(f"decision {entry.seq} comes after the end of the game")
            kind = _decision_kind(step.decision)
            player = COLOURS[step.decision.player]
            if entry.kind != kind or entry.player != step.decision.player:
                return fail(
                    f"decision {entry.seq}: the record has {COLOURS[entry.player]} "
                    f"{entry.kind}, the game asks {player} {kind}"
                )
            if step.answer is None:
                return fail(f"decision {entry.seq}: the game's log ends before {player}'s answer")
            logged = step.text
            if entry.answer != logged:
                return fail(
                    f"decision {entry.seq}: {player} answered {entry.answer!r}, the game's log "
                    f"has {logged!r}"
                )
            applied += 1
        for step in steps:  # applies the last answer; the log must answer nothing more
            if step.answer is not None:
                return fail(
                    f"the game's log answers decision {step.number} ({COLOURS[step.decision.player]} "
                    f"{_decision_kind(step.decision)}), the record's decisions do not"
                )
        run.check()
    except RecordError as exc:
        return fail(f"replaying failed: {exc}")
    n_events = len(typed.events)
    problem = _check_outcome(typed, run.game) or _check_faults(typed)
    if problem:
        return fail(problem, n_events)
    return ReplayReport(
        game_id,
        True,
        n_events,
        applied,
        f"{game_id}: {n_events} events and {applied} decisions re-played; the events, the "
        "result and the faults agree with the record",
        len(typed.rolls),
    )


def _check_outcome(record: GameRecord, game: Game) -> str | None:
    """What the recorded outcome says against the re-played game, or None if it fits."""
    outcome = record.outcome
    if outcome is None:
        return "the result is None, not a table"
    termination = outcome.termination
    winner = None if outcome.winner is None else COLOURS[outcome.winner]
    said = (winner, outcome.points, outcome.multiplier, termination)
    result = game.result
    if result is not None:
        ended = outcome_of(result)  # plakoto's mother end and draw included
        want: tuple[Any, ...] = (
            None if ended.winner is None else COLOURS[ended.winner],
            ended.points,
            ended.multiplier,
            ended.termination,
        )
        if said != want:
            return (
                f"the result says {_outcome_text(said)}, the re-played game {_outcome_text(want)}"
            )
        return None
    if termination == "aborted":
        if outcome.winner is not None or outcome.points:
            return f"an aborted game with a winner or points: {_outcome_text(said)}"
        return None
    if termination not in FORFEITS:
        return f"the game is not over, yet the record ends it by {termination!r}"
    decision = game.decision
    assert decision is not None
    loser = decision.player
    answers = record.answers
    last = answers[-1] if answers else None
    if last is not None and last.answer is None:
        fault = last.fault or {}
        if last.player != loser:
            return (
                f"the fault that ended the game is {COLOURS[last.player]}'s, not the player to move"
            )
        if (termination == "time_forfeit") != (fault.get("kind") == "timeout"):
            return f"a {fault.get('kind')} fault ends the game by {termination}"
    elif not answers and "start_game" in outcome.reason:
        # An in-process bot that failed before the first decision: the loser is in the reason.
        if outcome.winner is None:
            return f"a forfeit without a winner: {_outcome_text(said)}"
        loser = 1 - outcome.winner
    elif termination != "bot_failure":
        return f"a {termination} without a fault in the game"
    want = (COLOURS[1 - loser], game.cube.value, 1, termination)
    if said != want:
        return f"the result says {_outcome_text(said)}, the forfeit gives {_outcome_text(want)}"
    loser_name = str((record.players[loser].seat or {}).get("name", ""))
    if loser_name and not outcome.reason.startswith(loser_name):
        return f"the forfeit's reason {outcome.reason!r} does not name {loser_name}"
    return None


def _outcome_text(o: tuple[Any, ...]) -> str:
    winner, points, multiplier, termination = o
    return f"winner {winner}, {points} points (x{multiplier}), {termination}"


def _check_faults(record: GameRecord) -> str | None:
    """The per-colour fault counts must be the faults of the decisions, colour by colour."""
    counted: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for entry in record.answers:
        if entry.fault is not None:
            kind = str(entry.fault.get("kind"))
            side = counted[entry.player]
            side[kind] = side.get(kind, 0) + 1
    faults = record.faults or ({}, {})
    for colour, kinds in enumerate(counted):
        stated = {k: v for k, v in faults[colour].items() if v}
        if stated != kinds:
            return (
                f"{COLOURS[colour].lower()}'s faults are recorded as {stated}, its decisions "
                f"show {kinds}"
            )
    return None


def check_row(row: GameRow, record: Mapping[str, Any]) -> list[str]:
    """Differences between a stored game's columns and its record (one line each)."""
    problems: list[str] = []
    try:
        expected = GameRow.record_columns(from_json(record))
    except RecordError as exc:
        return [f"{row.game_id}: the stored record cannot be read: {exc}"]
    pairing = _UNIT_ID.match(str(record.get("unit_id")))
    if pairing is not None:  # a malformed unit id is reported by the schedule checks
        expected["a"], expected["b"] = pairing["a"], pairing["b"]
    for column, want in expected.items():
        got = getattr(row, column)
        if got != want:
            problems.append(
                f"{row.game_id}: the stored {column} is {got!r}, its record says {want!r}"
            )
    return problems


# ==================================================================================================
# A tournament
# ==================================================================================================


@dataclass(slots=True)
class VerifyReport:
    """The audit of one tournament: what was checked, and every mismatch (one line each)."""

    tournament_id: str
    games: int = 0
    rolls: int = 0
    decisions: int = 0
    problems: list[str] = field(default_factory=list)
    dice: audit.DiceAudit | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        what = f"{self.games} games, {self.rolls} rolls, {self.decisions} decisions"
        if self.ok and self.dice is not None and self.dice.revealed:
            return (
                f"OK {self.tournament_id}: {what} re-derived from the revealed seed and re-played"
            )
        if self.ok:
            why = (
                "the tournament was stored before dice commitments existed"
                if self.dice is None
                else "the seed is not revealed yet"
            )
            return (
                f"OK {self.tournament_id}: {what} re-played on each record's own dice ({why}, "
                "so the rolls are not checked against a revealed seed)"
            )
        return f"FAILED {self.tournament_id}: {len(self.problems)} mismatches ({what} checked)"

    def to_json(self) -> dict[str, Any]:
        return {
            "tournament_id": self.tournament_id,
            "ok": self.ok,
            "games": self.games,
            "rolls": self.rolls,
            "decisions": self.decisions,
            "problems": list(self.problems),
            "dice": None if self.dice is None else self.dice.to_json(),
        }


@dataclass(frozen=True, slots=True)
class _Slot:
    """Where a game sits in the schedule, as the verifier derives it."""

    pool: str
    a: str
    b: str
    round: int
    leg: int
    game_no: int
    unit_id: str

    @property
    def white(self) -> str:
        return self.a if self.leg == 0 else self.b

    @property
    def black(self) -> str:
        return self.b if self.leg == 0 else self.a


def game_seed(seed: int, slot: _Slot, duplicate: bool) -> int:
    """The dice seed of a game, from the tournament seed (``docs/audit.md``)."""
    unit = derive_seed(seed, "dice", slot.pool, slot.round)
    if not duplicate:
        unit = derive_seed(unit, slot.a, slot.b, slot.leg)
    return unit if slot.game_no == 1 else derive_seed(unit, "game", slot.game_no)


def _slot_of(record: Mapping[str, Any]) -> _Slot | str:
    """The schedule position a record claims, checked against its own ids; or the problem."""
    unit_id = str(record.get("unit_id"))
    m = _UNIT_ID.match(unit_id)
    if m is None:
        return f"unit id {unit_id!r} is not POOL:A~B:ROUNDLEG"
    game_no = record.get("game_no")
    slot = _Slot(
        pool=m["pool"],
        a=m["a"],
        b=m["b"],
        round=int(m["round"]) - 1,
        leg="ab".index(m["leg"]),
        game_no=game_no if isinstance(game_no, int) and not isinstance(game_no, bool) else -1,
        unit_id=unit_id,
    )
    claims = {
        "pool": record.get("pool"),
        "round": record.get("round"),
        "leg": record.get("leg"),
        "white": (record.get("white") or {}).get("bot_id"),
        "black": (record.get("black") or {}).get("bot_id"),
    }
    for key, value in claims.items():
        if getattr(slot, key) != value:
            return f"the record's {key} is {value!r}, its unit id {unit_id} says {getattr(slot, key)!r}"
    if slot.game_no < 1:
        return f"game_no {record.get('game_no')!r} is not a number >= 1"
    want_id = unit_id if slot.game_no == 1 and record.get("game_id") == unit_id else None
    if want_id is None:
        want_id = f"{unit_id}.g{slot.game_no}"
    if record.get("game_id") != want_id:
        return f"game id {record.get('game_id')!r} does not fit unit {unit_id}, game {slot.game_no}"
    return slot


class _Audit:
    """The checks shared by :func:`verify_store` and :func:`verify_records`."""

    def __init__(self, report: VerifyReport, seed: int, duplicate: bool, commitment: str) -> None:
        self.report = report
        self.seed = seed
        self.duplicate = duplicate
        self.commitment = commitment
        self.units: dict[str, list[tuple[_Slot, Mapping[str, Any]]]] = {}

    def problem(self, game_id: str, message: str) -> None:
        self.report.problems.append(f"{game_id}: {message}")

    def game(self, record: Mapping[str, Any], slot: _Slot) -> None:
        game_id = str(record.get("game_id"))
        self.report.games += 1
        stamp = record.get("dice_commitment") or {}
        if stamp.get("commitment") != self.commitment or stamp.get("scheme") != audit.SCHEME:
            self.problem(game_id, f"the record's dice commitment is {stamp or None}")
        if bool(stamp.get("duplicate", self.duplicate)) != self.duplicate:
            self.problem(game_id, "the record's duplicate flag differs from the tournament's")
        seed = game_seed(self.seed, slot, self.duplicate)
        if record.get("seed") != seed:
            self.problem(
                game_id,
                f"the record's seed is {record.get('seed')}, the revealed seed gives {seed}",
            )
        rolls = (record.get("game") or {}).get("rolls") or []
        dice = SeededDice(seed)
        for i, roll in enumerate(rolls):
            want = list(dice.roll())
            if roll != want:
                self.problem(game_id, f"roll {i + 1} is {roll}, the revealed seed gives {want}")
                break
        else:
            self.report.rolls += len(rolls)
        bot_seeds = [derive_seed(seed, "bot", slot.white), derive_seed(seed, "bot", slot.black)]
        setup = record.get("setup") or {}
        if setup.get("bot_seeds") != bot_seeds:
            self.problem(game_id, f"the bots' seeds are {setup.get('bot_seeds')}, not {bot_seeds}")
        replay = replay_record(record)
        self.report.decisions += replay.decisions
        if not replay.ok:
            self.problem(game_id, replay.message.removeprefix(f"{game_id}: "))
        self.units.setdefault(slot.unit_id, []).append((slot, record))

    def matches(self, variants: Mapping[str, tuple[Variant, int | None]]) -> dict[str, bool]:
        """Check the setup of every game unit by unit (who starts, the cube, the match score);
        returns whether each unit is complete."""
        done: dict[str, bool] = {}
        for unit_id, games in self.units.items():
            games.sort(key=lambda g: g[0].game_no)
            pool = games[0][0].pool
            if pool not in variants:
                self.problem(unit_id, f"pool {pool!r} is not one of the tournament's")
                continue
            variant, length = variants[pool]
            # A match variant (tavli, RULES.md §3.12.3) cycles its games' variants.
            match = Match.of(variant, length) if length else None
            finished = False
            for n, (slot, record) in enumerate(games, start=1):
                game_id = str(record.get("game_id"))
                if slot.game_no != n:
                    self.problem(game_id, f"game {slot.game_no} of its unit, expected game {n}")
                    break
                if finished:
                    self.problem(game_id, "the unit was already decided before this game")
                    break
                played = match.game_variant if match is not None else variant
                if record.get("variant") != played.name:
                    self.problem(
                        game_id, f"the game is {record.get('variant')!r}, expected {played.name!r}"
                    )
                want = _setup(variant, match)
                setup = record.get("setup") or {}
                got = {
                    "starter": setup.get("starter"),
                    "cube": setup.get("cube"),
                    "length": (setup.get("match") or {}).get("length"),
                    "score": (setup.get("match") or {}).get("score"),
                    "crawford": (setup.get("match") or {}).get("crawford"),
                }
                for key, value in want.items():
                    if got[key] != value:
                        self.problem(game_id, f"setup {key} is {got[key]!r}, expected {value!r}")
                result = record.get("result") or {}
                winner = result.get("winner")
                if match is not None and result.get("termination") == "draw":
                    # A plakoto draw adds 0 and the match goes on (RULES.md §3.12.2, §3.12.3).
                    match.add_result(GameResult(WHITE, 0, 0, 1, "draw", draw=True))
                    finished = match.is_over
                elif winner not in COLOURS:
                    finished = True  # an aborted game ends its unit
                elif match is None:
                    finished = True
                else:
                    points = result.get("points")
                    match.add_result(
                        GameResult(COLOURS.index(winner), int(points or 0), 1, 1, "bear_off")
                    )
                    finished = match.is_over
            done[unit_id] = finished
        return done


def _setup(variant: Variant, match: Match | None) -> dict[str, Any]:
    """The setup the engine gives the next game of a unit (as ``Tournament._task`` does)."""
    if match is None:
        cube = cube_settings_for(variant, match_length=None)
        starter = WHITE if variant.rules.turn.opening == "white_starts" else None
        length, score, crawford = 0, [0, 0], False
    else:
        cube = match.cube_settings()
        starter = match.starter()
        length, score, crawford = match.length or 0, list(match.score), match.crawford_game
    return {
        "starter": starter,
        "cube": dataclasses.asdict(cube),
        "length": length,
        "score": score,
        "crawford": crawford,
    }


def _revealed(report: VerifyReport, dice: audit.DiceAudit | None) -> tuple[int, str] | None:
    if dice is None:
        report.problems.append(
            f"{report.tournament_id}: no dice commitment is stored (a tournament from before "
            "commitments); nothing can be verified"
        )
        return None
    report.dice = dice
    if not dice.revealed or dice.seed is None or dice.salt is None:
        report.problems.append(
            f"{report.tournament_id}: the seed is not revealed yet (the tournament has not "
            "ended); verify it once it has finished or was cancelled"
        )
        return None
    if not audit.matches(dice.seed, dice.salt, dice.commitment):
        report.problems.append(
            f"{report.tournament_id}: the revealed seed {dice.seed} and salt do not give the "
            f"commitment {dice.commitment}"
        )
        return None
    return dice.seed, dice.salt


def verify_store(store: Store, tournament_id: str | None = None) -> VerifyReport:
    """Audit a stored tournament (the most recently updated one if ``tournament_id`` is None)
    from its revealed seed; raises :class:`StorageError` only when it cannot be read at all."""
    row = stored_tournament(store, tournament_id)
    report = VerifyReport(row.tournament_id)
    try:
        definition = TournamentDef.from_json(row.definition)
    except (KeyError, TypeError, DefinitionError) as exc:
        report.problems.append(f"{row.tournament_id}: the stored definition is damaged: {exc}")
        return report
    revealed = _revealed(report, audit.public_dice(store, row.tournament_id))
    if revealed is None:
        return report
    seed, _ = revealed
    if definition.seed != seed:
        report.problems.append(
            f"{row.tournament_id}: the stored definition's seed {definition.seed} is not the "
            f"revealed seed {seed}"
        )
    if definition.tournament_id != row.tournament_id:
        report.problems.append(
            f"{row.tournament_id}: the stored definition gives the id {definition.tournament_id}"
        )
    assert report.dice is not None
    checks = _Audit(report, seed, definition.duplicate, report.dice.commitment)
    schedule = {u.unit_id: u for u in build_schedule(definition)}
    try:
        games = store.games(row.tournament_id, records=True)
    except StorageError as exc:
        report.problems.append(str(exc))
        return report
    for game in games:
        record = game.record or {}
        report.problems.extend(check_row(game, record))
        unit = schedule.get(game.unit_id)
        if unit is None:
            checks.problem(game.game_id, f"unit {game.unit_id} is not in the schedule")
            continue
        slot = _slot_of(record)
        if isinstance(slot, str):
            checks.problem(game.game_id, slot)
            continue
        if (slot.a, slot.b, slot.round, slot.leg) != (unit.a, unit.b, unit.round, unit.leg):
            checks.problem(game.game_id, f"the record's seats differ from unit {unit.unit_id}")
            continue
        if record.get("tournament_id") != row.tournament_id:
            checks.problem(game.game_id, f"the record is of {record.get('tournament_id')!r}")
        pool = definition.pool(unit.pool)
        variant = cached_variant(pool.variant, pool.options)
        # A match variant's games (tavli) are of its cycle's variants; matches() checks which.
        played = Match.of(variant, pool.match_length).cycle if variant.is_match_variant else ()
        allowed = [(v.name, dict(v.options)) for v in played or (variant,)]
        if (record.get("variant"), record.get("options")) not in allowed:
            checks.problem(game.game_id, "the record's variant or options differ from its pool")
        checks.game(record, slot)
    variants = {
        p.label: (cached_variant(p.variant, p.options), p.match_length) for p in definition.pools
    }
    done = checks.matches(variants)
    if row.status == "finished":
        missing = [u for u in schedule if not done.get(u)]
        if missing:
            report.problems.append(
                f"{row.tournament_id}: finished, yet {len(missing)} scheduled units are not "
                f"complete (first: {missing[0]})"
            )
    return report


def verify_records(
    records: Iterable[Mapping[str, Any]],
    *,
    seed: int,
    salt: str,
    tournament_id: str | None = None,
) -> VerifyReport:
    """Audit a tournament from its game records (a JSONL export) and its revealed ``seed`` and
    ``salt`` (hex). Records of other tournaments are skipped; ``tournament_id`` is needed only
    when there are several."""
    mine: list[Mapping[str, Any]] = []
    ids: set[str] = set()
    for record in records:
        tid = str(record.get("tournament_id"))
        ids.add(tid)
        if tournament_id is None or tid == tournament_id:
            mine.append(record)
    if tournament_id is None:
        if len(ids) > 1:
            raise ValueError(f"the records hold several tournaments ({', '.join(sorted(ids))})")
        tournament_id = next(iter(ids), "?")
    report = VerifyReport(tournament_id)
    if not mine:
        report.problems.append(f"{tournament_id}: no game records")
        return report
    stamp = mine[0].get("dice_commitment") or {}
    published = str(stamp.get("commitment", ""))
    dice = audit.DiceAudit(tournament_id, audit.SCHEME, published, True, seed, salt)
    if _revealed(report, dice) is None:
        return report
    checks = _Audit(report, seed, bool(stamp.get("duplicate", True)), published)
    variants: dict[str, tuple[Variant, int | None]] = {}
    for record in mine:
        slot = _slot_of(record)
        if isinstance(slot, str):
            checks.problem(str(record.get("game_id")), slot)
            continue
        try:
            variant = cached_variant(str(record.get("variant")), record.get("options") or {})
        except (NardyError, ValueError, TypeError) as exc:
            checks.problem(str(record.get("game_id")), f"unknown variant: {exc}")
            continue
        length = ((record.get("setup") or {}).get("match") or {}).get("length") or None
        previous = variants.setdefault(slot.pool, (variant, length))
        if previous[0].name != variant.name or previous[1] != length:
            checks.problem(str(record.get("game_id")), f"pool {slot.pool} mixes variants")
        checks.game(record, slot)
    checks.matches(variants)
    return report


def verify_game(store: Store, game_id: str, tournament_id: str | None = None) -> VerifyReport:
    """Check one stored game: its columns against its record, the record re-played through the
    kernel, and, once the tournament's seed is revealed, its seed and rolls re-derived from it.
    Raises :class:`StorageError` when the game cannot be found or read."""
    game = store.find_game(game_id, tournament_id)
    record = game.record or {}
    report = VerifyReport(game.tournament_id)
    report.problems.extend(check_row(game, record))
    dice = audit.public_dice(store, game.tournament_id)
    report.dice = dice
    slot = _slot_of(record)
    if dice is not None and dice.revealed and dice.seed is not None and dice.salt is not None:
        if isinstance(slot, str):
            report.problems.append(f"{game.game_id}: {slot}")
            return report
        if not audit.matches(dice.seed, dice.salt, dice.commitment):
            report.problems.append(
                f"{game.tournament_id}: the revealed seed and salt do not give the commitment"
            )
        duplicate = bool((record.get("dice_commitment") or {}).get("duplicate", True))
        _Audit(report, dice.seed, duplicate, dice.commitment).game(record, slot)
        return report
    replay = replay_record(record)  # no revealed seed: the record's own seed and dice
    report.games, report.rolls, report.decisions = 1, replay.rolls, replay.decisions
    if not replay.ok:
        report.problems.append(
            f"{game.game_id}: {replay.message.removeprefix(game.game_id + ': ')}"
        )
    return report
