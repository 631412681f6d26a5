"""Batched self-play training of an :class:`~nardy.engines.outcome_net.OutcomeNet` (numpy only).

Many games are played in lockstep by the batched environment
(:func:`nardy.env.vector.batched_env`, the kernel's turn flow: no rule is written here). At every
step each game's legal results come from :meth:`~nardy.env.vector.BatchedSelfPlay.afterstates`,
all games' afterstates go through the net in **one float32 matrix product**, and each game plays
its result of highest equity (greedy: the dice are the exploration, as in TD-Gammon). One net
plays both sides, so the net needs no heuristic and no search to play.

Targets are λ-returns (Sutton & Barto, ch. 12.1) over each finished game, in White's frame (a
probability vector of the other side's view is :func:`~nardy.engines.outcome_net.flip_outcomes`'s
affine map, so mixing commutes with it)::

    G_{T−1} = z            G_t = (1 − λ) V_{t+1} + λ G_{t+1}

with ``V_t`` the net's outcome probabilities of the result chosen at decision ``t`` (as evaluated
when it was played) and ``z`` the game's outcome (the points it paid, RULES.md §6). ``λ = 0`` is
TD(0), ``λ = 1`` Monte Carlo. The finished games' (afterstate, target) pairs are fitted by Adam on
the outcomes' cross-entropy, one step whenever ``batch`` positions are waiting.

**Chunks.** A run is a series of chunks of ``chunk`` games. Chunk ``c`` starts the environment
afresh from seed ``seed · 1,000,003 + c · envs`` and ends when ``chunk`` games have finished (the
games still in play are dropped, the waiting positions fitted); then the weights and the
optimiser's state are written (``OUT.ckpt.npz``) and the weights alone (``OUT.npz``, what the
``neural`` bot loads). ``resume`` continues at the next chunk, so a run stopped and resumed at
chunk ends gives the same weights as one run (single-threaded BLAS, one machine). Ctrl-C (or
SIGTERM) writes the checkpoint at once, a chunk cut short; a chunk that runs past
``checkpoint_seconds`` writes one too (marked ``partial``) and goes on unchanged. The sidecar keeps
the training curve: per chunk the games, seconds, games per second, loss and, with
``eval_games``, points per game against ``heuristic`` in duplicate pairs.

**Meeting other play** (both off by default; off, a run is the greedy self-play above, weight
for weight). Greedy self-play reaches only the positions its own play leads to: in plakoto
``heuristic`` pins the net's checkers in bulk, positions self-play never meets and the net rated
as wins (docs/bots.md, *Training record*).

* ``versus_heuristic`` — a fraction of the lockstep games (the first ``round(fraction · envs)``,
  at least one) is played against ``heuristic``: in game ``i`` it plays White for even ``i``, Black
  for odd, choosing as the ``heuristic`` bot does (its evaluation of every legal result,
  :func:`~nardy.engines.heuristic_batch.evaluate_keys`; ties go to the first result in the
  canonical order, where the bot draws among them). Both sides' afterstates are learnt with the
  same λ-returns: they are the game's own sequence of positions, each target the outcome the
  pair's play reached (the net's value then averages over the opponents it meets).
* ``explore`` — ε-greedy self-play: in the other games each decision with more than one legal
  play is played at random with probability ε. The random play's own afterstate keeps its return,
  but the return of the afterstate before it does not pass through it: it bootstraps from the
  value of the play the greedy policy would have made (the trace is cut, as in Watkins's Q(λ)),
  so a deliberate mistake is not taught as the consequence of the position before it.

* ``learn_forced`` — the afterstates of turns with one legal play or none are learnt too. By
  default the environment plays such a turn itself (``auto_forced``), so the net never sees the
  afterstate of a player who could not enter from the bar (a dance, the position unchanged) or
  had to leave checkers there: in backgammon the 256-unit net valued a dance with three checkers
  on the bar at −0.82 points for the dancer where gnubg's 0-ply says −1.36, and its 1-ply
  search, which values every reply's afterstate, the opponent's dances among them, undervalued
  the hits that close them out (docs/bots.md, *Forced turns*).

The decisions of both go through the same batched turn flow (:meth:`~nardy.env.vector.
BatchedSelfPlay.afterstate_keys` for the heuristic: the batch's results, no rule written here);
the random draws come from a generator seeded by the seed and the chunk, so a run stays
deterministic and resumable.
"""

from __future__ import annotations

# First: single-threaded BLAS, which counts only before numpy is imported.
from nardy.engines import blas  # noqa: F401  # isort: skip

import math
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import numpy.typing as npt

from nardy.core.variant import Variant
from nardy.encoding import BOARD_ENCODER
from nardy.engines.features import feature_set
from nardy.engines.heuristic import HeuristicEvaluation
from nardy.engines.heuristic_batch import evaluate_keys
from nardy.engines.outcome_net import OutcomeNet, flip_outcomes, outcome_targets

__all__ = ["Adam", "BatchedConfig", "checkpoint_path", "chunk_path", "fit_step", "train"]

F32 = npt.NDArray[np.float32]
Step = tuple[F32, F32, int] | tuple[F32, F32, int, F32]
"""A decision in a game's trail: the chosen afterstate's encoding, the net's outcome
probabilities of it, its mover and, where the play was explored, the greedy play's
probabilities."""

SEED_STRIDE = 1_000_003
"""Chunk ``c``'s environment seed is ``seed · SEED_STRIDE + c · envs``: no two chunks share a
game's dice."""
_ADAM = (0.9, 0.999, 1e-8)


@dataclass(frozen=True, slots=True)
class BatchedConfig:
    """What decides a run (all of it is recorded in the sidecar; resume checks it)."""

    variant: str
    games: int = 100_000
    seed: int = 1
    hidden: int = 128
    envs: int = 256
    """Games played in lockstep."""
    chunk: int = 20_000
    """Games per chunk (a checkpoint at each chunk's end)."""
    lam: float = 0.7
    learning_rate: float = 1e-3
    batch: int = 256
    """Positions per Adam step (at least)."""
    eval_games: int = 0
    """Games against ``heuristic`` after each chunk (duplicate pairs; 0: none)."""
    options: dict[str, Any] = field(default_factory=dict)
    versus_heuristic: float = 0.0
    """Fraction of the lockstep games played against ``heuristic`` (the module docstring)."""
    explore: float = 0.0
    """ε of ε-greedy play in the self-play games (the module docstring)."""
    init: str = ""
    """Weights to start from instead of random ones (an outcome net of the variant with
    ``hidden`` units, e.g. a self-play run's, to go on against other play); the optimiser
    starts afresh. Empty: random weights from the seed."""
    learn_forced: bool = False
    """Also learn the afterstates of turns with one legal play or none (the module docstring):
    the environment presents them as decisions instead of playing them itself."""
    features: str = ""
    """A feature set the net reads beside the board units (:mod:`nardy.engines.features`); with
    ``init`` a net without them, their weights start at zero."""
    keep_chunks: bool = False
    """Also keep each chunk's weights as ``OUT.cN.npz`` (:func:`chunk_path`), to average them
    (:mod:`nardy.train.average`); the weights themselves do not depend on it."""

    def check(self) -> None:
        """A ValueError naming the option for a value out of its range."""
        for name in ("versus_heuristic", "explore"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {value!r}")


_SAME_RUN = (
    "variant",
    "seed",
    "hidden",
    "envs",
    "chunk",
    "lam",
    "learning_rate",
    "batch",
    "options",
    "versus_heuristic",
    "explore",
    "init",
    "learn_forced",
    "features",
)
"""Config fields a resumed run must share with its checkpoint (``games`` may grow)."""

_ADDED: dict[str, Any] = {
    "versus_heuristic": 0.0,
    "explore": 0.0,
    "init": "",
    "learn_forced": False,
    "features": "",
}
"""Fields newer than some checkpoints: a checkpoint without one was made with its default."""


def chunk_path(out: Path, chunk: int) -> Path:
    """Where ``--keep-chunks`` keeps the weights at the end of chunk ``chunk`` (1, 2, …)."""
    return out.with_name(f"{out.stem}.c{chunk}.npz")


def checkpoint_path(out: Path) -> Path:
    """Where a run writing ``out`` keeps its checkpoint (``--resume`` reads it)."""
    return out.with_name(out.stem + ".ckpt.npz")


Say = Callable[[str], None]


def scale_for(variant: Variant) -> float:
    """The unit of ``values``: the prior-input net's (15 points per checker, else 3)."""
    return 15.0 if variant.rules.scoring.per_checker else 3.0


class Adam:
    """Adam over the net's four arrays (float32 moments, one step counter)."""

    def __init__(self, net: OutcomeNet, state: dict[str, F32] | None, steps: int) -> None:
        self.net = net
        self.m = {k: np.zeros_like(a) for k, a in net.params().items()}
        self.v = {k: np.zeros_like(a) for k, a in net.params().items()}
        if state:
            for k in self.m:
                self.m[k] = state["m_" + k].copy()
                self.v[k] = state["v_" + k].copy()
        self.steps = steps

    def state(self) -> dict[str, F32]:
        out = {"m_" + k: a for k, a in self.m.items()}
        out.update({"v_" + k: a for k, a in self.v.items()})
        return out

    def step(self, grads: dict[str, F32], rate: float) -> None:
        b1, b2, eps = _ADAM
        self.steps += 1
        t = self.steps
        size = rate * math.sqrt(1 - b2**t) / (1 - b1**t)
        params = self.net.params()
        for k, g in grads.items():
            m, v = self.m[k], self.v[k]
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * (g * g)
            params[k] -= (size * m / (np.sqrt(v) + eps)).astype(np.float32)


def fit_step(net: OutcomeNet, adam: Adam, x: F32, y: F32, rate: float) -> float:
    """One Adam step on the mean cross-entropy of ``y`` by the net's outcomes of ``x``; returns
    the loss before the step."""
    x = net.expand(x)  # the board units and the net's features: what w1 multiplies
    h = net.hidden_of_expanded(x)
    p = net.outcomes_of_hidden(h)
    n = x.shape[0]
    clipped = np.clip(p, 1e-6, 1 - 1e-6)
    loss = float(-(y * np.log(clipped) + (1 - y) * np.log(1 - clipped)).sum() / n)
    dz = (p - y) / np.float32(n)
    dh = (dz @ net.w2) * (1.0 - h * h)
    grads = {"w1": dh.T @ x, "b1": dh.sum(axis=0), "w2": dz.T @ h, "b2": dz.sum(axis=0)}
    adam.step(grads, rate)
    return loss


class _Returns:
    """λ-return weights by game length (cached): ``G = C_T @ [V_1 … V_{T−1}, z]``."""

    def __init__(self, lam: float) -> None:
        self.lam = lam
        self.cache: dict[int, F32] = {}

    def matrix(self, length: int) -> F32:
        found = self.cache.get(length)
        if found is None:
            t = np.arange(length)[:, None]
            j = np.arange(length)[None, :]
            lam = self.lam
            # Column j < T − 1 holds V_{j+1}: its weight in G_t is (1 − λ) λ^(j−t) for j ≥ t.
            power = np.where(j >= t, j - t, 0).astype(np.float64)
            c = np.where(j >= t, (1 - lam) * lam**power, 0.0)
            c[:, -1] = lam ** (length - 1 - np.arange(length))
            found = self.cache[length] = c.astype(np.float32)
        return found


class _Run:
    """One run's state: the net, the optimiser, the counters and the curve."""

    def __init__(self, variant: Variant, config: BatchedConfig, out: Path, *, resume: bool) -> None:
        self.variant = variant
        self.config = config
        self.out = out
        if config.features:
            feature_set(config.features, variant)  # a ValueError for an unknown or unfit set
        self.init_sha256 = ""
        """The sha256 of ``config.init``'s ``.npz`` as the run read it (empty without one)."""
        self.levels = int(variant.max_game_value())
        self.returns = _Returns(config.lam)
        ckpt = checkpoint_path(out)
        if resume:
            if not ckpt.is_file():
                raise ValueError(f"no checkpoint {str(ckpt)!r} to resume from")
            names = tuple(f"{m}_{k}" for m in ("m", "v") for k in ("w1", "b1", "w2", "b2"))
            net, state = OutcomeNet.load(ckpt, names)
            if net.meta.get("kind") not in ("checkpoint", "partial", "interrupted"):
                raise ValueError(f"{ckpt}: not a checkpoint of a batched-td run")
            saved = net.meta.get("config", {})
            mine = asdict(config)
            for key in _SAME_RUN:
                made = saved.get(key, _ADDED.get(key))
                if made != mine[key]:
                    raise ValueError(
                        f"the checkpoint was made with {key}={made!r}, not {mine[key]!r}"
                    )
            self.net = net
            self.init_sha256 = str(net.meta.get("init_sha256", ""))
            self.adam = Adam(net, state, int(net.meta["adam_steps"]))
            self.games = int(net.meta["games"])
            self.chunks = int(net.meta["chunks"])
            self.seconds = float(net.meta["seconds"])
            self.positions = int(net.meta["positions"])
            self.history: list[dict[str, Any]] = list(net.meta.get("history", []))
        elif config.init:
            self.net = self.initial_weights(Path(config.init))
            # The path may be a scratch file that is later renamed or gone; its digest says
            # which committed weights a run started from (loading checked the file against it).
            self.init_sha256 = str(self.net.meta["sha256"])
            self.adam = Adam(self.net, None, 0)
            self.games = self.chunks = self.positions = 0
            self.seconds = 0.0
            self.history = []
        else:
            rng = np.random.default_rng(config.seed)
            self.net = OutcomeNet.initial(
                config.hidden, self.levels, rng, {}, features=config.features
            )
            self.adam = Adam(self.net, None, 0)
            self.games = self.chunks = self.positions = 0
            self.seconds = 0.0
            self.history = []
        self.net.meta = {"levels": self.levels, "scale": scale_for(variant)}
        self.rivals = 0
        """Games ``0 … rivals − 1`` are played against ``heuristic`` (``versus_heuristic``)."""
        self.heuristic: HeuristicEvaluation | None = None
        if config.versus_heuristic > 0:
            self.rivals = max(1, round(config.versus_heuristic * config.envs))
            self.heuristic = HeuristicEvaluation.of(variant)
        self.playing = False
        """A chunk is in play (a checkpoint now is of a chunk cut short)."""
        self.started = time.perf_counter() - self.seconds

    def initial_weights(self, path: Path) -> OutcomeNet:
        """``config.init``'s net, checked to be one this run could have made (a ValueError)."""
        net, _ = OutcomeNet.load(path)
        made_for = net.meta.get("variant")
        if made_for != self.variant.name:
            raise ValueError(f"{path}: weights for {made_for!r}, not {self.variant.name!r}")
        if net.hidden != self.config.hidden or net.levels != self.levels:
            raise ValueError(
                f"{path}: {net.hidden} hidden units and {net.levels} levels, not "
                f"{self.config.hidden} and {self.levels} (--hidden)"
            )
        wanted = self.config.features
        if wanted and not net.features:
            return net.with_features(wanted)
        if net.features != wanted:
            raise ValueError(
                f"{path}: the net reads the feature set {net.features or 'none'!r}, not "
                f"{wanted or 'none'!r} (--features)"
            )
        return net

    # -- files -------------------------------------------------------------------------------

    def meta(self, kind: str) -> dict[str, Any]:
        return {
            "kind": kind,
            "variant": self.variant.name,
            "scale": scale_for(self.variant),
            "levels": self.levels,
            "method": "batched-td",
            "config": asdict(self.config),
            **({"init_sha256": self.init_sha256} if self.init_sha256 else {}),
            "games": self.games,
            # A cut chunk (partial or interrupted) counts as played: resuming starts the next.
            "chunks": self.chunks + (kind != "checkpoint" and kind != "weights" and self.playing),
            "positions": self.positions,
            "adam_steps": self.adam.steps,
            "seconds": round(time.perf_counter() - self.started, 1),
            "history": self.history,
        }

    def save(self, kind: str = "checkpoint") -> None:
        self.net.meta = self.meta(kind)
        self.net.save(checkpoint_path(self.out), self.adam.state())
        self.net.meta = self.meta("weights" if kind == "checkpoint" else kind + " weights")
        self.net.save(self.out)

    # -- play --------------------------------------------------------------------------------

    def env(self, chunk: int) -> Any:
        from nardy.env.vector import batched_env

        options = dict(self.variant.options)
        if options.get("cube"):
            options["cube"] = False  # money play without the cube: the lean whole-batch flow
        env = batched_env(
            self.variant.name,
            self.config.envs,
            encoder=BOARD_ENCODER,
            auto_forced=not self.config.learn_forced,
            **options,
        )
        env.reset(seed=self.config.seed * SEED_STRIDE + chunk * self.config.envs)
        return env

    def chunk(self, target: int, say: Say, every: float) -> None:
        """Play chunk number :attr:`chunks` until ``target`` games have finished in it."""
        config, net = self.config, self.net
        n = config.envs
        env = self.env(self.chunks)
        trails: list[list[Step]] = [[] for _ in range(n)]
        waiting_x: list[F32] = []
        waiting_y: list[F32] = []
        waiting = 0
        losses: list[float] = []
        done = 0
        chunk_start = time.perf_counter()
        cpu_start = time.process_time()
        shown = last_save = chunk_start
        games_before = self.games
        explore = config.explore
        # Seeded by the run's seed and the chunk: a resumed run draws what one run would.
        rng = np.random.default_rng((config.seed, self.chunks)) if explore else None
        rivals = self.rivals
        against: list[float] = []
        """The net's points in each finished game against ``heuristic``."""
        self.playing = True
        while done < target:
            counts = env.counts.copy()
            x = np.concatenate([env.afterstates(i, BOARD_ENCODER) for i in range(n)])
            p = net.outcomes(x)
            equity = net.equity_of_outcomes(p)
            best = _argmax_by_game(equity, counts)
            starts = np.cumsum(counts) - counts
            rows = starts + best
            movers = env.agents.tolist()
            chosen = best
            if rivals:
                chosen = self.heuristic_plays(env, chosen, movers)
            explored = None
            if rng is not None:
                chosen, explored = _explore(rng, chosen, counts, explore, rivals)
            chosen_x, chosen_p = x[rows], p[rows]
            if chosen is not best:
                taken = starts + chosen
                chosen_x, chosen_p = x[taken], p[taken]
            for i in range(n):
                if explored is not None and explored[i]:
                    # The greedy play's value: what the afterstate before bootstraps from.
                    trails[i].append((chosen_x[i], chosen_p[i], movers[i], p[rows[i]].copy()))
                else:
                    trails[i].append((chosen_x[i], chosen_p[i], movers[i]))
            _, rewards, terminated, _ = env.step(chosen)
            for i in np.flatnonzero(terminated).tolist():
                if done >= target:
                    break
                trail, trails[i] = trails[i], []
                if i < rivals:
                    against.append(float(rewards[i, 1 - i % 2]))
                xs, ys = self.targets(trail, float(rewards[i, 0]))
                waiting_x.append(xs)
                waiting_y.append(ys)
                waiting += xs.shape[0]
                done += 1
                self.games += 1
            if waiting >= config.batch or (done >= target and waiting):
                xs, ys = np.concatenate(waiting_x), np.concatenate(waiting_y)
                losses.append(fit_step(net, self.adam, xs, ys, config.learning_rate))
                self.positions += xs.shape[0]
                waiting_x, waiting_y, waiting = [], [], 0
                if not np.isfinite(net.w1).all():
                    raise RuntimeError(
                        f"training diverged at game {self.games}: lower --learning-rate"
                    )
            now = time.perf_counter()
            if now - shown >= every:
                shown = now
                rate = (self.games - games_before) / max(time.process_time() - cpu_start, 1e-9)
                loss = float(np.mean(losses[-50:])) if losses else math.nan
                say(
                    f"{self.variant.name}: {self.games:,} games (chunk {self.chunks + 1}), "
                    f"{rate:.0f} games per CPU-second, loss {loss:.4f}, "
                    f"{now - self.started:.0f} s in all"
                )
            if now - last_save >= CHECKPOINT_SECONDS:
                last_save = now
                self.save("partial")
        elapsed = max(time.process_time() - cpu_start, 1e-9)
        self.playing = False
        self.chunks += 1
        entry: dict[str, Any] = {
            "chunk": self.chunks,
            "games": self.games,
            "seconds": round(time.perf_counter() - self.started, 1),
            "cpu_seconds": round(elapsed, 1),
            "games_per_cpu_second": round(done / elapsed, 1),
            "loss": round(float(np.mean(losses)), 5) if losses else None,
        }
        if against:
            # A training curve, not an evaluation: the net plays greedily, without duplicate dice.
            entry["heuristic_games"] = len(against)
            entry["points_vs_heuristic"] = round(float(np.mean(against)), 4)
        self.history.append(entry)
        self.save()
        if config.keep_chunks:
            self.net.save(chunk_path(self.out, self.chunks))
        if config.eval_games:
            # The ``neural`` bot plays the weights just written, as a user's would.
            entry.update(evaluate(self.variant, self.out, config.eval_games))
            self.save()

    def heuristic_plays(
        self, env: Any, chosen: npt.NDArray[np.int64], movers: list[int]
    ) -> npt.NDArray[np.int64]:
        """``chosen`` with the plays of ``heuristic`` where it decides (game ``i < rivals``, its
        colour ``i % 2`` to move, more than one legal play): the first result of highest value
        by its evaluation, all games' results evaluated in one call."""
        evaluation = self.heuristic
        assert evaluation is not None
        games = [i for i in range(self.rivals) if movers[i] == i % 2 and env.counts[i] > 1]
        if not games:
            return chosen
        groups = [env.afterstate_keys(i) for i in games]
        values = evaluate_keys(evaluation, [key for keys in groups for key in keys])
        sizes = np.array([len(keys) for keys in groups], dtype=np.int64)
        out = chosen.copy()
        out[games] = _argmax_by_game(values, sizes)
        return out

    def targets(self, trail: list[Step], white_points: float) -> tuple[F32, F32]:
        """The λ-return targets of one finished game's chosen afterstates, each from its mover's
        view (the module docstring). A step with a fourth item was explored: the item is the
        greedy play's outcome probabilities, and the return before it stops there."""
        levels = self.levels
        xs = np.stack([t[0] for t in trail])
        values = np.stack([t[1] for t in trail])
        black = np.array([t[2] == 1 for t in trail])
        # White's frame: a Black mover's probabilities seen from White's side.
        values[black] = flip_outcomes(values[black], levels)
        z = outcome_targets(np.array([white_points]), levels)
        cuts = [t for t, step in enumerate(trail) if len(step) > 3]
        if cuts:
            g = self.cut_returns(trail, values, z, black, cuts)
        else:
            seq = np.concatenate([values[1:], z])
            g = self.returns.matrix(len(trail)) @ seq
        g[black] = flip_outcomes(g[black], levels)
        return xs, g.astype(np.float32)

    def cut_returns(
        self,
        trail: list[Step],
        values: F32,
        z: F32,
        black: npt.NDArray[np.bool_],
        cuts: list[int],
    ) -> F32:
        """The λ-returns in White's frame with the trace cut before each explored step ``k``:
        ``G_{k−1}`` is the greedy play's value at ``k`` (``G_t = (1 − λ) V_{t+1} + λ G_{t+1}``
        elsewhere, ``G_{T−1} = z``), by the recursion itself."""
        lam = np.float32(self.config.lam)
        greedy: dict[int, F32] = {}
        for k in cuts:
            step = trail[k]
            assert len(step) == 4
            value = step[3][None, :]
            if black[k]:
                value = flip_outcomes(value, self.levels)
            greedy[k] = value[0]
        length = len(trail)
        g = np.empty_like(values)
        g[length - 1] = z[0]
        for t in range(length - 2, -1, -1):
            following = t + 1
            if following in greedy:
                g[t] = greedy[following]
            else:
                g[t] = (1 - lam) * values[following] + lam * g[following]
        return g


CHECKPOINT_SECONDS = 30 * 60.0
"""A chunk running this long writes a checkpoint on its way (the issue: at least every 30
minutes)."""


def _explore(
    rng: np.random.Generator,
    chosen: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    epsilon: float,
    rivals: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """ε-greedy: each self-play game's (``i ≥ rivals``) decision is played at random with
    probability ``epsilon``; returns the plays and which were explored (a random play other than
    the chosen one). Every game draws every step, so the draws do not depend on the play."""
    draw = rng.random(counts.size)
    pick = (rng.random(counts.size) * counts).astype(np.int64)
    explored = (draw < epsilon) & (pick != chosen)
    explored[:rivals] = False
    return np.where(explored, pick, chosen), explored


def _argmax_by_game(
    values: npt.NDArray[np.floating[Any]], counts: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Per game (consecutive runs of ``counts`` rows) the index of its first highest value."""
    starts = np.cumsum(counts) - counts
    top = np.maximum.reduceat(values, starts)
    owner = np.repeat(np.arange(counts.size), counts)
    index = np.arange(values.size)
    candidates = np.where(values == top[owner], index, values.size)
    first: npt.NDArray[np.int64] = np.minimum.reduceat(candidates, starts) - starts
    return first


def versus_random(
    variant: Variant, net: OutcomeNet, games: int, seed: int = 0, envs: int = 64
) -> float:
    """Points per game of ``net`` (greedy, 0-ply) against uniformly random play over ``games``
    games in the batched environment: the net plays White in the even games, Black in the odd;
    a cheap check that a net has learnt something (random play is what an untrained net's
    arbitrary preferences amount to)."""
    from nardy.env.vector import batched_env

    options = dict(variant.options)
    if options.get("cube"):
        options["cube"] = False
    n = min(envs, games)
    env = batched_env(variant.name, n, encoder=BOARD_ENCODER, **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seat = np.arange(n) % 2
    total, done = 0.0, 0
    while done < games:
        counts = env.counts.copy()
        x = np.concatenate([env.afterstates(i, BOARD_ENCODER) for i in range(n)])
        best = _argmax_by_game(net.equity_of_outcomes(net.outcomes(x)), counts)
        random = (rng.random(n) * counts).astype(np.int64)
        acts = np.where(env.agents == seat, best, random)
        _, rewards, terminated, _ = env.step(acts)
        for i in np.flatnonzero(terminated).tolist():
            if done < games:
                total += float(rewards[i, seat[i]])
                done += 1
    return total / games


def evaluate(variant: Variant, weights: Path, games: int) -> dict[str, Any]:
    """Points per game of the ``neural`` bot with ``weights`` against ``heuristic`` in duplicate
    pairs (same dice, seats swapped), with their standard error over pairs and the win rate."""
    from nardy.bots import HeuristicBot, play_game
    from nardy.bots.neural import NeuralBot
    from nardy.core.dice import SeededDice
    from nardy.train.td import EVAL_SEED_OFFSET

    pairs = max(2, (games + 1) // 2)
    per_pair: list[float] = []
    wins = 0
    for pair in range(pairs):
        total = 0.0
        for colour in (0, 1):
            neural = NeuralBot(pair, weights)
            neural.bind(variant)
            heuristic = HeuristicBot(pair)
            bots = (neural, heuristic) if colour == 0 else (heuristic, neural)
            result = play_game(variant, bots, SeededDice(EVAL_SEED_OFFSET + pair)).result
            assert result is not None
            won = result.winner == colour
            wins += won
            total += result.points if won else -result.points
        per_pair.append(total / 2)
    mean = float(np.mean(per_pair))
    se = float(np.std(per_pair, ddof=1) / math.sqrt(pairs))
    return {
        "vs_heuristic": round(mean, 4),
        "vs_heuristic_se": round(se, 4),
        "win_rate": round(wins / (2 * pairs), 4),
        "eval_games": 2 * pairs,
    }


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill PID`` of a background run) stops the run as Ctrl-C does: checkpoint
    first."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave SIGTERM alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def train(
    variant: Variant,
    config: BatchedConfig,
    out: Path,
    *,
    resume: bool = False,
    say: Say | None = None,
    every: float = 30.0,
) -> OutcomeNet:
    """Train (or continue from ``out``'s checkpoint) until ``config.games`` games; write ``out``
    and its checkpoint after every chunk. Returns the net. A KeyboardInterrupt writes the
    checkpoint and is raised again."""
    out = Path(out)
    config.check()
    run = _Run(variant, config, out, resume=resume)
    quiet: Say = say or (lambda text: None)
    with _terminate_as_interrupt():
        try:
            while run.games < config.games:
                run.chunk(min(config.chunk, config.games - run.games), quiet, every)
                entry = run.history[-1]
                text = (
                    f"{variant.name}: chunk {entry['chunk']} done, {run.games:,} games, "
                    f"{entry['games_per_cpu_second']} games per CPU-second, loss {entry['loss']}"
                )
                if "vs_heuristic" in entry:
                    text += (
                        f", {entry['vs_heuristic']:+.3f} ± {entry['vs_heuristic_se']:.3f} "
                        f"pts/game against heuristic ({entry['eval_games']} games)"
                    )
                quiet(text + f"; wrote {out}")
        except KeyboardInterrupt:
            run.save("interrupted" if run.playing else "checkpoint")
            quiet(f"interrupted: checkpoint at {run.games:,} games in {checkpoint_path(out)}")
            raise
    run.net.meta = run.meta("weights")
    return run.net
