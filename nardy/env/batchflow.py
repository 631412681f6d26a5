"""The lean game flow of a whole batch of games at once: boards, dice and movers as numpy arrays.

:class:`~nardy.env.vector.BatchedSelfPlay` runs its games here when the variant's games run lean
(:func:`applies`: :class:`~nardy.core.lean.LeanGame`'s rules — backgammon, trictrac, long,
nardgammon, fevga, hypergammon, portes, plakoto, and the turn plans mad, gulbar, mad_gulbar, giul,
khachapuri, whose progression stages, re-roll chains and transferred steps are array state too:
:attr:`LeanBatch.kind`, :attr:`LeanBatch.steps`, :attr:`LeanBatch.final`). A step is a handful
of numpy operations for the whole batch, not a Python call chain per game: every board is a row of
one ``int8`` array in the move generator's key layout (:data:`nardy.core.batch.BOARD` bytes, the
mover's view: ``[his off, points 1…24, his bar, the opponent's bar, the opponent's off]``; a
pinning variant's pinned points' bits beside them, one ``int64`` per game), the chosen plays are
rows of the batch's legal results (one :func:`~nardy.core.batch.legal_results_of_boards` call a
round), the flip to the next mover is one permuted copy, the dice come from a block of rolls per
game drawn ahead, and the observations are encoded from the board array. What is rare — a game's
end and its points, the opening throw of the next game, a first turn on a limited head, an illegal
action, a plakoto board the mother rule ends (RULES.md §3.12.2: found on the arrays, scored per
game) or one where no die was played (a frozen board's draw) — is done per game in Python for just
those games. So is a round's tail: when a few games are left whose segments were forced (bear-offs,
and the turn plans' stages, often have one play or none) or whose opponent decides inside the step
(:class:`LeanVersus`), each goes on by itself in a lean game built from its row
(:meth:`LeanBatch._decide_alone`), where a whole-batch round would cost as much for one game as
for hundreds.

Each game is still the single environment's episode for its seed (tests/env/test_env_vector.py
compares them step by step): the same rules as :class:`~nardy.core.lean.LeanGame` (which is the
reference, itself tested against the kernel's game), and each game's dice are exactly
:class:`~nardy.env.driver.NumpyDice`'s stream — a block of ``NumpyDice.BATCH`` rolls drawn from
the game's generator when the last is used up, a fresh block when a new game starts. The rolls
and chosen results are kept (blocks, and one log of every step's chosen rows) so that
:meth:`LeanBatch.driver` replays any game into a kernel :class:`~nardy.core.game.Game` on demand
(afterstates, rendering, copies, records).
"""

from __future__ import annotations

import copy
from array import array
from collections.abc import Sequence
from random import Random
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from nardy import encoding
from nardy.bots.random_bot import RandomBot
from nardy.core import lean
from nardy.core.batch import BOARD, legal_results_of_boards
from nardy.core.errors import GameStateError
from nardy.core.game import (
    Game,
    GameResult,
    PlayDecision,
    cube_settings_for,
    pinning_end,
)
from nardy.core.movegen import board_of, position_of
from nardy.core.position import opposite_point
from nardy.core.rules import TurnPlan
from nardy.core.turnplan import (
    SegmentKind,
    Transfer,
    after_stage,
    chain_handover,
    later_steps,
    one_segment_turns,
    opening_outcome,
    reroll_follows,
    reroll_plan,
    roll_plan,
    stage_handover,
)
from nardy.core.variant import Variant
from nardy.env.driver import Driver, EnvConfig, NumpyDice
from nardy.env.gym import NardyGymEnv

_BLOCK: Final = NumpyDice.BATCH
_TAIL: Final = 8
"""A round of this many games or fewer goes on per game (:meth:`LeanBatch._decide_alone`)."""
_KEY_COLUMNS: Final = np.array([*range(1, 25), 25, 26, 0, 27])
"""A board key's columns in :func:`encoding.encode_rows`' row layout."""


def applies(config: EnvConfig) -> bool:
    """Whether ``config``'s games run in a :class:`LeanBatch`: lean (:func:`lean.eligible`),
    whatever the doubles rule (turn plans are array state: :attr:`LeanBatch.kind`) and without
    the mother rule unless checkers pin. Pinning variants (plakoto, RULES.md §3.12.2) carry their
    pinned points' bits beside the boards (:attr:`LeanBatch.pins`)."""
    variant = config.variant
    rules = variant.rules
    return lean.eligible(variant, NumpyDice(np.random.default_rng(0)), True) and (
        rules.game_end.mother == "off" or bool(rules.hitting.pins)
    )


def flip_permutation(variant: Variant) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int8]]:
    """Columns and signs that turn a board key into the other player's view of the same board
    (:meth:`Position.flip <nardy.core.position.Position.flip>` on keys: ``key[:, columns] *
    signs``)."""
    if variant.rules.geometry == "opposite":
        points = list(range(24, 0, -1))
    else:
        points = [*range(13, 25), *range(1, 13)]
    columns = np.array([27, *points, 26, 25, 0], dtype=np.intp)
    signs = np.array([1, *([-1] * 24), 1, 1, 1], dtype=np.int8)
    return columns, signs


def pin_flip_tables(variant: Variant) -> npt.NDArray[np.int64]:
    """Three 256-entry tables that turn pinned points' bits (bit ``p``: point ``p``,
    :data:`~nardy.core.movegen.PINS`) into the other player's numbering of the same points
    (:meth:`Position.flip <nardy.core.position.Position.flip>`'s ``opposite_point``), a byte of
    points at a time: ``t[0][(m >> 1) & 255] | t[1][(m >> 9) & 255] | t[2][(m >> 17) & 255]``."""
    geometry = variant.rules.geometry
    tables = np.zeros((3, 256), dtype=np.int64)
    for k in range(3):
        for value in range(256):
            bits = 0
            for b in range(8):
                if value >> b & 1:
                    bits |= 1 << opposite_point(8 * k + b + 1, geometry)
            tables[k, value] = bits
    return tables


def flip_pins(tables: npt.NDArray[np.int64], pins: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``pins`` (pinned points' bits per game) in the other player's numbering
    (:func:`pin_flip_tables`)."""
    flipped: npt.NDArray[np.int64] = (
        tables[0][(pins >> 1) & 255] | tables[1][(pins >> 9) & 255] | tables[2][(pins >> 17) & 255]
    )
    return flipped


def pinned_bits(key: Sequence[int]) -> int:
    """A board key's pinned points' bits (0 where nothing is pinned: the key has no such field)."""
    return key[BOARD] if len(key) > BOARD else 0


def row_key(
    rows: npt.NDArray[np.int8], pins: npt.NDArray[np.int64] | array[int] | None, row: int
) -> list[int]:
    """A batch row's board key (:func:`~nardy.core.movegen.board_of`): its board, and the
    pinned points' bits where something is pinned (RULES.md §3.12.2)."""
    key: list[int] = rows[row].tolist()
    if pins is not None and pins[row]:
        key.append(int(pins[row]))
    return key


class LeanBatch:
    """``num_envs`` lean games (:func:`applies`) stepped together, writing the batch's arrays:
    ``obs``, ``counts`` (legal actions per game), ``rewards``, ``terminated``, ``illegal`` and
    ``agents`` (the arrays of :class:`~nardy.env.vector.BatchedSelfPlay`, shared)."""

    def __init__(
        self,
        config: EnvConfig,
        obs: npt.NDArray[np.float32],
        counts: npt.NDArray[np.int64],
        rewards: npt.NDArray[np.float32],
        terminated: npt.NDArray[np.bool_],
        illegal: npt.NDArray[np.bool_],
        agents: npt.NDArray[np.int64],
    ) -> None:
        self.config = config
        variant = self.variant = config.variant
        n = self.num_envs = counts.shape[0]
        self.obs, self.counts, self.rewards = obs, counts, rewards
        self.terminated, self.illegal, self.agents = terminated, illegal, agents
        self.full = config.encoder == encoding.FULL_ENCODER
        self.checkers = variant.checkers
        self.auto_forced = config.auto_forced
        self._flip, self._signs = flip_permutation(variant)
        self._start_board = np.array(board_of(variant.start_position()), dtype=np.int8)
        self.board = np.zeros((n, BOARD), dtype=np.int8)
        """Every game's board, its mover's view (the move generator's key layout)."""
        rules = variant.rules
        self.pinning = bool(rules.hitting.pins)
        """Checkers pin (plakoto, RULES.md §3.12.2): :attr:`pins` holds them."""
        self.pins = np.zeros(n, dtype=np.int64)
        """Every game's pinned points' bits (bit ``p``: point ``p`` of :attr:`board` holds a
        checker pinned beneath the stack, :data:`~nardy.core.movegen.PINS`); 0 where nothing is
        pinned, and always without pinning."""
        self._pin_tables = pin_flip_tables(variant)
        self._mother = rules.game_end.mother
        """RULES.md §3.12.2's mother rule: off, standard or simple."""
        self._top = opposite_point(24, rules.geometry)
        """The opponent's own 24 in the mover's coordinates (where his mother stands)."""
        self._used = np.zeros(n, dtype=np.int64)
        """How many dice every legal play of each deciding game's segment uses."""
        self.dice = np.zeros((n, 2), dtype=np.int64)
        """The current segment's roll (as thrown; a double is four steps)."""
        self.mover = np.zeros(n, dtype=np.int64)
        # The dice: per game a block of rolls drawn ahead (NumpyDice's), where the next is, and
        # for replays the blocks of the current game and where its first roll stands.
        self._block = np.zeros((n, _BLOCK, 2), dtype=np.int64)
        self._flat = self._block.reshape(n * _BLOCK, 2)
        """:attr:`_block` as one row per roll (game ``i``'s roll ``k``: row ``i * BLOCK + k``)."""
        self._next = np.full(n, _BLOCK, dtype=np.int64)
        self._blocks: list[list[npt.NDArray[np.int64]]] = [[] for _ in range(n)]
        self._rolled = np.zeros(n, dtype=np.int64)
        """Rolls drawn by each game since its start."""
        self._rngs: list[np.random.Generator] = []
        # The decisions: every deciding game's legal results (sorted by board, the canonical
        # action order) are rows ``_start[i] … _start[i] + counts[i] - 1`` of ``_results``.
        self._results = np.zeros((0, BOARD), dtype=np.int8)
        self._pinned = np.zeros(0, dtype=np.int64)
        """The results' pinned points' bits (rows of :attr:`_results`; zeros without pinning)."""
        self._start = np.zeros(n, dtype=np.int64)
        # The answers: each step's chosen rows (the games that chose, ascending, and their rows),
        # the step each game started at; entries older than every running game are dropped.
        self._log: list[
            tuple[int, npt.NDArray[np.intp], npt.NDArray[np.int8], npt.NDArray[np.int64]]
        ] = []
        self._steps = 0
        self._since = np.zeros(n, dtype=np.int64)
        turn = rules.turn
        self._doubles = turn.doubles
        self._transfer = turn.transfer
        self._extra_stage = turn.progression_stop == "fourth_step_extra"
        self._planning = not one_segment_turns(turn)
        """A turn may be more than one segment (:func:`~nardy.core.turnplan.one_segment_turns`)."""
        plans = [roll_plan(turn, a, b) for a in range(1, 7) for b in range(1, 7)]
        self._plan_steps = np.array([(*dice, 0, 0)[:4] for _, dice, _ in plans], dtype=np.int8)
        """The turn plan's first segment of each roll (row ``(a-1) * 6 + b-1``): its steps, kind
        and whether it ends the turn (:func:`~nardy.core.turnplan.roll_plan`)."""
        self._plan_kind = np.array([KINDS.index(kind) for kind, _, _ in plans], dtype=np.int8)
        self._plan_final = np.array([final for _, _, final in plans], dtype=np.bool_)
        rerolls = [reroll_plan(a, b) for a in range(1, 7) for b in range(1, 7)]
        self._reroll_final = np.array([final for _, _, final in rerolls], dtype=np.bool_)
        limit = self._head_limit = rules.head.limit
        # The contexts of the segments that depend on the roll alone (a first turn's head
        # allowance and transferred steps' later groups are per game: _context_of).
        self._contexts = _context_table("roll", limit, turn)
        self._reroll_contexts = _context_table("reroll", limit, turn)
        self._stage_contexts = np.zeros((6, 2, encoding.CONTEXT_SIZE), dtype=np.float32)
        """A progression stage's context by its value and whether the mover is all home (then
        no later stage is planned: later_steps)."""
        for x in range(1, 7):
            for home in (0, 1):
                later = later_steps("stage", (x,), bool(home), ())
                context = encoding.Context(
                    phase="stage", segment=(x,) * 4, later=later, head_limit=limit
                )
                self._stage_contexts[x - 1, home] = context.vector()
        self._jacoby = cube_settings_for(variant, match_length=None).jacoby
        # The turn plan of every game (the kernel's LeanGame's fields as arrays).
        self.steps = np.zeros((n, 4), dtype=np.int8)
        """Every game's current segment's steps (dice values, zeros after the last)."""
        self.kind = np.zeros(n, dtype=np.int8)
        """Every game's current segment's kind: an index of :data:`KINDS`."""
        self.final = np.ones(n, dtype=np.bool_)
        """The current segment ends the turn whatever is played (two dice, a double's four
        steps where doubles are four steps, a re-roll of two dice)."""
        self._first = np.zeros(n, dtype=np.int8)
        """A progression's rolled value d (its stages are d…6)."""
        self._last = np.zeros(n, dtype=np.bool_)
        """The progression's current stage is its last (turnplan.after_stage's ``last``)."""
        self._stage_start = np.zeros((n, BOARD), dtype=np.int8)
        """The mover's board at the start of the current progression stage."""
        self._pending = np.zeros((n, 2, 7), dtype=np.int8)
        """Steps transferred to each colour (by value), played at the start of his turn (empty
        between steps: the turn that hands them over ends into that turn)."""
        self._groups = np.zeros((n, 7), dtype=np.int8)
        """The current turn's transferred groups (steps by value: turnplan.transfer_groups)."""
        self._tail = _TAIL
        """A round of this many games or fewer goes on per game (:meth:`_decide_alone`)."""
        self._forced_home = self.auto_forced and lean.forced_once_home(rules)
        """Every segment of an all-home side is forced (``mad``: lean.LeanGame._home_play)."""

    # -- the batch ---------------------------------------------------------------------------

    def reset(self, rngs: list[np.random.Generator]) -> None:
        """Start every game, game ``i`` drawing its dice from ``rngs[i]``."""
        self._rngs = rngs
        self._log.clear()
        self._steps = 0
        waiting = [self._begin(i) for i in range(self.num_envs)]
        self._generate(np.array(waiting, dtype=np.intp))
        self._observe()

    def step(self, acts: npt.NDArray[np.int64], legal: npt.NDArray[np.bool_]) -> None:
        """Answer every game's decision (``legal``: ``acts`` checked against the counts)."""
        self._steps += 1
        self.rewards[:] = 0.0
        self.terminated[:] = False
        np.logical_not(legal, out=self.illegal)
        waiting: list[int] = []
        if not legal.all():
            penalty = float(self.variant.max_game_value())  # the cube is not in use
            for i in np.flatnonzero(~legal).tolist():
                sign = 1.0 if self.mover[i] == 0 else -1.0
                self.rewards[i] = (-sign * penalty, sign * penalty)
                self.terminated[i] = True
                waiting.append(self._begin(i))
            games = np.flatnonzero(legal)
        else:
            games = np.arange(self.num_envs)
        rows = self._start[games] + acts[games]
        chosen, pins = self._results[rows], self._pinned[rows]
        self._record(games, chosen, pins)
        if len(self._log) > 4 * _BLOCK:
            oldest = int(self._since.min())
            self._log = [entry for entry in self._log if entry[0] >= oldest]
        ongoing = self._play(games, chosen, pins, self._used[games])
        if waiting:
            ongoing = np.concatenate([ongoing, np.array(waiting, dtype=np.intp)])
        self._generate(ongoing)
        self._observe()

    def _play(
        self,
        games: npt.NDArray[np.intp],
        keys: npt.NDArray[np.int8],
        pins: npt.NDArray[np.int64],
        used: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.intp]:
        """Make the plays ending at ``keys`` (with their pinned bits ``pins``, of segments that
        use ``used`` dice) in ``games``: a bear-off, or in a pinning variant the mother rule or a
        frozen board (:func:`~nardy.core.game.pinning_end`), ends the game (its points paid, the
        next game begun in self-play: :meth:`_end`), else the other player rolls. The games now
        awaiting their segment's legal results."""
        ended = keys[:, 0] == self.checkers
        results: dict[int, GameResult] = {}
        if self.pinning:
            # The boards that end otherwise, found here and scored per game as the lean game does
            # (pinning_end): the mother rule's (Variant.mother_end on the arrays: a mother is a
            # side's pinned checker on its own 24, RULES.md §3.12.2), or no die played (which
            # may be a frozen board's draw).
            maybe = used == 0
            if self._mother != "off":
                top = self._top
                theirs = ((pins >> top) & 1).astype(np.bool_) & (keys[:, top] > 0)
                mine = ((pins >> 24) & 1).astype(np.bool_) & (keys[:, 24] < 0)
                if self._mother == "simple":
                    maybe |= theirs | mine
                else:
                    maybe |= (theirs & (keys[:, 24] <= 0)) | (mine & (keys[:, top] >= 0))
            maybe &= ~ended
            for k in np.flatnonzero(maybe).tolist():
                key = keys[k].tolist()
                key.append(int(pins[k]))
                mover = int(self.mover[games[k]])
                end = pinning_end(self.variant, position_of(key), mover, 1, int(used[k]))
                if end is not None:
                    ended[k] = True
                    results[k] = end
        if ended.any():
            ends = [
                self._end(int(games[k]), keys[k], int(pins[k]), results.get(k))
                for k in np.flatnonzero(ended).tolist()
            ]
            restarted = [i for i in ends if i is not None]  # (None: not restarted here)
            going = ~ended
            games, keys, pins, used = games[going], keys[going], pins[going], used[going]
        else:
            restarted = []
        staying = games[:0]
        if self._planning:
            # A segment that does not end the turn: the turn's next segment, same mover.
            inside = ~self.final[games]
            if inside.any():
                on = np.zeros(games.size, dtype=np.bool_)
                on[inside] = self._next_segment(games[inside], keys[inside], used[inside])
                staying = games[on]
                turn_over = ~on
                games, keys, pins = games[turn_over], keys[turn_over], pins[turn_over]
        self.board[games] = keys[:, self._flip] * self._signs
        if self.pinning:
            self.pins[games] = flip_pins(self._pin_tables, pins)
        self.mover[games] ^= 1
        self._begin_turn(games)
        if staying.size:
            games = np.concatenate([games, staying])
        if restarted:
            return np.concatenate([games, np.array(restarted, dtype=np.intp)])
        return games

    @property
    def in_plan(self) -> npt.NDArray[np.bool_]:
        """The games whose current segment is part of a turn plan (a progression stage, a
        re-roll chain's double or re-roll, transferred steps), not a turn's one roll."""
        inside: npt.NDArray[np.bool_] = (self.kind != ROLL) | ~self.final
        return inside

    # -- turn plans (nardy.core.turnplan's, on arrays) ------------------------------------------

    def _begin_turn(self, games: npt.NDArray[np.intp]) -> None:
        """The turns of ``games``' movers: their transferred groups first, smallest value first
        (:func:`~nardy.core.turnplan.transfer_groups` on arrays), else a roll."""
        if self._transfer:
            owed = self._pending[games, self.mover[games]]
            has = owed.any(axis=1)
            if has.any():
                taking = games[has]
                self._groups[taking] = owed[has]
                self._pending[taking, self.mover[taking]] = 0
                self._transferred(taking, _next_value(owed[has], np.zeros(taking.size)))
                games = games[~has]
        self._roll(games)
        self._first_segment(games)

    def _transferred(self, games: npt.NDArray[np.intp], values: npt.NDArray[np.int64]) -> None:
        """The transferred group of each of ``values`` as ``games``' segment."""
        counts = self._groups[games, values]
        self.steps[games] = np.where(counts[:, None] > _STEP_INDEX, values[:, None], 0)
        self.kind[games] = TRANSFER
        self.final[games] = False

    def _first_segment(self, games: npt.NDArray[np.intp]) -> None:
        """The first segment of ``games``' rolls (:attr:`dice`) by the turn plan's table
        (:func:`~nardy.core.turnplan.roll_plan`); a progression's first stage also notes its
        rolled value, whether the mover starts it all home, and its board."""
        dice = self.dice[games]
        code = dice[:, 0] * 6 + dice[:, 1] - 7
        self.steps[games] = self._plan_steps[code]
        if not self._planning:  # every roll is the whole turn: kind and final are the same
            self.kind[games] = ROLL
            self.final[games] = True
            return
        kind = self.kind[games] = self._plan_kind[code]
        self.final[games] = self._plan_final[code]
        if self._doubles == "progression":
            stage = kind == STAGE
            if stage.any():
                doubled = games[stage]
                board = self.board[doubled]
                self._first[doubled] = dice[stage, 0]
                self._last[doubled] = all_home_rows(board)
                self._stage_start[doubled] = board

    def _reroll_segment(self, games: npt.NDArray[np.intp]) -> None:
        """The re-rolls of ``games``' chains (:func:`~nardy.core.turnplan.reroll_plan`)."""
        self._roll(games)
        dice = self.dice[games]
        code = dice[:, 0] * 6 + dice[:, 1] - 7
        self.steps[games] = self._plan_steps[code]
        self.kind[games] = REROLL
        self.final[games] = self._reroll_final[code]

    def _owe(self, game: int, receiver: int, owed: Transfer) -> None:
        """Hand ``owed`` steps of ``game`` over to ``receiver`` (played at his turn's start)."""
        for value, count in owed:
            self._pending[game, receiver, value] += count

    def _next_segment(
        self, games: npt.NDArray[np.intp], keys: npt.NDArray[np.int8], used: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.bool_]:
        """After segments that do not end the turn (played to ``keys``, using ``used`` dice):
        each game's next segment of the turn where there is one (its board then ``keys``), the
        unplayed steps handed over where they transfer; which games' turns go on
        (:meth:`LeanGame._next <nardy.core.lean.LeanGame._next>` on arrays, by the turn plan)."""
        self.board[games] = keys
        on = np.zeros(games.size, dtype=np.bool_)
        kind = self.kind[games]
        opponent = 1 - self.mover[games]
        transfer = kind == TRANSFER
        if transfer.any():
            # The next group, else the turn's roll.
            playing = games[transfer]
            values = _next_value(self._groups[playing], self.steps[playing, 0])
            more = values > 0
            self._transferred(playing[more], values[more])
            rolling = playing[~more]
            self._roll(rolling)
            self._first_segment(rolling)
            on[transfer] = True
        stage = kind == STAGE
        if stage.any():
            on[stage] = self._next_stage(games[stage], keys[stage], used[stage], opponent[stage])
        chain = ~(transfer | stage)
        if chain.any():
            chained, spent = games[chain], used[chain]
            full = spent == 4
            if self._transfer:
                for row in np.flatnonzero(~full).tolist():
                    owed = chain_handover(int(self.steps[chained[row], 0]), int(spent[row]))
                    self._owe(int(chained[row]), int(opponent[chain][row]), owed)
            self._reroll_segment(chained[full])
            on[chain] = full
        return on

    def _next_stage(
        self,
        games: npt.NDArray[np.intp],
        keys: npt.NDArray[np.int8],
        used: npt.NDArray[np.int64],
        opponent: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.bool_]:
        """After a progression stage (:func:`~nardy.core.turnplan.after_stage` over the rows):
        the next stage, or the turn's end with the stage's unplayed steps and the later stages
        handed over where steps transfer."""
        x = self.steps[games, 0].astype(np.int64)
        start = self._stage_start[games]
        go_on, next_last, short, last = after_stage(
            x,
            self._first[games].astype(np.int64),
            used,
            self._last[games],
            all_home_rows(start),
            all_home_rows(keys),
            keys[:, 0] == start[:, 0],
            self._extra_stage,
        )
        if self._transfer:
            for row in np.flatnonzero(short).tolist():
                owed = stage_handover(int(x[row]), int(used[row]), bool(last[row]))
                self._owe(int(games[row]), int(opponent[row]), owed)
        going = games[go_on]
        self._last[going] = next_last[go_on]
        self.steps[going] = (x[go_on] + 1)[:, None]
        self._stage_start[going] = keys[go_on]
        return go_on

    # -- one game on by itself (a round's last few games) -----------------------------------

    def _decide_alone(self, i: int) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64], int]:
        """Game ``i`` played on by a lean game (:meth:`_lean_of`) to its next decision, forced
        segments, the :meth:`_automatic` decisions (:meth:`_decides_alone`) and game ends
        included (self-play: the next game begun); that decision's legal results sorted by board
        (rows, pinned bits) and the dice they use (none where the game ended and was not begun
        again here), the arrays set from the lean game (:meth:`_store`)."""
        while True:
            dice = _GameDice(self, i)
            game = self._lean_of(i, dice)
            game.enter()
            chosen: list[Sequence[int]] = []
            while game.result is None and self._decides_alone(i, game.mover):
                chosen.append(game.key_at(self._choose_one(i, game.count())))
                game.choose(chosen[-1])
            if chosen:
                self._record(
                    np.full(len(chosen), i),
                    np.array([key[:BOARD] for key in chosen], dtype=np.int8),
                    np.array([pinned_bits(key) for key in chosen], dtype=np.int64),
                )
            dice.sync()
            if game.result is None:
                break
            key = board_of(game.position)
            final = np.array(key[:BOARD], dtype=np.int8)
            self.mover[i] = game.mover  # whose play ended it
            if self._end(i, final, pinned_bits(key), game.result) is None:
                return np.zeros((0, BOARD), dtype=np.int8), np.zeros(0, dtype=np.int64), 0
        keys = game.sorted_keys()
        rows = np.array([k[:BOARD] for k in keys], dtype=np.int8)
        pinned = np.array([pinned_bits(k) for k in keys], dtype=np.int64)
        self._store(i, game)
        return rows, pinned, game._used

    def _decides_alone(self, i: int, mover: int) -> bool:
        """Whether game ``i``'s decision for ``mover`` is made inside the step (the per-game
        twin of :meth:`_automatic`): never in self-play."""
        return False

    def _choose_one(self, i: int, count: int) -> int:
        """The play chosen in game ``i``'s :meth:`_decides_alone` decision of ``count`` plays:
        an index in ``legal_plays``' order."""
        raise NotImplementedError

    def _lean_of(self, i: int, dice: _GameDice) -> lean.LeanGame:
        """Game ``i``'s current segment as a lean game's (its turn plan's fields from the
        arrays), later rolls from ``dice``."""
        game = lean.LeanGame.at_segment(
            self.variant,
            dice,
            position_of(row_key(self.board, self.pins, i)),
            int(self.mover[i]),
            KINDS[int(self.kind[i])],
            tuple(v for v in self.steps[i].tolist() if v),
            bool(self.final[i]),
            auto_forced=self.auto_forced,
        )
        if self._planning:
            game._first = int(self._first[i])
            game._last = bool(self._last[i])
            game._start = position_of(self._stage_start[i].tolist())
            game._groups = self._groups_of(i)
            if game.kind == "transfer":
                game._group = [v for v, _ in game._groups].index(game.dice[0])
        return game

    def _groups_of(self, i: int) -> list[tuple[int, int]]:
        """Game ``i``'s transferred groups of this turn as (value, count), ascending."""
        return [(v, c) for v, c in enumerate(self._groups[i].tolist()) if c]

    def _store(self, i: int, game: lean.LeanGame) -> None:
        """The arrays of game ``i`` from its lean game (:meth:`_lean_of`'s fields)."""
        key = board_of(game.position)
        self.board[i] = key[:BOARD]
        self.pins[i] = pinned_bits(key)
        self.mover[i] = game.mover
        self.kind[i] = KINDS.index(game.kind)
        self.steps[i] = (*game.dice, 0, 0, 0, 0)[:4]
        self.final[i] = game.final
        if self._planning:
            self._first[i] = game._first
            self._last[i] = game._last
            self._stage_start[i] = board_of(game._start)[:BOARD]
            # (No steps are pending between segments: a turn's end hands them to the next
            # turn's start at once, in the lean game as in _play.)
            assert not any(game._pending)
            self._groups[i] = 0
            for value, count in game._groups:
                self._groups[i, value] = count

    def _generate(self, games: npt.NDArray[np.intp]) -> None:
        """The legal results of ``games``' segments in one batch per round, each game's sorted by
        board (the canonical action order); forced segments are played and generated again."""
        parts: list[npt.NDArray[np.int8]] = []
        pin_parts: list[npt.NDArray[np.int64]] = []
        base = 0
        variant = self.variant
        while games.size:
            if self._forced_home and games.size > self._tail:
                out = self._played_out(games)
                if out.any():
                    base = self._alone(games[out], parts, pin_parts, base)
                    games = games[~out]
                    continue
            if games.size <= self._tail:
                # A round's last few games (a chain of forced segments, common where the turn
                # plans' stages have one play or none) go on per game in lean games: a
                # whole-batch round costs the same for one game as for hundreds.
                base = self._alone(games, parts, pin_parts, base)
                break
            # The pairs as arrays (no Position per game): the boards' rows and the segments'
            # steps (a double's four, else the dice then zeros).
            steps = self.steps[games]
            if self.pinning:
                batch = legal_results_of_boards(
                    variant, self.board[games], steps, order="board", pins=self.pins[games]
                )
                assert batch.pinned is not None
                pinned = np.frombuffer(batch.pinned, dtype=np.int64)
            else:
                batch = legal_results_of_boards(variant, self.board[games], steps, order="board")
                pinned = None
            offsets = np.frombuffer(batch.offsets, dtype=np.int64)
            rows = np.frombuffer(batch.boards, dtype=np.int8).reshape(-1, BOARD)
            if pinned is None:
                pinned = np.zeros(rows.shape[0], dtype=np.int64)
            used = np.frombuffer(batch.dice_used, dtype=np.int8).astype(np.int64)
            counts = np.diff(offsets)
            starts = offsets[:-1]
            forced = counts == 1 if self.auto_forced else np.zeros(games.size, dtype=np.bool_)
            automatic = self._automatic(games, forced)
            deciding = ~(forced | automatic)
            self.counts[games[deciding]] = counts[deciding]
            self._start[games[deciding]] = starts[deciding] + base
            self._used[games[deciding]] = used[deciding]
            parts.append(rows)
            pin_parts.append(pinned)
            base += rows.shape[0]
            if not deciding.all():
                # Forced segments and the opponent's decisions: played, and the next segments
                # generated in the next round.
                chosen = starts.copy()
                if automatic.any():
                    # The choices are indices in legal_plays' order (a bot's): each one's row
                    # among its game's results sorted by board, from the batch's play_index.
                    assert batch.play_index is not None  # order="board"
                    index = np.frombuffer(batch.play_index, dtype=np.int32)
                    owner = np.repeat(starts, counts)
                    inverse = np.empty(index.size, dtype=np.int64)
                    inverse[owner + index] = np.arange(index.size) - owner
                    picks = self._choose(games[automatic], counts[automatic])
                    chosen[automatic] += inverse[starts[automatic] + picks]
                    picked = chosen[automatic]
                    self._record(games[automatic], rows[picked], pinned[picked])
                moved = ~deciding
                played = chosen[moved]
                games = self._play(games[moved], rows[played], pinned[played], used[moved])
            else:
                break
        if parts:
            self._results = parts[0] if len(parts) == 1 else np.concatenate(parts)
            self._pinned = pin_parts[0] if len(pin_parts) == 1 else np.concatenate(pin_parts)
        if int(self.counts.max()) > self.config.actions:
            i = int(self.counts.argmax())
            raise GameStateError(
                f"{self.counts[i]} legal plays exceed the action space of "
                f"{self.config.actions} ({variant.name}); pass a larger action_space_size"
            )

    def _alone(
        self,
        games: npt.NDArray[np.intp],
        parts: list[npt.NDArray[np.int8]],
        pin_parts: list[npt.NDArray[np.int64]],
        base: int,
    ) -> int:
        """Each of ``games`` played on per game to its next decision (:meth:`_decide_alone`), its
        legal results appended to ``parts`` from row ``base``; the next free row."""
        for i in games.tolist():
            found, found_pins, found_used = self._decide_alone(i)
            self.counts[i] = found.shape[0]
            self._start[i] = base
            self._used[i] = found_used
            parts.append(found)
            pin_parts.append(found_pins)
            base += found.shape[0]
        return base

    def _played_out(self, games: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        """Which of ``games`` have no decision of the caller's left before they end, so go on
        per game at once (only asked where an all-home side's segments are all forced): none in
        self-play, where the other side decides."""
        return np.zeros(games.size, dtype=np.bool_)

    def _automatic(
        self, games: npt.NDArray[np.intp], forced: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.bool_]:
        """Which of ``games`` (deciding, unless ``forced``) are decided here, not by the caller's
        actions: none in self-play."""
        return np.zeros(games.size, dtype=np.bool_)

    def _choose(
        self, games: npt.NDArray[np.intp], counts: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """The plays chosen in the :meth:`_automatic` games: indices in ``legal_plays``' order."""
        raise NotImplementedError

    def _record(
        self, games: npt.NDArray[np.intp], rows: npt.NDArray[np.int8], pins: npt.NDArray[np.int64]
    ) -> None:
        """Log the rows (and their pinned bits) chosen in ``games`` now (the answers a replay
        needs), games ascending (a game's several rows kept in their order)."""
        order = np.argsort(games, kind="stable")
        self._log.append((self._steps, games[order], rows[order], pins[order]))

    def _observe(self) -> None:
        """Every game's observation: its board from the decider's view and the roll's context."""
        self.agents[:] = self.mover
        self._encode_boards()
        obs = self.obs
        if not self.full:
            return
        code = (self.dice[:, 0] - 1) * 6 + self.dice[:, 1] - 1
        context = obs[:, encoding.BOARD_SIZE :]
        context[:] = self._contexts[code]
        alone: list[int] = []
        if self._planning:
            # A turn plan's segment: its kind, the steps planned later, the re-roll flag (the
            # single env's context, lean_context).
            kind = self.kind
            for which, table in ((REROLL, self._reroll_contexts), (STAGE, None)):
                rows = np.flatnonzero(kind == which)
                if not rows.size:
                    continue
                if table is not None:
                    context[rows] = table[code[rows]]
                else:
                    home = all_home_rows(self.board[rows]).astype(np.intp)
                    context[rows] = self._stage_contexts[self.steps[rows, 0] - 1, home]
            alone += np.flatnonzero(kind == TRANSFER).tolist()
        if self._head_limit is not None:
            # A first turn (every checker on a limited head, RULES.md §3.3.4): the allowance
            # comes from the generator, per game (two turns a game).
            alone += np.flatnonzero(self.board[:, 24] == self.checkers).tolist()
        for i in alone:
            context[i] = self._context_of(i)

    def _encode_boards(
        self,
        board: npt.NDArray[np.int8] | None = None,
        obs: npt.NDArray[np.float32] | None = None,
        pins: npt.NDArray[np.int64] | None = None,
    ) -> None:
        """The board units (``nardy196_v1``, :func:`encoding.encode`'s units) of ``board`` (every
        game's, by default, with :attr:`pins`) into ``obs`` (the batch's). Each side's N is the
        variant's checker count (no checker leaves the game in these variants, a pinned one counts
        in its owner's N), so ``off / N`` needs no count."""
        if board is None:
            board, pins = self.board, self.pins
        if obs is None:
            obs = self.obs
        n = board.shape[0]
        index = board[:, 1:25].astype(np.intp)
        index += encoding.MAX_STACK
        side = 24 * encoding.UNITS_PER_POINT
        start = encoding.MOVER_POINTS
        # np.take: a tenth of the time of the same gather by fancy indexing here.
        units = np.take(encoding.MOVER_UNITS, index, axis=0)
        obs[:, start : start + side] = units.reshape(n, side)
        start = encoding.OPPONENT_POINTS
        units = np.take(encoding.OPPONENT_UNITS, index, axis=0)
        obs[:, start : start + side] = units.reshape(n, side)
        obs[:, encoding.BAR : encoding.BAR + 2] = board[:, 25:27] / 2.0
        obs[:, encoding.OFF] = board[:, 0] / self.checkers
        obs[:, encoding.OFF + 1] = board[:, 27] / self.checkers
        if pins is not None and self.pinning:
            _write_pins(obs, board, pins)

    def _context_of(self, i: int) -> npt.NDArray[np.float32]:
        """Game ``i``'s context vector, per game (:func:`~nardy.env.driver.lean_context`'s): a
        first turn's head allowance comes from the generator, transferred steps' later groups
        from the turn's groups."""
        kind = KINDS[int(self.kind[i])]
        steps = tuple(v for v in self.steps[i].tolist() if v)
        home = kind == "stage" and bool(all_home_rows(self.board[i : i + 1])[0])
        later = later_steps(kind, steps, home, self._groups_of(i))
        reroll = len(steps) == 4 and kind in ("roll", "reroll") and self._doubles == "reroll"
        limit = self._head_limit
        first = limit is not None and int(self.board[i, 24]) == self.checkers
        if first:
            position = position_of(self.board[i].tolist())
            segment = self.variant.generator.checked_segment(position, steps)
            assert segment is not None
            limit = segment.head_limit
        return encoding.context_vector(
            encoding.segment_context(kind, steps, later, reroll, first, limit)
        )

    # -- the dice ----------------------------------------------------------------------------

    def _refill(self, i: int) -> None:
        block = self._rngs[i].integers(1, 7, size=(_BLOCK, 2))
        self._block[i] = block
        self._blocks[i].append(block)
        self._next[i] = 0

    def _roll(self, games: npt.NDArray[np.intp]) -> None:
        """The next roll of each of ``games`` into :attr:`dice`."""
        at = self._next[games]
        empty = at == _BLOCK
        if empty.any():
            for i in games[empty].tolist():
                self._refill(i)
            at[empty] = 0
        self.dice[games] = self._flat[games * _BLOCK + at]
        self._next[games] = at + 1
        self._rolled[games] += 1

    def _roll_one(self, i: int) -> tuple[int, int]:
        """Game ``i``'s next roll (one game: Python scalars)."""
        if self._next[i] == _BLOCK:
            self._refill(i)
        at = int(self._next[i])
        self._next[i] = at + 1
        self._rolled[i] += 1
        a, b = self._flat[i * _BLOCK + at].tolist()
        self.dice[i] = (a, b)
        return a, b

    # -- a game's start and end (per game: rare) ---------------------------------------------

    def _begin(self, i: int) -> int:
        """Game ``i``'s next game from its generator (fresh dice, as a new ``NumpyDice``): the
        opening throw (ties thrown again; :func:`~nardy.core.turnplan.opening_outcome`), then
        its first roll; returns ``i``."""
        self._next[i] = _BLOCK
        self._blocks[i] = []
        self._rolled[i] = 0
        self._since[i] = self._steps + 1
        self.board[i] = self._start_board
        self.pins[i] = 0
        self.mover[i] = 0
        self._pending[i] = 0
        opening = self.variant.rules.turn.opening
        if opening == "white_starts":
            self._roll_one(i)
            self._first_segment(np.array([i], dtype=np.intp))
            return i
        while True:
            white, black = self._roll_one(i)
            if white != black:
                break
        starter, first = opening_outcome(self.variant.rules.turn, white, black)
        if starter:
            self.board[i] = self.board[i, self._flip] * self._signs
            self.mover[i] = 1
        if first is not None:
            self.dice[i] = first
        else:
            self._roll_one(i)
        self._first_segment(np.array([i], dtype=np.intp))
        return i

    def _end(
        self, i: int, key: npt.NDArray[np.int8], pins: int, result: GameResult | None
    ) -> int | None:
        """Game ``i`` ended at ``key`` (pinned bits ``pins``): by its mover's bear-off (``result``
        None), else as ``result`` says (plakoto's mother rule or draw, RULES.md §3.12.2); its
        points paid (RULES.md §6), the next game begun; returns ``i``."""
        if result is None:
            variant = self.variant
            position = position_of(key.tolist())
            loser = variant.loser_side(position, 1)
            points = variant.game_points(loser, 1, cube_centred=True, jacoby=self._jacoby)
            winner = int(self.mover[i])
        else:
            points, winner = result.points, result.winner
        sign = 1.0 if winner == 0 else -1.0
        self.rewards[i, 0] += sign * points
        self.rewards[i, 1] -= sign * points
        self.terminated[i] = True
        return self._begin(i)

    # -- one game as the kernel's ------------------------------------------------------------

    def afterstates(self, i: int, encoder: str) -> npt.NDArray[np.float32]:
        """Game ``i``'s afterstates (:meth:`Driver.afterstates
        <nardy.env.driver.Driver.afterstates>`: every legal result encoded, row ``a`` for action
        ``a``, the decider's view) straight from the batch's results, without a replay."""
        start = int(self._start[i])
        end = start + int(self.counts[i])
        rows = self._results[start:end]
        board = encoding.encode_rows(rows[:, _KEY_COLUMNS].astype(np.int64))
        if self.pinning:
            _write_pins(board, rows, self._pinned[start:end])
        return encoding.with_context(board, encoder, None)

    def result_keys(self, i: int) -> list[list[int]]:
        """Game ``i``'s legal results as board keys (:func:`row_key`), key ``a`` for action
        ``a``, the decider's view: what a bot's evaluation of the results reads
        (:func:`nardy.engines.heuristic_batch.evaluate_keys`)."""
        start = int(self._start[i])
        pins = self._pinned if self.pinning else None
        return [
            row_key(self._results, pins, row) for row in range(start, start + int(self.counts[i]))
        ]

    def rolls(self, i: int) -> list[tuple[int, int]]:
        """Every roll game ``i`` has drawn, in order (the opening throw's included)."""
        if not self._blocks[i]:
            return []
        drawn = np.concatenate(self._blocks[i])[: int(self._rolled[i])]
        return [(a, b) for a, b in drawn.tolist()]

    def answers(self, i: int) -> list[tuple[int, ...]]:
        """The result key chosen at each of game ``i``'s decisions, in order."""
        since = int(self._since[i])
        found: list[tuple[int, ...]] = []
        for step, games, rows, pins in self._log:
            if step < since:
                continue
            # (A game decided alone may have several rows in one entry, in order.)
            first, last = np.searchsorted(games, (i, i + 1)).tolist()
            for k in range(first, last):
                bits = int(pins[k])  # a key carries its pinned bits when something is pinned
                key = rows[k].tolist()
                found.append((*key, bits) if bits else tuple(key))
        return found

    def game(self, i: int) -> Game:
        """Game ``i`` as a kernel :class:`~nardy.core.game.Game` at its current decision (its
        rolls and answers replayed); its later rolls come from a copy of the game's dice, so the
        batch's game is not disturbed."""
        dice = NumpyDice(copy.deepcopy(self._rngs[i]))
        rest = self._block[i, int(self._next[i]) :].tolist() if self._next[i] < _BLOCK else []
        dice._rolls = [(a, b) for a, b in reversed(rest)]
        variant = self.variant
        game = Game(variant, lean.ReplayDice(self.rolls(i), dice), auto_forced=self.auto_forced)
        for key in self.answers(i):
            decision = game.decision
            assert isinstance(decision, PlayDecision)
            game.decide(decision.plays.board_keys().index(key))
        game.dice.source = dice
        return game

    def driver(self, i: int) -> Driver:
        """A :class:`~nardy.env.driver.Driver` of game ``i`` at its current decision (a replay:
        stepping it does not step the batch)."""
        return Driver.of(self.config, self.game(i))


class LeanVersus(LeanBatch):
    """:class:`LeanBatch` of :class:`~nardy.env.vector.NardyVectorEnv`: one agent per game against
    the random bot, with Gymnasium's next-step autoreset. Game ``i`` is ``envs[i]``'s episode
    (:class:`~nardy.env.gym.NardyGymEnv`: its generator draws the agent's seat, the bot's seed,
    then the dice): the bot's decisions are made inside the step, as its own
    ``random.Random(seed).randrange`` over the plays in ``legal_plays``' order would
    (:class:`~nardy.bots.random_bot.RandomBot`); the observations are the agent's view, a finished
    game's final board with no decision until the next step starts the next game."""

    def __init__(
        self,
        config: EnvConfig,
        obs: npt.NDArray[np.float32],
        counts: npt.NDArray[np.int64],
        envs: Sequence[NardyGymEnv],
    ) -> None:
        n = counts.shape[0]
        rewards = np.zeros((n, 2), dtype=np.float32)
        super().__init__(
            config,
            obs,
            counts,
            rewards,
            np.zeros(n, dtype=np.bool_),
            np.zeros(n, dtype=np.bool_),
            np.zeros(n, dtype=np.int64),
        )
        self.envs = envs
        self.colour = np.zeros(n, dtype=np.int64)
        """The agent's colour per game."""
        self.reward = np.zeros(n, dtype=np.float64)
        """The agent's reward of the last step."""
        self.over = np.zeros(n, dtype=np.bool_)
        """The game has ended (its final board kept, from the view of :attr:`mover`, the player
        whose step ended it)."""
        self.autoreset = np.zeros(n, dtype=np.bool_)
        self._bots: list[Random] = [Random(0)] * n
        self._context = encoding.context_vector(encoding.Context())

    @staticmethod
    def takes(envs: Sequence[NardyGymEnv]) -> bool:
        """Whether the envs' games can run here: :func:`applies` and the random bot by name."""
        env = envs[0]
        maker = env.make_opponent
        return applies(env.config) and maker is not None and type(maker(0)) is RandomBot

    def reset_all(self) -> None:
        """Start every game from its env's generator (after ``gymnasium.Env.reset``)."""
        self.over[:] = False
        self.autoreset[:] = False
        self.illegal[:] = False
        self.reset([env.np_random for env in self.envs])

    def act(self, acts: npt.NDArray[np.int64]) -> None:
        """The agents' actions (ignored where the game restarts: next-step autoreset)."""
        self._steps += 1
        self.reward[:] = 0.0
        resetting = self.autoreset.copy()
        waiting = [self._begin(i) for i in np.flatnonzero(resetting).tolist()]
        legal = ~resetting & (acts >= 0) & (acts < self.counts)
        bad = ~resetting & ~legal
        np.copyto(self.illegal, bad)
        if bad.any():
            self.reward[bad] = -float(self.variant.max_game_value())  # the cube is not in use
        games = np.flatnonzero(legal)
        rows = self._start[games] + acts[games]
        chosen, pins = self._results[rows], self._pinned[rows]
        self._record(games, chosen, pins)
        ongoing = self._play(games, chosen, pins, self._used[games])
        if waiting:
            ongoing = np.concatenate([ongoing, np.array(waiting, dtype=np.intp)])
        self._generate(ongoing)
        self.autoreset[:] = self.over | bad
        self.counts[self.autoreset] = 0  # a finished or abandoned game has no legal action
        self._observe()

    def _begin(self, i: int) -> int:
        env = self.envs[i]
        rng = self._rngs[i]
        # NardyGymEnv._begin's draws, in its order: the seat, the bot's seed, then the dice.
        colour = int(rng.integers(2)) if env.seat == "random" else int(env.seat == "black")
        maker = env.make_opponent
        assert maker is not None
        bot = maker(int(rng.integers(2**31)))
        assert isinstance(bot, RandomBot)
        bot.start_game(self.variant, 1 - colour)
        self._bots[i] = bot.rng
        self.colour[i] = colour
        self.over[i] = False
        return super()._begin(i)

    def _end(self, i: int, key: npt.NDArray[np.int8], pins: int, result: GameResult | None) -> None:
        if result is None:  # the mover's bear-off
            variant = self.variant
            loser = variant.loser_side(position_of(key.tolist()), 1)
            points = variant.game_points(loser, 1, cube_centred=True, jacoby=self._jacoby)
            winner = int(self.mover[i])
        else:  # plakoto's mother rule or draw (a draw's 0 points)
            points, winner = result.points, result.winner
        self.reward[i] += points if winner == self.colour[i] else -points
        # The final board from the view of the player whose step ended the game (the lean
        # game's), who stays the mover.
        self.board[i] = key
        self.pins[i] = pins
        self.over[i] = True
        self.counts[i] = 0
        return None

    def _automatic(
        self, games: npt.NDArray[np.intp], forced: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.bool_]:
        automatic: npt.NDArray[np.bool_] = (self.mover[games] != self.colour[games]) & ~forced
        return automatic

    def _decides_alone(self, i: int, mover: int) -> bool:
        return bool(mover != self.colour[i])

    def _played_out(self, games: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        # The agent all home (``mad``): his segments are all forced, the bot decides inside the
        # step, so the game plays to its end in this step; per game, not round after round.
        rows = self.board[games]
        theirs = self.mover[games] != self.colour[games]
        rows[theirs] = rows[theirs][:, self._flip] * self._signs  # (the agent's view)
        return all_home_rows(rows)

    def _choose_one(self, i: int, count: int) -> int:
        return self._bots[i].randrange(count)

    def _record(
        self, games: npt.NDArray[np.intp], rows: npt.NDArray[np.int8], pins: npt.NDArray[np.int64]
    ) -> None:
        """Nothing is logged: a game against the bot is never replayed (the vector env hands out
        observations, masks and rewards only)."""

    def answers(self, i: int) -> list[tuple[int, ...]]:
        raise NotImplementedError("a game against the bot is not replayed")

    def _choose(
        self, games: npt.NDArray[np.intp], counts: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        bots = self._bots
        picks = [bots[i].randrange(c) for i, c in zip(games.tolist(), counts.tolist(), strict=True)]
        return np.array(picks, dtype=np.int64)

    def _observe(self) -> None:
        super()._observe()
        over = np.flatnonzero(self.over)
        if over.size:
            # The final board from the agent's view, with no decision's context.
            board = self.board[over]
            pins = self.pins[over]
            lost = self.mover[over] != self.colour[over]
            board[lost] = board[lost][:, self._flip] * self._signs
            if self.pinning:
                pins[lost] = flip_pins(self._pin_tables, pins[lost])
            rows = np.empty((over.size, self.obs.shape[1]), dtype=np.float32)
            self._encode_boards(board, rows, pins)
            if self.full:
                rows[:, encoding.BOARD_SIZE :] = self._context
            self.obs[over] = rows


def _write_pins(
    out: npt.NDArray[np.float32], board: npt.NDArray[np.int8], pins: npt.NDArray[np.int64]
) -> None:
    """The pinned checkers of the rows of ``board`` with pinned bits ``pins`` into their board
    units ``out`` (as :func:`encoding.encode` writes them: the pinned checker's owner's block at
    its point reads :data:`encoding.PINNED_UNITS`; the owner is the mover where the point's count
    is negative, RULES.md §3.12.2)."""
    rows = np.flatnonzero(pins)
    if not rows.size:
        return
    bits = ((pins[rows, None] >> _POINT_BITS) & 1).astype(np.bool_)
    mine = board[rows, 1:25] < 0
    side = 24 * encoding.UNITS_PER_POINT
    units = np.array(encoding.PINNED_UNITS, dtype=np.float32)
    for start, where in (
        (encoding.MOVER_POINTS, bits & mine),
        (encoding.OPPONENT_POINTS, bits & ~mine),
    ):
        block = out[rows, start : start + side].reshape(rows.size, 24, encoding.UNITS_PER_POINT)
        block[where] = units
        out[rows, start : start + side] = block.reshape(rows.size, side)


_POINT_BITS: Final = np.arange(1, 25, dtype=np.int64)


ROLL: Final = 0
STAGE: Final = 1
REROLL: Final = 2
TRANSFER: Final = 3
KINDS: Final[tuple[SegmentKind, ...]] = ("roll", "stage", "reroll", "transfer")
"""The segment kinds (:data:`nardy.core.game.SegmentKind`) by their codes in
:attr:`LeanBatch.kind`."""
_VALUES: Final = np.arange(7)
_STEP_INDEX: Final = np.arange(4)


def all_home_rows(boards: npt.NDArray[np.int8]) -> npt.NDArray[np.bool_]:
    """:func:`~nardy.core.game.all_home` of each board row (the mover's view): RULES.md §1.4,
    "no checker on his points 7…24 and none on the bar"."""
    home: npt.NDArray[np.bool_] = (boards[:, 25] == 0) & (boards[:, 7:25].max(axis=1) <= 0)
    return home


def _next_value(groups: npt.NDArray[np.int8], after: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """Each row's smallest value above ``after`` with a transferred step (0: none)."""
    later = (groups > 0) & (np.asarray(after)[:, None] < _VALUES)
    values: npt.NDArray[np.int64] = np.where(later.any(axis=1), later.argmax(axis=1), 0)
    return values


def _context_table(
    phase: encoding.Phase, limit: int | None, turn: TurnPlan
) -> npt.NDArray[np.float32]:
    """The context vectors of a ``phase`` segment of each roll (row ``(a-1) * 6 + b-1``): its
    steps and whether a re-roll follows, by the turn plan."""
    table = np.zeros((36, encoding.CONTEXT_SIZE), dtype=np.float32)
    for a in range(1, 7):
        for b in range(1, 7):
            _, segment, _ = roll_plan(turn, a, b)
            context = encoding.Context(
                phase=phase,
                segment=segment,
                reroll=reroll_follows(turn, phase, segment),
                head_limit=limit,
            )
            table[(a - 1) * 6 + b - 1] = context.vector()
    return table


class _GameDice:
    """Game ``i``'s dice stream of a batch as a lean game's dice source: the game's block of
    rolls read as Python lists a few rows at a time, a fresh block drawn when it runs out;
    :meth:`sync` hands the place reached back to the batch's arrays (one game's rolls one by
    one: no numpy scalar per roll)."""

    _ROWS: Final = 8

    def __init__(self, batch: LeanBatch, i: int) -> None:
        self.batch, self.i = batch, i
        self._at = int(batch._next[i])
        """The block's row of the next roll."""
        self._rest: list[list[int]] = []
        self._drawn = 0
        self._last: list[int] = []

    def roll(self) -> tuple[int, int]:
        if not self._rest:
            batch = self.batch
            if self._at == _BLOCK:
                self.sync()
                batch._refill(self.i)
                self._at = 0
            end = min(self._at + self._ROWS, _BLOCK)
            self._rest = batch._block[self.i, self._at : end].tolist()[::-1]
            self._at = end
        self._drawn += 1
        roll = self._last = self._rest.pop()
        return roll[0], roll[1]

    def sync(self) -> None:
        """The batch's place in the game's rolls, and its current roll, as drawn here."""
        if self._drawn:
            batch, i = self.batch, self.i
            batch._next[i] += self._drawn
            batch._rolled[i] += self._drawn
            batch.dice[i] = self._last
            self._drawn = 0
