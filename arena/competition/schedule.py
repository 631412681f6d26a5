"""Tournament definitions and their deterministic schedules.

A :class:`TournamentDef` is what a ``tournament.toml`` file (or the flags of ``nardy arena run``)
describes: the bots, the variant pools, the format (round robin or gauntlet), the number of games
(or matches) per pairing, the seed, duplicate dice, the clock, the fault policy and an optional
SPRT. :func:`build_schedule` turns it into the list of :class:`ScheduledUnit` — games, or matches
for a pool with ``match_length`` — in a fixed order, each with a stable id and its dice seed.

Everything here is a pure function of the definition: the same definition always gives the same
ids, seeds and colours, which is what lets an interrupted run resume (games already stored are
skipped) and lets a game be replayed from its record. Adding games to a pairing (raising
``games``) keeps every existing id and seed, so a finished tournament can be extended.

Seeds: the dice seed of round ``r`` of a pool is shared by every pairing of that pool (with
duplicate dice, by both legs too), so the whole field sees the same dice in the same round. Game
``n`` of a match uses a seed derived from the unit's seed and ``n``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nardy.core.errors import NardyError

__all__ = [
    "DEFAULT_CAPACITY",
    "SPRT_INPUTS",
    "BotEntry",
    "DefinitionError",
    "Format",
    "PoolDef",
    "ScheduledUnit",
    "SprtDef",
    "TournamentDef",
    "TournamentError",
    "UnitStream",
    "build_schedule",
    "derive_seed",
    "load_definition",
    "parse_definition",
    "unit_at",
    "unit_from_id",
    "unit_streams",
]

Format = Literal["round_robin", "gauntlet"]

DEFAULT_CAPACITY = 2
"""Simultaneous games one bot may play when its entry does not say (``capacity``)."""

_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")


class DefinitionError(NardyError, ValueError):
    """A tournament definition (TOML file or flags) is invalid; the message names the field."""


class TournamentError(NardyError, RuntimeError):
    """The tournament cannot run (a bot unreachable, a game that crashed the engine ...)."""


# -- seeds ------------------------------------------------------------------------------------------


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from ``parts`` (SHA-256 of their JSON): stable across runs and platforms."""
    text = json.dumps([str(p) for p in parts], separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


# -- the definition ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BotEntry:
    """One bot of a tournament: a built-in bot run in-process, a gRPC ``BotService`` at an
    address, or a ``BotService`` process the engine starts itself (``command``)."""

    name: str
    builtin: str | None = None
    """A :func:`nardy.bots.make_bot` name (``heuristic``, ``random``)."""
    endpoint: str | None = None
    """``host:port`` of a bot server."""
    token_env: str | None = None
    """Name of the environment variable holding the endpoint's bearer token (never the token)."""
    capacity: int = DEFAULT_CAPACITY
    """Most games this bot plays at the same time."""
    command: tuple[str, ...] | None = None
    """A bot server the engine starts (in the current directory) for the run and stops after it:
    it must print ``LISTENING host:port`` (:mod:`nardy.arena.clients.local`); e.g. ``node bot.js 0``."""

    @property
    def kind(self) -> Literal["builtin", "endpoint", "command"]:
        if self.builtin is not None:
            return "builtin"
        return "endpoint" if self.endpoint is not None else "command"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "capacity": self.capacity}
        if self.builtin is not None:
            out["builtin"] = self.builtin
        if self.endpoint is not None:
            out["endpoint"] = self.endpoint
        if self.command is not None:
            out["command"] = list(self.command)
        if self.token_env is not None:
            out["token_env"] = self.token_env
        return out


@dataclass(frozen=True, slots=True)
class PoolDef:
    """A variant (with options) the tournament is played in; each pool is rated separately."""

    label: str
    variant: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def match_length(self) -> int | None:
        """Points per match, or None for single (money) games."""
        value = self.options.get("match_length")
        return int(value) if value else None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "variant": self.variant, "options": dict(self.options)}


@dataclass(frozen=True, slots=True)
class SprtDef:
    """The sequential test of a head-to-head (:class:`nardy.arena.competition.stats.Sprt`).

    ``mode="elo"`` tests win rates (H0 ``elo0``, H1 ``elo1``); ``mode="points"`` tests points per
    game (H0 ``mu0``, H1 ``mu1``, games worth at most ``max_points``).

    ``on`` is the test's input: ``"points"`` (each game's points) or ``"luck-adjusted"`` (each
    game's luck-adjusted points by :mod:`nardy.analysis`, 0-ply with the variant's neural net:
    an unbiased control variate with a smaller variance, so fewer games; points mode, money
    games only).
    """

    mode: Literal["elo", "points"] = "elo"
    elo0: float = 0.0
    elo1: float = 50.0
    mu0: float = 0.0
    mu1: float = 0.25
    alpha: float = 0.05
    beta: float = 0.05
    max_points: float = 3.0
    on: Literal["points", "luck-adjusted"] = "points"

    def to_json(self) -> dict[str, Any]:
        if self.on != "points":
            return {**self._to_json(), "on": self.on}
        return self._to_json()

    def _to_json(self) -> dict[str, Any]:
        if self.mode == "elo":
            return {
                "mode": "elo",
                "elo0": self.elo0,
                "elo1": self.elo1,
                "alpha": self.alpha,
                "beta": self.beta,
            }
        return {
            "mode": "points",
            "mu0": self.mu0,
            "mu1": self.mu1,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_points": self.max_points,
        }


@dataclass(frozen=True, slots=True)
class TournamentDef:
    """A whole tournament. :attr:`tournament_id` depends only on what decides the games."""

    name: str
    bots: tuple[BotEntry, ...]
    pools: tuple[PoolDef, ...]
    games: int
    """Games per pairing and pool (matches, for a pool with ``match_length``)."""
    seed: int
    format: Format = "round_robin"
    champion: str | None = None
    """Gauntlet: the bot that meets every other one (default: the first bot)."""
    duplicate: bool = True
    """Duplicate dice: games come in pairs on the same dice with the seats swapped."""
    concurrency: int = 1
    sprt: SprtDef | None = None
    per_decision: float = 5.0
    """Seconds a bot may take per decision, free of charge (endpoint bots)."""
    reserve: float = 0.0
    """A per-game bank of extra seconds (endpoint bots)."""
    on_fault: Literal["forfeit", "random"] = "forfeit"
    max_faults: int = 3

    def __post_init__(self) -> None:
        _validate(self)

    # -- identity -------------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """What decides the games: bots (names and what they are), pools, format, seed, dice.

        Not part of it: ``games`` (a tournament can be extended), ``concurrency``, the SPRT,
        endpoint addresses and commands (a bot may move) and the clock. A bot started by a
        ``command`` counts as an endpoint.
        """
        return {
            "bots": [[b.name, b.builtin or "endpoint"] for b in self.bots],
            "pools": [p.to_json() for p in self.pools],
            "format": self.format,
            "champion": self.champion_name if self.format == "gauntlet" else None,
            "seed": self.seed,
            "duplicate": self.duplicate,
        }

    @property
    def tournament_id(self) -> str:
        """``<name>-<8 hex digits of the identity hash>``."""
        digest = hashlib.sha256(
            json.dumps(self.identity(), sort_keys=True, separators=(",", ":")).encode()
        ).hexdigest()
        return f"{self.name}-{digest[:8]}"

    @property
    def champion_name(self) -> str:
        return self.champion or self.bots[0].name

    def bot(self, name: str) -> BotEntry:
        for entry in self.bots:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def pool(self, label: str) -> PoolDef:
        for pool in self.pools:
            if pool.label == label:
                return pool
        raise KeyError(label)

    def pairings(self) -> list[tuple[str, str]]:
        """``(a, b)`` pairings: a is the earlier entry (the champion in a gauntlet)."""
        names = [b.name for b in self.bots]
        if self.format == "gauntlet":
            champ = self.champion_name
            return [(champ, n) for n in names if n != champ]
        return [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]

    @property
    def total_units(self) -> int:
        return len(self.pairings()) * len(self.pools) * self.games

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "format": self.format,
            "champion": self.champion,
            "bots": [b.to_json() for b in self.bots],
            "pools": [p.to_json() for p in self.pools],
            "games": self.games,
            "seed": self.seed,
            "duplicate": self.duplicate,
            "concurrency": self.concurrency,
            "sprt": None if self.sprt is None else self.sprt.to_json(),
            "time_control": {"per_decision": self.per_decision, "reserve": self.reserve},
            "faults": {"on_fault": self.on_fault, "max_faults": self.max_faults},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TournamentDef:
        """The inverse of :meth:`to_json` (as stored in a tournament database)."""
        return parse_definition(
            {
                "name": data["name"],
                "format": data["format"],
                **({"champion": data["champion"]} if data.get("champion") else {}),
                "bots": data["bots"],
                "variants": [
                    {"name": p["variant"], "label": p["label"], "options": p["options"]}
                    for p in data["pools"]
                ],
                "games": data["games"],
                "seed": data["seed"],
                "duplicate": data["duplicate"],
                "concurrency": data["concurrency"],
                **({"sprt": data["sprt"]} if data.get("sprt") else {}),
                "time_control": data["time_control"],
                "faults": data["faults"],
            }
        )


def _validate(d: TournamentDef) -> None:
    if not _NAME.match(d.name):
        raise DefinitionError(f"name {d.name!r}: use 1-64 letters, digits and _ . + -")
    if len(d.bots) < 2:
        raise DefinitionError(f"a tournament needs at least two bots, not {len(d.bots)}")
    seen: set[str] = set()
    for bot in d.bots:
        if not _NAME.match(bot.name):
            raise DefinitionError(f"bot name {bot.name!r}: use 1-64 letters, digits and _ . + -")
        if bot.name in seen:
            raise DefinitionError(f"bot name {bot.name!r} is used twice")
        seen.add(bot.name)
        if sum(x is not None for x in (bot.builtin, bot.endpoint, bot.command)) != 1:
            raise DefinitionError(
                f"bot {bot.name!r}: give exactly one of builtin, endpoint or command"
            )
        if bot.command is not None and not bot.command:
            raise DefinitionError(f"bot {bot.name!r}: command is empty")
        if bot.capacity < 1:
            raise DefinitionError(f"bot {bot.name!r}: capacity must be at least 1")
    if not d.pools:
        raise DefinitionError("no variant given")
    labels = [p.label for p in d.pools]
    for label in labels:
        if not _NAME.match(label):
            raise DefinitionError(f"variant label {label!r}: use letters, digits and _ . + -")
    if len(set(labels)) != len(labels):
        raise DefinitionError("two variants share a label; give them distinct 'label's")
    if d.games < 1:
        raise DefinitionError(f"games must be at least 1, not {d.games}")
    if d.concurrency < 1:
        raise DefinitionError(f"concurrency must be at least 1, not {d.concurrency}")
    if d.format not in ("round_robin", "gauntlet"):
        raise DefinitionError(f"format must be round_robin or gauntlet, not {d.format!r}")
    if d.champion is not None and d.champion not in seen:
        raise DefinitionError(f"champion {d.champion!r} is not one of the bots")
    if d.sprt is not None and len(d.pairings()) != 1:
        raise DefinitionError(
            f"an SPRT needs a head-to-head (exactly one pairing), not {len(d.pairings())} pairings"
        )
    if d.per_decision <= 0 or d.reserve < 0:
        raise DefinitionError("time_control: per_decision must be > 0 and reserve >= 0")
    if d.on_fault not in ("forfeit", "random"):
        raise DefinitionError(f"faults.on_fault must be forfeit or random, not {d.on_fault!r}")
    if d.max_faults < 0:
        raise DefinitionError("faults.max_faults must be >= 0")


# -- parsing ----------------------------------------------------------------------------------------

_TOP_KEYS = {
    "name",
    "format",
    "champion",
    "bots",
    "variant",
    "variants",
    "options",
    "games",
    "seed",
    "duplicate",
    "concurrency",
    "sprt",
    "time_control",
    "faults",
    "match_length",
}


def _get(
    table: Mapping[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    where: str,
    default: Any = None,
) -> Any:
    value = table.get(key, default)
    if value is None:
        return None
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _types(kind))
    if not ok:
        names = "/".join(t.__name__ for t in _types(kind))
        raise DefinitionError(f"{where}{key}: expected {names}, got {value!r}")
    return value


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _check_keys(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise DefinitionError(
            f"{where or 'tournament'}: unknown key(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(allowed))})"
        )


def _parse_bot(item: Any, index: int) -> BotEntry:
    where = f"bots[{index}]."
    if isinstance(item, str):
        return BotEntry(name=item, builtin=item)
    if not isinstance(item, Mapping):
        raise DefinitionError(f"bots[{index}]: expected a table {{name, builtin|endpoint|command}}")
    _check_keys(
        item, {"name", "builtin", "endpoint", "command", "token_env", "capacity"}, f"bots[{index}]"
    )
    builtin = _get(item, "builtin", str, where)
    name = _get(item, "name", str, where) or builtin
    if name is None:
        raise DefinitionError(f"bots[{index}]: a bot needs a name")
    capacity = _get(item, "capacity", int, where, DEFAULT_CAPACITY)
    raw_command = _get(item, "command", (str, list), where)
    command: tuple[str, ...] | None = None
    if isinstance(raw_command, str):
        try:
            command = tuple(shlex.split(raw_command))
        except ValueError as exc:
            raise DefinitionError(f"{where}command: {exc}") from None
    elif raw_command is not None:
        if not all(isinstance(part, str) for part in raw_command):
            raise DefinitionError(f"{where}command: expected a string or a list of strings")
        command = tuple(raw_command)
    return BotEntry(
        name=name,
        builtin=builtin,
        endpoint=_get(item, "endpoint", str, where),
        token_env=_get(item, "token_env", str, where),
        capacity=capacity,
        command=command,
    )


def _parse_pools(data: Mapping[str, Any]) -> tuple[PoolDef, ...]:
    raw: list[Any]
    if "variants" in data:
        if "variant" in data:
            raise DefinitionError("give variant or variants, not both")
        value = data["variants"]
        if not isinstance(value, list):
            raise DefinitionError("variants: expected a list")
        raw = value
    elif "variant" in data:
        raw = [data["variant"]]
    else:
        raise DefinitionError('no variant given (variant = "long", or variants = [...])')
    shared = data.get("options", {})  # [options.<variant>] tables, for every pool of it
    if not isinstance(shared, Mapping):
        raise DefinitionError("options: expected a table of tables ([options.long] ...)")
    match_length = _get(data, "match_length", int, "")
    pools: list[PoolDef] = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            name, label, options = item, None, {}
        elif isinstance(item, Mapping):
            _check_keys(item, {"name", "label", "options"}, f"variants[{index}]")
            name = _get(item, "name", str, f"variants[{index}].")
            if name is None:
                raise DefinitionError(f"variants[{index}]: a variant needs a name")
            label = _get(item, "label", str, f"variants[{index}].")
            options = item.get("options", {})
            if not isinstance(options, Mapping):
                raise DefinitionError(f"variants[{index}].options: expected a table")
        else:
            raise DefinitionError(f"variants[{index}]: expected a name or a table")
        base = shared.get(name, {})
        if not isinstance(base, Mapping):
            raise DefinitionError(f"options.{name}: expected a table of {name}'s options")
        merged = {**base, **options}
        if match_length is not None and "match_length" not in merged:
            merged["match_length"] = match_length
        if label is None:
            ml = merged.get("match_length")
            label = name if not ml else f"{name}{ml}"
        pools.append(PoolDef(label=label, variant=name, options=merged))
    return tuple(pools)


SPRT_INPUTS = ("points", "luck-adjusted")
"""What an SPRT can run on (``sprt.on``, ``--sprt-on``)."""


def _parse_sprt(value: Any) -> SprtDef | None:
    if value is None or value is False:
        return None
    if value is True:
        return SprtDef()
    if not isinstance(value, Mapping):
        raise DefinitionError("sprt: expected a table (elo0, elo1, alpha, beta) or true")
    _check_keys(
        value,
        {"mode", "elo0", "elo1", "mu0", "mu1", "alpha", "beta", "max_points", "on"},
        "sprt",
    )
    number = (int, float)
    mode = _get(value, "mode", str, "sprt.", "points" if "mu1" in value else "elo")
    if mode not in ("elo", "points"):
        raise DefinitionError(f"sprt.mode must be elo or points, not {mode!r}")
    kw = {
        k: float(_get(value, k, number, "sprt."))
        for k in ("elo0", "elo1", "mu0", "mu1", "alpha", "beta", "max_points")
        if k in value
    }
    on = _get(value, "on", str, "sprt.", "points")
    if on not in SPRT_INPUTS:
        raise DefinitionError(f"sprt.on must be points or luck-adjusted, not {on!r}")
    if on == "luck-adjusted" and mode != "points":
        raise DefinitionError(
            "sprt: a luck-adjusted SPRT tests points per game: give mode = points (mu0, mu1)"
        )
    sprt = SprtDef(mode=mode, on=on, **kw)
    lo, hi = (sprt.elo0, sprt.elo1) if mode == "elo" else (sprt.mu0, sprt.mu1)
    if not lo < hi:
        raise DefinitionError(f"sprt: H0 ({lo:g}) must be below H1 ({hi:g})")
    if not (0 < sprt.alpha < 1 and 0 < sprt.beta < 1):
        raise DefinitionError("sprt: alpha and beta must be between 0 and 1")
    if mode == "points" and not -sprt.max_points < sprt.mu0 < sprt.mu1 < sprt.max_points:
        raise DefinitionError("sprt: need -max_points < mu0 < mu1 < max_points")
    return sprt


def parse_definition(data: Mapping[str, Any]) -> TournamentDef:
    """A :class:`TournamentDef` from TOML-shaped data; raises :class:`DefinitionError`."""
    _check_keys(data, _TOP_KEYS, "")
    bots_raw = data.get("bots")
    if not isinstance(bots_raw, list):
        raise DefinitionError(
            "bots: expected a list of tables ([[bots]] name = ..., builtin = ...)"
        )
    bots = tuple(_parse_bot(item, i) for i, item in enumerate(bots_raw))
    tc = data.get("time_control", {})
    faults = data.get("faults", {})
    if not isinstance(tc, Mapping) or not isinstance(faults, Mapping):
        raise DefinitionError("time_control and faults must be tables")
    _check_keys(tc, {"per_decision", "reserve"}, "time_control")
    _check_keys(faults, {"on_fault", "max_faults"}, "faults")
    number = (int, float)
    seed = _get(data, "seed", int, "", 1)
    if not 0 <= seed < 2**63:
        raise DefinitionError("seed must be between 0 and 2**63 - 1")
    fmt = _get(data, "format", str, "", "round_robin").replace("-", "_")
    pools, sprt = _parse_pools(data), _parse_sprt(data.get("sprt"))
    if sprt is not None and sprt.on == "luck-adjusted" and any(p.match_length for p in pools):
        # A match scores +-1 whatever its games' points: there is no per-game luck to take off.
        raise DefinitionError(
            "sprt: a luck-adjusted SPRT runs on money games, not matches (sprt.on = points)"
        )
    return TournamentDef(
        name=_get(data, "name", str, "", "tournament"),
        format=fmt,
        champion=_get(data, "champion", str, ""),
        bots=bots,
        pools=pools,
        games=_get(data, "games", int, "", 2),
        seed=seed,
        duplicate=_get(data, "duplicate", bool, "", True),
        concurrency=_get(data, "concurrency", int, "", 1),
        sprt=sprt,
        per_decision=float(_get(tc, "per_decision", number, "time_control.", 5.0)),
        reserve=float(_get(tc, "reserve", number, "time_control.", 0.0)),
        on_fault=_get(faults, "on_fault", str, "faults.", "forfeit"),
        max_faults=_get(faults, "max_faults", int, "faults.", 3),
    )


def load_definition(path: str | Path) -> TournamentDef:
    """Read a tournament TOML file; every problem is a one-line :class:`DefinitionError`."""
    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as exc:
        raise DefinitionError(f"{p}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except UnicodeDecodeError:
        raise DefinitionError(f"{p}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise DefinitionError(f"{p}: invalid TOML: {exc}") from None
    try:
        return parse_definition(data)
    except DefinitionError as exc:
        raise DefinitionError(f"{p}: {exc}") from None


# -- the schedule -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScheduledUnit:
    """One scheduled game, or one match (a pool with ``match_length``)."""

    unit_id: str
    """Stable id, e.g. ``long:heuristic~random:0007b`` (pool, pairing, round, leg)."""
    order: int
    """Position in the schedule (units are started in this order as capacity allows)."""
    pool: str
    a: str
    b: str
    round: int
    """0-based index of the duplicate pair within its pairing and pool."""
    leg: int
    """0: ``a`` plays White; 1: ``b`` plays White."""
    seed: int
    """Dice seed of the unit (of game 1 for a money game); shared by both legs with duplicate dice."""
    match_length: int | None = None

    @property
    def white(self) -> str:
        return self.a if self.leg == 0 else self.b

    @property
    def black(self) -> str:
        return self.b if self.leg == 0 else self.a

    @property
    def pair_id(self) -> str:
        """Shared by the two legs of a pair (``PairingStats`` pairs games by it)."""
        return self.unit_id[:-1]

    def game_id(self, game_no: int = 1) -> str:
        """Id of game ``game_no`` (1-based) of the unit: the unit id for a single game."""
        return self.unit_id if self.match_length is None else f"{self.unit_id}.g{game_no}"

    def game_seed(self, game_no: int = 1) -> int:
        """Dice seed of game ``game_no`` of the unit."""
        return self.seed if game_no == 1 else derive_seed(self.seed, "game", game_no)

    def bot_seed(self, bot: str, game_no: int = 1) -> int:
        """Seed of ``bot``'s own random choices in game ``game_no`` (the same in both legs)."""
        return derive_seed(self.game_seed(game_no), "bot", bot)


def _rounds(games: int) -> int:
    return math.ceil(games / 2)


def build_schedule(d: TournamentDef) -> list[ScheduledUnit]:
    """Every unit of the tournament in start order: round by round, pool by pool, pairing by
    pairing, the two legs of a pair together. Colours alternate by leg, so in each pairing ``a``
    plays White in ``ceil(games/2)`` units and ``b`` in ``floor(games/2)``. (A list of every
    unit: the engine walks one :class:`UnitStream` per pairing instead, nothing per game.)"""
    return list(iter_schedule(d))


def iter_schedule(d: TournamentDef) -> Iterator[ScheduledUnit]:
    """The units of :func:`build_schedule`, one at a time."""
    pairings = d.pairings()
    for r in range(_rounds(d.games)):
        for p in range(len(d.pools)):
            for q in range(len(pairings)):
                for leg in (0, 1):
                    if 2 * r + leg < d.games:
                        yield unit_at(d, p, q, r, leg, pairings)


def unit_order(
    d: TournamentDef,
    pool_index: int,
    pairing_index: int,
    r: int,
    leg: int,
    n_pairings: int | None = None,
) -> int:
    """The position of a unit in the schedule, computed (round-major, then pool, pairing, leg;
    the last round of an odd ``games`` has leg 0 only). ``n_pairings``: ``len(d.pairings())``,
    if the caller has it (computing it is O(bots²))."""
    n = len(d.pairings()) if n_pairings is None else n_pairings
    per_round = len(d.pools) * n
    slot = pool_index * n + pairing_index
    if 2 * r + 1 < d.games:
        return 2 * per_round * r + 2 * slot + leg
    return 2 * per_round * r + slot


def unit_at(
    d: TournamentDef,
    pool_index: int,
    pairing_index: int,
    r: int,
    leg: int,
    pairings: Sequence[tuple[str, str]] | None = None,
) -> ScheduledUnit:
    """The unit of round ``r`` (0-based), leg ``leg`` of a pool and pairing, by index."""
    pool = d.pools[pool_index]
    pairings = pairings or d.pairings()
    a, b = pairings[pairing_index]
    round_seed = derive_seed(d.seed, "dice", pool.label, r)
    return ScheduledUnit(
        unit_id=f"{pool.label}:{a}~{b}:{r + 1:04d}{'ab'[leg]}",
        order=unit_order(d, pool_index, pairing_index, r, leg, len(pairings)),
        pool=pool.label,
        a=a,
        b=b,
        round=r,
        leg=leg,
        seed=round_seed if d.duplicate else derive_seed(round_seed, a, b, leg),
        match_length=pool.match_length,
    )


def unit_from_id(d: TournamentDef, unit_id: str) -> ScheduledUnit | None:
    """The scheduled unit with id ``unit_id``, or None if the schedule has no such unit."""
    parts = unit_id.split(":")
    if len(parts) != 3 or len(parts[2]) < 2:
        return None
    label, pairing, tail = parts
    a, sep, b = pairing.partition("~")
    digits, leg_char = tail[:-1], tail[-1]
    if not sep or not digits.isdigit() or leg_char not in "ab":
        return None
    r, leg = int(digits) - 1, "ab".index(leg_char)
    pool_index = next((i for i, p in enumerate(d.pools) if p.label == label), None)
    pairings = d.pairings()
    try:
        pairing_index = pairings.index((a, b))
    except ValueError:
        return None
    if pool_index is None or r < 0 or 2 * r + leg >= d.games:
        return None
    unit = unit_at(d, pool_index, pairing_index, r, leg, pairings)
    return unit if unit.unit_id == unit_id else None


class UnitStream:
    """The units of one pool, pairing and leg in schedule order, made one at a time: the
    engine's queue of what is left to play costs O(pools x pairings), whatever ``games`` is."""

    __slots__ = ("_d", "_next_round", "_pairings", "head", "leg", "pairing_index", "pool_index")

    def __init__(
        self,
        d: TournamentDef,
        pool_index: int,
        pairing_index: int,
        leg: int,
        pairings: Sequence[tuple[str, str]],
    ) -> None:
        self._d = d
        self._pairings = pairings
        self.pool_index = pool_index
        self.pairing_index = pairing_index
        self.leg = leg
        self._next_round = 0
        self.head: ScheduledUnit | None = None
        """The next unit, or None when the stream is exhausted (after :meth:`advance`)."""

    def advance(self, skip: Callable[[ScheduledUnit], bool] = lambda unit: False) -> None:
        """Move :attr:`head` to the next unit for which ``skip`` is false."""
        d = self._d
        while 2 * self._next_round + self.leg < d.games:
            unit = unit_at(
                d, self.pool_index, self.pairing_index, self._next_round, self.leg, self._pairings
            )
            self._next_round += 1
            if not skip(unit):
                self.head = unit
                return
        self.head = None


def unit_streams(
    d: TournamentDef, skip: Callable[[ScheduledUnit], bool] = lambda unit: False
) -> list[UnitStream]:
    """One :class:`UnitStream` per pool, pairing and leg, each advanced to its first unit not
    skipped (exhausted streams left out)."""
    pairings = d.pairings()
    out: list[UnitStream] = []
    for p in range(len(d.pools)):
        for q in range(len(pairings)):
            for leg in (0, 1):
                stream = UnitStream(d, p, q, leg, pairings)
                stream.advance(skip)
                if stream.head is not None:
                    out.append(stream)
    return out


def split_bots_flag(text: str) -> list[dict[str, Any]]:
    """Bots of ``--bots``: ``heuristic,random`` (built-ins), ``name=builtin``, ``name=host:port``.
    A built-in with an argument (``gnubg:0``, ``neural:FILE``) is the built-in, not a host."""
    from nardy.bots import is_builtin_bot

    out: list[dict[str, Any]] = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        name, sep, what = item.partition("=")
        if not sep:
            out.append({"name": item, "builtin": item})
        elif ":" in what and not is_builtin_bot(what):
            out.append({"name": name, "endpoint": what})
        else:
            out.append({"name": name, "builtin": what})
    return out


def check_builtins(definition: TournamentDef) -> None:
    """Build each built-in bot of ``definition`` once, so that one that cannot play here (gnubg
    not installed, a neural weights file missing) is a :class:`DefinitionError` before the
    first game rather than a failure in the middle of the tournament."""
    from nardy.bots import is_builtin_bot, make_bot

    names = {b.builtin for b in definition.bots if b.builtin is not None}
    for name in sorted(n for n in names if is_builtin_bot(n)):  # unknown ones: said later
        try:
            make_bot(name, 0)
        except ValueError as exc:
            users = ", ".join(b.name for b in definition.bots if b.builtin == name)
            raise DefinitionError(f"bot {users} ({name}): {exc}") from None


def definition_from_flags(
    *,
    variants: Sequence[str],
    bots: str,
    games: int,
    seed: int,
    name: str | None = None,
    format: str = "round_robin",
    match_length: int | None = None,
    duplicate: bool = True,
    concurrency: int = 1,
    sprt: str | None = None,
    sprt_on: str = "points",
) -> TournamentDef:
    """The definition given by ``nardy arena run`` flags (no TOML file). With ``sprt_on =
    "luck-adjusted"``, ``sprt`` gives MU0,MU1 (points per game) rather than ELO0,ELO1."""
    data: dict[str, Any] = {
        "format": format,
        "bots": split_bots_flag(bots),
        "variants": list(variants),
        "games": games,
        "seed": seed,
        "duplicate": duplicate,
        "concurrency": concurrency,
    }
    if match_length:
        data["match_length"] = match_length
    if sprt:
        parts = sprt.split(",")
        try:
            elo0, elo1 = (float(p) for p in parts)
        except ValueError:
            raise DefinitionError(f"--sprt {sprt!r}: expected ELO0,ELO1 (e.g. 0,50)") from None
        data["sprt"] = {"elo0": elo0, "elo1": elo1}
        if sprt_on == "luck-adjusted":
            data["sprt"] = {"mode": "points", "mu0": elo0, "mu1": elo1, "on": sprt_on}
        elif sprt_on != "points":
            data["sprt"]["on"] = sprt_on  # parse_definition rejects it with a clear message
    elif sprt_on != "points":
        raise DefinitionError("--sprt-on needs --sprt")
    draft = parse_definition({**data, "name": name or "cli"})
    if name is None:
        # A readable default name: bots and variants (the id adds a hash of the rest).
        auto = "-".join([*(b.name for b in draft.bots), *(p.label for p in draft.pools)])[:64]
        auto = re.sub(r"[^A-Za-z0-9_.+-]", "_", auto) or "cli"
        draft = parse_definition({**data, "name": auto})
    return draft


def variants_refused(
    declared: Sequence[str], variant: str, cycle: Sequence[str] = ()
) -> str | None:
    """Why a bot that declares ``declared`` (``BotInfo.variants``; empty: any variant) is not
    scheduled for ``variant``, or None if it plays it. A match variant (``cycle``, e.g. tavli,
    RULES.md §3.12.3) is played by a bot that lists it by name, or lists every variant of its
    cycle (portes, plakoto and fevga), since each game of the match is one of those."""
    if not declared or variant in declared:
        return None
    if cycle:
        missing = [name for name in cycle if name not in declared]
        if not missing:
            return None
        return (
            f"it lists {', '.join(declared)}; a {variant} match plays {', '.join(cycle)} "
            f"(list {variant!r} or all of them; missing: {', '.join(missing)})"
        )
    return f"it lists only {', '.join(declared)}"
