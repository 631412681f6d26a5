"""Statistics for bot-arena results: duplicate-pair summaries, Bradley-Terry/Elo ratings, SPRT.

Pure Python (``math``/``statistics`` only).  Conventions:

* A game result is A's points from A's point of view (``+2`` = A won a gammon, ``-1`` = A lost).
* A *duplicate pair* is the two games played on the same dice stream with the seats swapped.
* Elo uses the logistic scale ``P(i beats j) = 1 / (1 + 10 ** (-(R_i - R_j) / 400))``.

See ``docs/statistics.md`` for the formulas and the choices made (leftover games, priors).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Literal

__all__ = [
    "MIN_UNITS_SHOWN",
    "PairingStats",
    "Ratings",
    "Sprt",
    "Summary",
    "elo_from_score",
    "fit_ratings",
    "normal_ppf",
    "score_from_elo",
    "se_shown",
    "summarize",
    "summarize_sums",
    "t_cdf",
    "t_ppf",
    "tally",
]

ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo = 400*log10(odds) = ELO_PER_NAT * ln(odds)
NORMAL_MIN_N = 30  # from this many units on, confidence intervals use the normal quantile

MIN_UNITS_SHOWN = 10
"""The fewest units (duplicate pairs of a pairing; games or matches of ``nardy play``) whose
standard error and interval the printed tables show; below it they print ``n/a``. The SE is
the sample SD over √n, and the SD of a few units is itself a guess: its relative error is about
1/√(2(n−1)), 71 % at 2 units and 24 % at 10, and results that take few values (±1, ±2, a match's
±1) often make a few units all alike, so a pairing of two pairs printed "+2.00..+2.00,
SE 0.000" — certainty from two pairs (issue 34). The JSON outputs keep the numbers, with the
unit count next to them (``pairs``, ``units``), for a reader who applies his own rule."""


def se_shown(n: int) -> bool:
    """Whether a table prints the SE and interval of a mean over ``n`` units
    (:data:`MIN_UNITS_SHOWN`)."""
    return n >= MIN_UNITS_SHOWN


# ----------------------------------------------------------------------------------------------
# Quantiles
# ----------------------------------------------------------------------------------------------


def normal_ppf(p: float) -> float:
    """Standard normal quantile ``z_p`` (``statistics.NormalDist().inv_cdf``)."""
    return NormalDist().inv_cdf(p)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz, Numerical Recipes)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
    lbt += b * math.log1p(-x)
    bt = math.exp(lbt)
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def t_cdf(x: float, df: float) -> float:
    """Student t CDF: ``F(x) = 1 - I_{df/(df+x^2)}(df/2, 1/2) / 2`` for ``x >= 0``, symmetric."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    tail = 0.5 * _betainc(0.5 * df, 0.5, df / (df + x * x))
    return 1.0 - tail if x >= 0 else tail


@functools.lru_cache(maxsize=1024)
def t_ppf(p: float, df: float) -> float:
    """Student t quantile ``t_{p, df}``: inverts :func:`t_cdf` by bisection (~1e-12 accuracy).

    Known values: ``t_ppf(0.975, 5) = 2.5706``, ``t_ppf(0.975, 29) = 2.0452``.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be > 0, got {df}")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    if p == 0.5:
        return 0.0
    lo, hi = 0.0, 2.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def _two_sided_quantile(n: int, level: float) -> tuple[float, Literal["t", "normal"]]:
    """Quantile for a two-sided ``level`` interval from ``n`` units: t(n-1) below 30, else z."""
    p = 0.5 + level / 2.0
    if n >= NORMAL_MIN_N:
        return normal_ppf(p), "normal"
    return t_ppf(p, n - 1), "t"


# ----------------------------------------------------------------------------------------------
# Means, standard errors, duplicate pairs
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary:
    """Mean of ``n`` i.i.d. units with ``se = sd / sqrt(n)`` and CI ``mean +- q * se``.

    ``q`` is ``t_{(1+level)/2, n-1}`` for ``n < 30`` (``method == "t"``), else the normal quantile.
    ``sd``/``se``/``ci`` are NaN when ``n < 2`` (``mean`` is NaN when ``n == 0``).
    """

    n: int
    mean: float
    sd: float
    se: float
    ci: tuple[float, float]
    level: float
    method: Literal["t", "normal"]


def summarize(values: Sequence[float], level: float = 0.95) -> Summary:
    """:class:`Summary` of ``values`` (sample SD with the ``n - 1`` denominator)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = len(values)
    nan = math.nan
    if n == 0:
        return Summary(0, nan, nan, nan, (nan, nan), level, "t")
    mean = math.fsum(values) / n
    if n < 2:
        return Summary(n, mean, nan, nan, (nan, nan), level, "t")
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    se = sd / math.sqrt(n)
    q, method = _two_sided_quantile(n, level)
    return Summary(n, mean, sd, se, (mean - q * se, mean + q * se), level, method)


def summarize_sums(n: int, total: Fraction, squares: Fraction, level: float = 0.95) -> Summary:
    """:func:`summarize` of ``n`` values given only their exact ``total`` and sum of
    ``squares`` (running totals: no list of values). The variance is computed exactly, so the
    result equals :func:`summarize` of the same values up to the last bits of a float."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    nan = math.nan
    if n <= 0:
        return Summary(0, nan, nan, nan, (nan, nan), level, "t")
    mean = float(total / n)
    if n < 2:
        return Summary(n, mean, nan, nan, (nan, nan), level, "t")
    variance = max((squares - total * total / n) / (n - 1), Fraction(0))
    sd = math.sqrt(float(variance))
    se = sd / math.sqrt(n)
    q, method = _two_sided_quantile(n, level)
    return Summary(n, mean, sd, se, (mean - q * se, mean + q * se), level, method)


@dataclass(frozen=True, slots=True)
class PairingStats:
    """Points-per-game statistics for bot A vs bot B from duplicate pairs.

    ``paired`` uses the pair mean ``(g1 + g2) / 2`` as the unit (n = pairs), which cancels the
    dice luck and seat advantage shared by the two games.  ``independent`` treats the same games
    as i.i.d. (n = 2 * pairs).  With per-game variance ``s^2`` and within-pair correlation ``rho``,
    ``Var(pair mean) = s^2 (1 + rho) / 2``, so ``se_ratio = paired.se / independent.se`` is about
    ``sqrt(1 + rho)``.

    A game without its partner (``unpaired``) is left out of *both* summaries: its dice luck and
    seat advantage are not hedged, and keeping both summaries on the same games keeps them
    comparable.  It is reported so callers can show it (and pair it once its partner is played).
    """

    pairs: tuple[tuple[float, float], ...]
    unpaired: tuple[float, ...] = ()
    level: float = 0.95

    @classmethod
    def from_games(
        cls,
        points: Sequence[float],
        pair_ids: Sequence[Hashable] | None = None,
        level: float = 0.95,
    ) -> PairingStats:
        """Group per-game points into pairs.

        Without ``pair_ids`` games ``2k`` and ``2k+1`` form a pair (a trailing odd game is
        unpaired).  With ``pair_ids`` (one id per game, e.g. the dice seed) games sharing an id
        form a pair; an id seen once is unpaired; an id seen more than twice is an error.
        """
        for v in points:
            if not math.isfinite(v):
                raise ValueError(f"game points must be finite, got {v}")
        if pair_ids is None:
            m = len(points) - len(points) % 2
            pairs = tuple((float(points[i]), float(points[i + 1])) for i in range(0, m, 2))
            return cls(pairs, tuple(float(v) for v in points[m:]), level)
        if len(pair_ids) != len(points):
            raise ValueError("pair_ids must have one id per game")
        groups: dict[Hashable, list[float]] = {}
        for pid, v in zip(pair_ids, points, strict=True):
            groups.setdefault(pid, []).append(float(v))
        bad = [pid for pid, g in groups.items() if len(g) > 2]
        if bad:
            raise ValueError(f"more than two games share pair id(s) {bad[:5]}")
        return cls(
            tuple((g[0], g[1]) for g in groups.values() if len(g) == 2),
            tuple(g[0] for g in groups.values() if len(g) == 1),
            level,
        )

    @property
    def n_pairs(self) -> int:
        return len(self.pairs)

    @property
    def mean(self) -> float:
        """Mean points per game over complete pairs."""
        return self.paired.mean

    @property
    def paired(self) -> Summary:
        return summarize([(a + b) / 2.0 for a, b in self.pairs], self.level)

    @property
    def independent(self) -> Summary:
        return summarize([v for pair in self.pairs for v in pair], self.level)

    @property
    def se_ratio(self) -> float:
        """``paired.se / independent.se`` (< 1 when duplicate dice help)."""
        ind = self.independent.se
        return self.paired.se / ind if ind > 0 else math.nan

    @property
    def variance_reduction(self) -> float:
        """``1 - se_ratio**2``: fraction of the variance of the mean removed by pairing."""
        return 1.0 - self.se_ratio**2


# ----------------------------------------------------------------------------------------------
# Bradley-Terry / Elo ratings
# ----------------------------------------------------------------------------------------------

Results = Mapping[tuple[str, str], tuple[float, float]]


def score_from_elo(elo: float) -> float:
    """Expected score of an ``elo`` edge: ``1 / (1 + 10^(-elo/400))``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_from_score(score: float) -> float:
    """Inverse of :func:`score_from_elo`: ``-400 log10(1/s - 1)`` (+-inf at 1 and 0)."""
    if score >= 1.0:
        return math.inf
    if score <= 0.0:
        return -math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def tally(
    games: Iterable[tuple[str, str, float]], weight: Literal["wins", "points"] = "wins"
) -> dict[tuple[str, str], tuple[float, float]]:
    """Turn ``(a, b, a_points)`` games into ``{(a, b): (a_wins, b_wins)}`` for :func:`fit_ratings`.

    ``weight="wins"`` counts a win as 1 (a 0-point game as half a win each); ``"points"`` credits
    the winner with ``|points|`` (a gammon counts as two wins).
    """
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for a, b, pts in games:
        if a == b:
            raise ValueError(f"a bot cannot play itself: {a!r}")
        key, sign = ((a, b), 1.0) if a <= b else ((b, a), -1.0)
        pts *= sign
        if weight == "wins":
            wa, wb = (1.0, 0.0) if pts > 0 else (0.0, 1.0) if pts < 0 else (0.5, 0.5)
        else:
            wa, wb = max(pts, 0.0), max(-pts, 0.0)
        old = out.get(key, (0.0, 0.0))
        out[key] = (old[0] + wa, old[1] + wb)
    return out


@dataclass(frozen=True, slots=True)
class Ratings:
    """Fitted Elo ratings; ``cov`` is the Elo^2 covariance matrix in ``bots`` order."""

    bots: tuple[str, ...]
    elo: dict[str, float]
    se: dict[str, float]
    cov: tuple[tuple[float, ...], ...]
    anchor: str | None
    iterations: int

    def ci(self, bot: str, z: float = 1.96) -> tuple[float, float]:
        """``elo +- z * se`` for one bot (SE relative to the anchor / the mean)."""
        return self.elo[bot] - z * self.se[bot], self.elo[bot] + z * self.se[bot]

    def diff(self, a: str, b: str) -> tuple[float, float]:
        """``(R_a - R_b, se)`` with ``se^2 = C_aa + C_bb - 2 C_ab`` (independent of anchoring)."""
        i, j = self.bots.index(a), self.bots.index(b)
        var = self.cov[i][i] + self.cov[j][j] - 2.0 * self.cov[i][j]
        return self.elo[a] - self.elo[b], math.sqrt(max(var, 0.0))

    def table(self) -> list[tuple[str, float, float]]:
        """``(bot, elo, se)`` rows, strongest first."""
        return sorted(((b, self.elo[b], self.se[b]) for b in self.bots), key=lambda r: -r[1])


def _inverse(m: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan inverse with partial pivoting; raises ValueError if singular."""
    n = len(m)
    a = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(m)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[piv][col]) < 1e-300:
            raise ValueError("singular matrix (are some bots not connected by games?)")
        a[col], a[piv] = a[piv], a[col]
        inv_p = 1.0 / a[col][col]
        a[col] = [x * inv_p for x in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                f = a[r][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]


def _strongly_connected(k: int, beats: list[list[bool]]) -> bool:
    def reach(adj: list[list[bool]]) -> set[int]:
        seen, stack = {0}, [0]
        while stack:
            i = stack.pop()
            for j in range(k):
                if adj[i][j] and j not in seen:
                    seen.add(j)
                    stack.append(j)
        return seen

    rev = [[beats[j][i] for j in range(k)] for i in range(k)]
    return len(reach(beats)) == k and len(reach(rev)) == k


def fit_ratings(
    results: Results,
    *,
    anchor: str | None = None,
    prior: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> Ratings:
    """Bradley-Terry maximum-likelihood Elo ratings by damped Newton iteration.

    ``results[(a, b)] = (a_wins, b_wins)`` (floats allowed: draws as halves, or point weights
    from :func:`tally`).  With ``p_ij = 1 / (1 + exp(t_j - t_i))`` (``t`` in nats), the
    log-likelihood is ``L = sum w_ij log p_ij``; gradient ``g_i = sum_j (w_ij - n_ij p_ij)``;
    observed information ``I_ii = sum_j n_ij p_ij (1 - p_ij)``, ``I_ij = -n_ij p_ij (1 - p_ij)``.

    ``prior`` adds that many virtual draws (half a win each way) to every pairing that was played
    (as BayesElo does), so a bot that won or lost everything still gets a finite rating; with
    ``prior=0`` such data raise ValueError.  Ratings are anchored so their mean is 0, or so that
    ``anchor`` is 0.  The covariance is the inverse information of the free parameters, mapped to
    the chosen anchoring (``P C P`` with ``P = I - J/k`` for mean anchoring); Elo = nats * 400/ln10.
    """
    if prior < 0:
        raise ValueError("prior must be >= 0")
    names = sorted({b for key in results for b in key})
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} has no games")
    k = len(names)
    if k < 2:
        raise ValueError("need results between at least two bots")
    idx = {b: i for i, b in enumerate(names)}
    w = [[0.0] * k for _ in range(k)]  # w[i][j] = wins of i over j
    for (a, b), (wa, wb) in results.items():
        if a == b:
            raise ValueError(f"a bot cannot play itself: {a!r}")
        if wa < 0 or wb < 0 or not (math.isfinite(wa) and math.isfinite(wb)):
            raise ValueError(f"win counts must be finite and >= 0: {(a, b)} -> {(wa, wb)}")
        w[idx[a]][idx[b]] += wa
        w[idx[b]][idx[a]] += wb
    for i in range(k):
        for j in range(i + 1, k):
            if w[i][j] + w[j][i] > 0:
                w[i][j] += prior / 2.0
                w[j][i] += prior / 2.0
    if not _strongly_connected(k, [[w[i][j] > 0 for j in range(k)] for i in range(k)]):
        raise ValueError(
            "maximum likelihood ratings do not exist: some group of bots never lost (or never "
            "played) to the rest; use prior > 0 and make sure every bot is connected by games"
        )
    n = [[w[i][j] + w[j][i] for j in range(k)] for i in range(k)]
    ref = idx[anchor] if anchor is not None else 0
    free = [i for i in range(k) if i != ref]

    def loglik(t: list[float]) -> float:
        return math.fsum(
            -w[i][j] * math.log1p(math.exp(t[j] - t[i]))
            if t[j] - t[i] < 30
            else -w[i][j] * (t[j] - t[i])
            for i in range(k)
            for j in range(k)
            if w[i][j] > 0
        )

    def info(t: list[float]) -> tuple[list[float], list[list[float]]]:
        g, h = [0.0] * k, [[0.0] * k for _ in range(k)]
        for i in range(k):
            for j in range(i + 1, k):
                if n[i][j] == 0:
                    continue
                p = 1.0 / (1.0 + math.exp(t[j] - t[i]))
                g[i] += w[i][j] - n[i][j] * p
                g[j] -= w[i][j] - n[i][j] * p
                v = n[i][j] * p * (1.0 - p)
                h[i][i] += v
                h[j][j] += v
                h[i][j] -= v
                h[j][i] -= v
        return g, h

    t = [0.0] * k
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        g, h = info(t)
        inv = _inverse([[h[i][j] for j in free] for i in free])
        m = len(free)
        step = [sum(inv[r][c] * g[free[c]] for c in range(m)) for r in range(m)]
        base, scale = loglik(t), 1.0
        while True:  # backtracking keeps every step an ascent step
            cand = t[:]
            for r, i in enumerate(free):
                cand[i] += scale * step[r]
            if loglik(cand) >= base - 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        t = cand
        if max(abs(s) for s in step) * scale < tol:
            break
    _, h = info(t)
    red = _inverse([[h[i][j] for j in free] for i in free])
    cov = [[0.0] * k for _ in range(k)]
    for r, i in enumerate(free):
        for c, j in enumerate(free):
            cov[i][j] = red[r][c]
    if anchor is None:  # re-centre: t' = P t, Cov' = P C P
        mean_t = sum(t) / k
        t = [x - mean_t for x in t]
        row = [sum(r) / k for r in cov]
        tot = sum(row) / k
        cov = [[cov[i][j] - row[i] - row[j] + tot for j in range(k)] for i in range(k)]
    s2 = ELO_PER_NAT**2
    cov_elo = tuple(tuple(c * s2 for c in r) for r in cov)
    return Ratings(
        bots=tuple(names),
        elo={b: t[i] * ELO_PER_NAT for b, i in idx.items()},
        se={b: math.sqrt(max(cov_elo[i][i], 0.0)) for b, i in idx.items()},
        cov=cov_elo,
        anchor=anchor,
        iterations=iterations,
    )


# ----------------------------------------------------------------------------------------------
# SPRT
# ----------------------------------------------------------------------------------------------


REGULARIZE = 1e-3  # pseudo-count of an unobserved end of the range (as fishtest does)


def _mle_log_ratio(freqs: Sequence[float], values: Sequence[float], s: float) -> list[float]:
    """``log(f_i / p_i)`` for the ML distribution ``p`` on ``values`` with mean ``s``.

    Maximising ``sum f_i log p_i`` subject to ``sum p_i = 1``, ``sum p_i a_i = s`` gives
    ``p_i = f_i / (1 + th (a_i - s))`` where ``th`` solves ``sum f_i d_i / (1 + th d_i) = 0``
    (``d_i = a_i - s``; the left side is decreasing in ``th``).  Safeguarded Newton.
    Needs ``min(values) < s < max(values)``.
    """
    d = [a - s for a in values]
    lo, hi = -1.0 / max(d), -1.0 / min(d)  # keeps every 1 + th d_i > 0
    th = 0.0
    for _ in range(200):
        phi = math.fsum(f * di / (1.0 + th * di) for f, di in zip(freqs, d, strict=True))
        dphi = -math.fsum(f * (di / (1.0 + th * di)) ** 2 for f, di in zip(freqs, d, strict=True))
        if phi > 0:
            lo = th
        else:
            hi = th
        new = th - phi / dphi if dphi < 0 else 0.5 * (lo + hi)
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        done = abs(new - th) < 1e-14 * max(1.0, abs(th))
        th = new
        if done:
            break
    return [math.log1p(th * di) for di in d]


NORMAL_MIN_PAIRS = 10
"""Pairs before a normal-model SPRT may decide. With fewer, its variance estimate is rough enough
to raise the error rates above alpha and beta (a simulation of normal units at H0 and H1, alpha =
beta = 0.05: 7-9 % deciding from the first pair, 1.5-5 % from the tenth; tests/arena/test_stats)."""
NORMAL_VARIANCE_FLOOR = 1e-12


class Sprt:
    """Sequential probability ratio test on duplicate pairs: the GSPRT of chess-engine testing.

    Each duplicate pair gives one unit ``x``; ``N`` pairs with observed frequencies ``f_i`` of the
    distinct values ``a_i`` give ``LLR = N sum_i f_i log(p1_i / p0_i)``, where ``p_k`` is the
    maximum-likelihood distribution on the same values with mean ``m_k`` (see
    :func:`_mle_log_ratio`).  This is fishtest's pentanomial GSPRT (M. Van den Bergh); for large
    ``N`` it equals ``N (m1 - m0) (2 xbar - m0 - m1) / (2 var)``.  Both ends of the possible range
    get a pseudo-count of 1e-3 when unobserved, so the LLR stays finite (a bot that wins every
    game is accepted after a couple dozen pairs).  Accept H1 when ``LLR >= log((1-beta)/alpha)``,
    H0 when ``LLR <= log(beta/(1-alpha))``; the first decision is kept (``decided_at``).

    * ``Sprt(elo0, elo1)``: a game scores 1 / 0 / 0.5 (A won / lost / 0 points), ``x`` is the
      pair's mean score in ``{0, .25, .5, .75, 1}``, ``m_k = 1 / (1 + 10^(-elo_k/400))``.
    * ``Sprt.for_points(mu0, mu1, max_points=3)``: ``x`` is the pair's mean points per game,
      ``m_k = mu_k``; the range is ``[-max_points, max_points]``.
    * ``Sprt.for_points(mu0, mu1, model="normal")``: the units are taken as normal with an unknown
      variance, and ``LLR = (N / 2) log(S0 / S1)`` with ``S_k = sum (x - m_k)^2`` (the generalized
      likelihood ratio, each hypothesis with its own maximum-likelihood variance); no decision
      before ``min_pairs`` pairs (10), whose variance estimate would be too rough. For
      luck-adjusted points, sums over a game's many rolls: the distribution-free test above lets
      a hypothesis reach its mean through rare outcomes at ``±max_points``, so it cannot use their
      smaller spread (docs/statistics.md).
    """

    def __init__(
        self, elo0: float = 0.0, elo1: float = 50.0, alpha: float = 0.05, beta: float = 0.05
    ) -> None:
        self._init(score_from_elo(elo0), score_from_elo(elo1), alpha, beta, (0.0, 1.0), "score")
        self.elo0, self.elo1 = elo0, elo1

    @classmethod
    def for_points(
        cls,
        mu0: float,
        mu1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        *,
        max_points: float = 3.0,
        model: Literal["pairs", "normal"] = "pairs",
        min_pairs: int = NORMAL_MIN_PAIRS,
    ) -> Sprt:
        """Test H0 ``E[points per game] = mu0`` against H1 ``= mu1``.

        ``max_points`` bounds ``|points|`` of one game (3 = backgammon; raise it for cube play).
        ``model="normal"``: the normal-model test of the class doc, deciding from ``min_pairs``
        pairs on (``max_points`` then only bounds the hypotheses).
        """
        if model not in ("pairs", "normal"):
            raise ValueError(f"model must be 'pairs' or 'normal', not {model!r}")
        if min_pairs < 2:
            raise ValueError("min_pairs must be at least 2 (a variance needs two pairs)")
        self = cls.__new__(cls)
        self._init(mu0, mu1, alpha, beta, (-max_points, max_points), "points")
        self.elo0 = self.elo1 = math.nan
        if model == "normal":
            self.model, self.min_pairs = "normal", min_pairs
        return self

    def _init(
        self,
        m0: float,
        m1: float,
        alpha: float,
        beta: float,
        support: tuple[float, float],
        mode: Literal["score", "points"],
    ) -> None:
        if not support[0] < m0 < m1 < support[1]:
            raise ValueError(f"need {support[0]:g} < H0 < H1 < {support[1]:g}, got {m0}, {m1}")
        if not (0 < alpha < 1 and 0 < beta < 1):
            raise ValueError("alpha and beta must be in (0, 1)")
        self.m0, self.m1, self.alpha, self.beta = m0, m1, alpha, beta
        self.support, self.mode = support, mode
        self.model: Literal["pairs", "normal"] = "pairs"
        self.min_pairs = 1
        self.n = 0
        self.counts: dict[float, int] = {}  # unit value -> number of pairs
        self._decision: Literal["H0", "H1"] | None = None
        self.decided_at: int | None = None

    def update(self, game1: float, game2: float) -> Literal["H0", "H1"] | None:
        """Add one duplicate pair (A's points in each game); return the decision so far."""
        if not (math.isfinite(game1) and math.isfinite(game2)):
            raise ValueError("game points must be finite")
        if self.mode == "score":
            x = sum(1.0 if g > 0 else 0.0 if g < 0 else 0.5 for g in (game1, game2)) / 2.0
        else:
            x = (game1 + game2) / 2.0
        self.counts[x] = self.counts.get(x, 0) + 1
        self.n += 1
        if self._decision is None and self.n >= self.min_pairs:
            llr = self.llr
            lower, upper = self.bounds
            if llr >= upper:
                self._decision, self.decided_at = "H1", self.n
            elif llr <= lower:
                self._decision, self.decided_at = "H0", self.n
        return self._decision

    def state(self) -> dict[str, Any]:
        """What :meth:`restore` needs to continue this test (JSON-ready)."""
        return {
            "counts": [[v, c] for v, c in self.counts.items()],
            "decision": self._decision,
            "decided_at": self.decided_at,
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`state` of a test with the same parameters."""
        self.counts = {float(v): int(c) for v, c in state["counts"]}
        self.n = sum(self.counts.values())
        decision = state.get("decision")
        self._decision = decision if decision in ("H0", "H1") else None
        self.decided_at = state.get("decided_at")

    def update_many(self, pairs: Iterable[tuple[float, float]]) -> Literal["H0", "H1"] | None:
        for g1, g2 in pairs:
            self.update(g1, g2)
        return self._decision

    @property
    def mean(self) -> float:
        """Mean unit (pair score in [0, 1], or points per game); NaN before any data."""
        if not self.n:
            return math.nan
        return math.fsum(v * c for v, c in self.counts.items()) / self.n

    @property
    def var(self) -> float:
        """Population variance of the units; NaN before any data."""
        if not self.n:
            return math.nan
        mean = self.mean
        return math.fsum(c * (v - mean) ** 2 for v, c in self.counts.items()) / self.n

    @property
    def llr(self) -> float:
        """Generalized log-likelihood ratio of H1 against H0 (0 before any data)."""
        if self.n == 0:
            return 0.0
        if self.model == "normal":
            return self._normal_llr()
        cells = dict.fromkeys(self.support, REGULARIZE) | {
            v: float(c) for v, c in self.counts.items()
        }
        values = list(cells)
        total = math.fsum(cells.values())
        freqs = [cells[v] / total for v in values]
        l0 = _mle_log_ratio(freqs, values, self.m0)
        l1 = _mle_log_ratio(freqs, values, self.m1)
        return total * math.fsum(f * (a - b) for f, a, b in zip(freqs, l0, l1, strict=True))

    def _normal_llr(self) -> float:
        """``(N / 2) log(S0 / S1)``; each sum floored at a tiny variance, so that identical units
        give a large finite LLR rather than a division by zero."""
        floor = NORMAL_VARIANCE_FLOOR * self.n
        s0 = max(math.fsum(c * (v - self.m0) ** 2 for v, c in self.counts.items()), floor)
        s1 = max(math.fsum(c * (v - self.m1) ** 2 for v, c in self.counts.items()), floor)
        return self.n / 2.0 * math.log(s0 / s1)

    @property
    def bounds(self) -> tuple[float, float]:
        """``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``."""
        return (
            math.log(self.beta / (1.0 - self.alpha)),
            math.log((1.0 - self.beta) / self.alpha),
        )

    @property
    def decision(self) -> Literal["H0", "H1"] | None:
        return self._decision

    def status_line(self) -> str:
        """One line for progress output."""
        lower, upper = self.bounds
        half = 1.96 * math.sqrt(self.var / self.n) if self.n else math.nan
        if self.mode == "score":
            head = f"SPRT elo0={self.elo0:g} elo1={self.elo1:g}"
            est = f"score {self.mean:.3f}+-{half:.3f}"
            if self.n and 0.0 < self.mean < 1.0:
                est += f" (elo {elo_from_score(self.mean):+.1f})"
        else:
            head = f"SPRT mu0={self.m0:g} mu1={self.m1:g}"
            if self.model == "normal":
                head += " (normal model)"
            est = f"points/game {self.mean:+.3f}+-{half:.3f}"
        verdict = {None: "running", "H0": "H0 accepted", "H1": "H1 accepted"}[self._decision]
        return (
            f"{head} alpha={self.alpha:g} beta={self.beta:g} | pairs {self.n} | {est} | "
            f"LLR {self.llr:+.2f} [{lower:+.2f}, {upper:+.2f}] | {verdict}"
        )
