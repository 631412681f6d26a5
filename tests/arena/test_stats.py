"""Tests for nardy.arena.competition.stats (hand-computed values, t quantiles, ratings, SPRT simulations)."""

from __future__ import annotations

import math
import random

import pytest

from nardy.arena.competition.stats import (
    PairingStats,
    Sprt,
    elo_from_score,
    fit_ratings,
    normal_ppf,
    score_from_elo,
    summarize,
    t_cdf,
    t_ppf,
    tally,
)

ELO = 400 / math.log(10)  # Elo per nat = 173.7178...

# ---------------------------------------------------------------------------------------------
# t quantiles
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [  # standard t-table values (4 decimals)
        (0.975, 1, 12.7062),
        (0.975, 2, 4.3027),
        (0.975, 3, 3.1824),
        (0.975, 5, 2.5706),
        (0.975, 7, 2.3646),
        (0.975, 10, 2.2281),
        (0.975, 29, 2.0452),
        (0.95, 10, 1.8125),
        (0.995, 5, 4.0321),
        (0.9995, 1, 636.6192),
        (0.9, 20, 1.3253),
    ],
)
def test_t_ppf_table(p: float, df: int, expected: float) -> None:
    assert t_ppf(p, df) == pytest.approx(expected, abs=1e-4)
    assert t_ppf(1 - p, df) == pytest.approx(-expected, abs=1e-4)


def test_t_cdf_and_limits() -> None:
    assert t_ppf(0.5, 4) == 0.0
    assert t_cdf(0.0, 3) == pytest.approx(0.5)
    # df = 1 is Cauchy: F(x) = 1/2 + atan(x)/pi
    for x in (-3.0, -0.5, 0.7, 10.0):
        assert t_cdf(x, 1) == pytest.approx(0.5 + math.atan(x) / math.pi, abs=1e-12)
    for p in (0.6, 0.9, 0.975, 0.999):
        assert t_cdf(t_ppf(p, 6.5), 6.5) == pytest.approx(p, abs=1e-12)
        assert t_ppf(p, 1e7) == pytest.approx(normal_ppf(p), abs=1e-5)
    with pytest.raises(ValueError):
        t_ppf(1.0, 5)
    with pytest.raises(ValueError):
        t_ppf(0.9, 0)


# ---------------------------------------------------------------------------------------------
# Summary / PairingStats
# ---------------------------------------------------------------------------------------------

GAMES = [3, -1, 1, 1, -1, -1, 2, 0]


def test_pairing_stats_hand_computed() -> None:
    ps = PairingStats.from_games([*GAMES, 5])  # trailing 5 has no partner
    assert ps.pairs == ((3.0, -1.0), (1.0, 1.0), (-1.0, -1.0), (2.0, 0.0))
    assert ps.unpaired == (5.0,)
    # Pair means: 1, 1, -1, 1 -> mean 2/4 = 0.5
    # deviations .5 .5 -1.5 .5 -> SS = .25*3 + 2.25 = 3 -> var = 3/3 = 1, sd = 1
    # se = 1/sqrt(4) = .5; n = 4 < 30 -> t(0.975, 3) = 3.182446 -> half-width 1.591223
    # CI = (0.5 - 1.591223, 0.5 + 1.591223) = (-1.091223, 2.091223)
    p = ps.paired
    assert (p.n, p.mean, p.sd, p.se, p.method) == (4, 0.5, 1.0, 0.5, "t")
    assert p.ci == pytest.approx((-1.091223, 2.091223), abs=1e-6)
    assert ps.mean == 0.5
    # Independent games: 3 -1 1 1 -1 -1 2 0 -> mean 4/8 = .5
    # deviations 2.5 -1.5 .5 .5 -1.5 -1.5 1.5 -.5 -> squares 6.25 2.25 .25 .25 2.25 2.25 2.25 .25
    # SS = 16 -> var = 16/7, sd = 1.511858; se = sqrt(16/7/8) = sqrt(2/7) = .534522
    # t(0.975, 7) = 2.364624 -> half-width 2.364624 * .534522 = 1.263945
    i = ps.independent
    assert (i.n, i.mean) == (8, 0.5)
    assert i.sd == pytest.approx(math.sqrt(16 / 7))
    assert i.se == pytest.approx(math.sqrt(2 / 7))
    assert i.ci == pytest.approx((0.5 - 1.263945, 0.5 + 1.263945), abs=1e-6)
    # se_ratio = .5 / .534522 = .935414 ; variance_reduction = 1 - .875 = .125
    assert ps.se_ratio == pytest.approx(math.sqrt(7 / 8))
    assert ps.variance_reduction == pytest.approx(0.125)


def test_pairing_stats_pair_ids_and_edge_cases() -> None:
    # ids interleaved: seed 7 -> (3, -1); seed 8 -> (1, 1); seed 9 alone
    ps = PairingStats.from_games([3, 1, -1, 1, 4], pair_ids=[7, 8, 7, 8, 9])
    assert ps.pairs == ((3.0, -1.0), (1.0, 1.0))
    assert ps.unpaired == (4.0,)
    with pytest.raises(ValueError):
        PairingStats.from_games([1, 1, 1], pair_ids=[1, 1, 1])
    with pytest.raises(ValueError):
        PairingStats.from_games([1, 1], pair_ids=[1])
    with pytest.raises(ValueError):
        PairingStats.from_games([1, math.nan])
    one = PairingStats.from_games([2, -1])
    assert one.mean == 0.5 and math.isnan(one.paired.se)
    assert math.isnan(PairingStats.from_games([]).mean)


def test_summary_uses_normal_quantile_from_30() -> None:
    values = [float(v % 5) for v in range(30)]
    s = summarize(values)
    assert s.method == "normal"
    assert s.ci[1] - s.mean == pytest.approx(1.959964 * s.se, rel=1e-6)
    s29 = summarize(values[:29])
    assert s29.method == "t"
    assert s29.ci[1] - s29.mean == pytest.approx(2.048407 * s29.se, rel=1e-6)  # t(0.975, 28)


def test_ci_shrinks_with_more_games() -> None:
    rng = random.Random(5)
    games = [rng.choice([-2, -1, 1, 1, 2, 3]) for _ in range(4000)]
    widths = []
    for n in (40, 400, 4000):
        ci = PairingStats.from_games(games[:n]).paired.ci
        widths.append(ci[1] - ci[0])
    assert widths[0] > widths[1] > widths[2]
    assert widths[1] / widths[2] == pytest.approx(math.sqrt(10), rel=0.25)  # ~ 1/sqrt(n)


def _shared_luck_pair(rng: random.Random, edge: float) -> tuple[float, float]:
    """Duplicate pair: the dice stream favours seat 1 by `luck`; A sits in seat 1, then seat 2."""
    luck = rng.gauss(0, 1.0)
    games = []
    for seat_sign in (1, -1):
        perf = edge + seat_sign * luck + rng.gauss(0, 0.4)
        mult = 2 if abs(perf) > 1.2 else 1  # big swings become gammons
        games.append(mult * (1 if perf > 0 else -1))
    return games[0], games[1]


def test_duplicate_pairing_reduces_se_with_shared_luck() -> None:
    rng = random.Random(11)
    ratios = []
    for _ in range(20):
        points = [g for _ in range(300) for g in _shared_luck_pair(rng, 0.1)]
        ratios.append(PairingStats.from_games(points).se_ratio)
    # games of a pair are strongly anti-correlated (rho ~ -0.7), so se_ratio ~ sqrt(1 + rho)
    assert max(ratios) < 0.75
    # control: independent games (no shared luck) -> no systematic reduction
    rng = random.Random(12)
    indep = [rng.choice([-2, -1, 1, 2]) for _ in range(20000)]
    assert PairingStats.from_games(indep).se_ratio == pytest.approx(1.0, abs=0.05)


# ---------------------------------------------------------------------------------------------
# Bradley-Terry ratings
# ---------------------------------------------------------------------------------------------


def test_elo_score_conversions() -> None:
    assert score_from_elo(0) == 0.5
    assert score_from_elo(400) == pytest.approx(10 / 11)
    assert elo_from_score(0.75) == pytest.approx(400 * math.log10(3))
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_symmetric_results_give_equal_ratings() -> None:
    r = fit_ratings({("A", "B"): (5, 5), ("B", "C"): (7, 7), ("C", "A"): (2, 2)}, prior=0)
    for b in "ABC":
        assert r.elo[b] == pytest.approx(0.0, abs=1e-9)


def test_two_bots_three_to_one() -> None:
    # ML: p = 3/4 -> R_A - R_B = 400 log10(3) = 190.8485; mean anchor -> +-95.4243
    # information of the difference (nats): n p (1-p) = 4 * 3/4 * 1/4 = 0.75
    # SE(diff) = sqrt(1/0.75) nats = 1.154701 * 173.7178 = 200.5920 Elo; each bot half: 100.2960
    r = fit_ratings({("A", "B"): (3, 1)}, prior=0)
    assert r.elo["A"] == pytest.approx(200 * math.log10(3))
    assert r.elo["B"] == pytest.approx(-200 * math.log10(3))
    d, se = r.diff("A", "B")
    assert d == pytest.approx(400 * math.log10(3))
    assert se == pytest.approx(ELO / math.sqrt(0.75))
    assert r.se["A"] == pytest.approx(ELO / math.sqrt(0.75) / 2)
    lo, hi = r.ci("A")
    assert hi - lo == pytest.approx(2 * 1.96 * r.se["A"])
    # same data, reversed key order, through tally()
    games = [("B", "A", -1.0)] * 3 + [("A", "B", -1.0)]
    assert tally(games) == {("A", "B"): (3.0, 1.0)}
    assert fit_ratings(tally(games), prior=0).elo == pytest.approx(r.elo)


def test_three_bots_transitive_exact_fit() -> None:
    # A:B = 3:1, B:C = 3:1, A:C = 9:1.  theta_A - theta_B = ln 3, theta_B - theta_C = ln 3 and
    # theta_A - theta_C = ln 9 reproduce every observed fraction, so the gradient is zero there.
    res = {("A", "B"): (3, 1), ("B", "C"): (3, 1), ("A", "C"): (9, 1)}
    step = 400 * math.log10(3)  # 190.8485
    r = fit_ratings(res, prior=0)
    assert [r.elo[b] for b in "ABC"] == pytest.approx([step, 0.0, -step])
    rc = fit_ratings(res, prior=0, anchor="C")
    assert [rc.elo[b] for b in "ABC"] == pytest.approx([2 * step, step, 0.0])
    assert rc.se["C"] == 0.0
    # Information (nats), v = n p (1-p): A-B 4*.75*.25 = .75, B-C .75, A-C 10*.9*.1 = .9
    # anchor C -> reduced I over (A, B) = [[1.65, -.75], [-.75, 1.5]], det = 1.9125
    # inverse = [[1.5, .75], [.75, 1.65]] / 1.9125 -> var A .784314, var B .862745, cov .392157
    # var(A - B) = .784314 + .862745 - 2 * .392157 = .862745 -> se = .928841 nats = 161.356 Elo
    assert rc.se["A"] == pytest.approx(math.sqrt(1.5 / 1.9125) * ELO)
    assert rc.se["B"] == pytest.approx(math.sqrt(1.65 / 1.9125) * ELO)
    assert rc.diff("A", "B")[1] == pytest.approx(math.sqrt(1.65 / 1.9125) * ELO)
    # pairwise SEs do not depend on the anchoring
    for a, b in (("A", "B"), ("A", "C"), ("B", "C")):
        assert r.diff(a, b)[1] == pytest.approx(rc.diff(a, b)[1])
    assert [row[0] for row in r.table()] == ["A", "B", "C"]


def test_rating_ci_shrinks_with_more_games() -> None:
    # information is linear in the counts: 4x the games -> half the SE
    small = fit_ratings({("A", "B"): (6, 4), ("B", "C"): (5, 5), ("A", "C"): (7, 3)}, prior=0)
    big = fit_ratings({("A", "B"): (24, 16), ("B", "C"): (20, 20), ("A", "C"): (28, 12)}, prior=0)
    for b in "ABC":
        assert big.elo[b] == pytest.approx(small.elo[b])
        assert big.se[b] == pytest.approx(small.se[b] / 2)


def test_perfect_record_needs_prior() -> None:
    with pytest.raises(ValueError, match="prior"):
        fit_ratings({("A", "B"): (10, 0)}, prior=0)
    # prior = 1 virtual draw -> A:B = 10.5 : 0.5 -> diff = 400 log10(21) = 528.89
    r = fit_ratings({("A", "B"): (10, 0)})
    assert r.diff("A", "B")[0] == pytest.approx(400 * math.log10(21))
    assert math.isfinite(r.se["A"])
    # a bot that lost everything among three
    r3 = fit_ratings({("A", "B"): (4, 6), ("A", "C"): (8, 0), ("B", "C"): (9, 0)})
    assert r3.elo["C"] < r3.elo["A"] < r3.elo["B"]
    with pytest.raises(ValueError):  # two groups that never met
        fit_ratings({("A", "B"): (3, 2), ("C", "D"): (1, 1)})
    with pytest.raises(ValueError):
        fit_ratings({("A", "B"): (3, 2)}, anchor="Z")


def test_points_weighting() -> None:
    # A wins 2 gammons (2 pts each), B wins 2 single games -> A:B = 4:2 by points, 2:2 by wins
    games = [("A", "B", 2.0), ("A", "B", 2.0), ("A", "B", -1.0), ("A", "B", -1.0)]
    assert tally(games) == {("A", "B"): (2.0, 2.0)}
    assert tally(games, weight="points") == {("A", "B"): (4.0, 2.0)}
    r = fit_ratings(tally(games, weight="points"), prior=0)
    assert r.diff("A", "B")[0] == pytest.approx(400 * math.log10(2))


def test_estimated_elo_difference_covers_truth() -> None:
    true = {"A": 0.0, "B": 60.0, "C": 150.0}
    hits = runs = 0
    for seed in range(100):
        rng = random.Random(seed)
        games = []
        for a, b in (("A", "B"), ("B", "C"), ("A", "C")):
            p = score_from_elo(true[a] - true[b])
            games += [(a, b, 1.0 if rng.random() < p else -1.0) for _ in range(150)]
        r = fit_ratings(tally(games))
        for a, b in (("A", "B"), ("B", "C"), ("A", "C")):
            d, se = r.diff(a, b)
            runs += 1
            hits += abs(d - (true[a] - true[b])) <= 1.96 * se
    assert hits >= 0.9 * runs


# ---------------------------------------------------------------------------------------------
# SPRT
# ---------------------------------------------------------------------------------------------


def test_sprt_bounds_and_binomial_case() -> None:
    s = Sprt(0, 50, alpha=0.05, beta=0.1)
    assert s.bounds == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))
    assert s.llr == 0.0 and s.decision is None
    # Only pair scores 0 and 1 observed: the ML distribution on {0, 1} with mean s is
    # Bernoulli(s), so the GSPRT is Wald's binomial SPRT.  s0 = .5, s1 = 1/(1 + 10^(-50/400))
    # = .571463; 3 win-win pairs, 1 loss-loss pair:
    # LLR = 3 ln(.571463/.5) + 1 ln(.428537/.5) = 3 * .133592 - .154231 = .246544
    s.update_many([(1, 1), (2, 1), (1, 3), (-1, -2)])
    assert s.counts == {1.0: 3, 0.0: 1}
    assert s.llr == pytest.approx(0.246544, abs=1e-6)
    # mean = 3/4; population variance = 3/4 - 9/16 = 3/16
    assert (s.mean, s.var) == (0.75, 0.1875)
    line = s.status_line()
    assert "pairs 4" in line and "LLR +0.25" in line and "running" in line
    with pytest.raises(ValueError):
        Sprt(50, 0)
    with pytest.raises(ValueError):
        Sprt.for_points(0.0, 4.0)  # outside [-3, 3]
    with pytest.raises(ValueError):
        Sprt(alpha=0.0)


def _constrained_loglik(counts: dict[float, float], s: float) -> float:
    """max sum c_i log p_i over p on {0, .5, 1} with mean s, by golden-section search on p_.5.

    p_1 = s - p_.5/2 and p_0 = 1 - s - p_.5/2 fix the mean; the objective is concave in p_.5.
    """

    def f(q: float) -> float:
        p = {0.0: 1 - s - q / 2, 0.5: q, 1.0: s - q / 2}
        return sum(c * math.log(p[v]) for v, c in counts.items())

    lo, hi = 1e-12, min(2 * s, 2 * (1 - s)) - 1e-12
    g = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(a) < f(b):
            lo = a
        else:
            hi = b
    return f((lo + hi) / 2)


def test_sprt_llr_matches_brute_force_and_normal_limit() -> None:
    s = Sprt(0, 50)
    # scores: (1,1) -> 1, (2,-1) -> .5, (-3,-1) -> 0, (1,-1) -> .5, (1,2) -> 1
    s.update_many([(1, 1), (2, -1), (-3, -1), (1, -1), (1, 2)])
    counts = {0.0: 1.0, 0.5: 2.0, 1.0: 2.0}
    s0, s1 = 0.5, score_from_elo(50)
    expected = _constrained_loglik(counts, s1) - _constrained_loglik(counts, s0)
    assert s.llr == pytest.approx(expected, abs=1e-9)
    # large N, small Elo gap: GSPRT ~ N (s1 - s0)(2 xbar - s0 - s1) / (2 var)
    big = Sprt(0, 5)
    big.update_many([(1, 1)] * 2600 + [(1, -1)] * 5000 + [(-1, -1)] * 2400)
    m0, m1 = 0.5, score_from_elo(5)
    normal = big.n * (m1 - m0) * (2 * big.mean - m0 - m1) / (2 * big.var)
    assert big.llr == pytest.approx(normal, rel=0.01)


def _run_sprt(p: float, seed: int, *, max_pairs: int = 5000) -> Sprt:
    rng = random.Random(seed)
    s = Sprt()  # elo0 = 0, elo1 = 50, alpha = beta = 0.05
    while s.decision is None and s.n < max_pairs:
        # a bot that is "right on purpose" with probability p wins the game
        s.update(*(1 if rng.random() < p else -1 for _ in range(2)))
    return s


def test_sprt_accepts_clearly_stronger_bot_quickly() -> None:
    runs = [_run_sprt(0.7, seed) for seed in range(100)]
    assert sum(r.decision == "H1" for r in runs) >= 95
    assert max(r.n for r in runs) <= 200  # p = .7 is ~147 Elo: a few dozen pairs
    assert "H1 accepted" in runs[0].status_line()


@pytest.mark.slow  # a Monte Carlo run of the SPRT
def test_sprt_equal_bots_rarely_accept_h1() -> None:
    runs = [_run_sprt(0.5, 1000 + seed) for seed in range(100)]
    # 9 false H1 with these seeds; 5.45% over 2000 seeds (nominal alpha = 5%)
    assert sum(r.decision == "H1" for r in runs) <= 10
    assert sum(r.decision == "H0" for r in runs) >= 85


@pytest.mark.slow  # a Monte Carlo run of the SPRT
def test_sprt_with_shared_luck_pairs() -> None:
    # correlated pairs: equal bots mostly split a pair -> low variance -> still no false H1 flood
    false_h1 = 0
    for seed in range(100):
        rng = random.Random(seed)
        s = Sprt()
        while s.decision is None and s.n < 5000:
            s.update(*_shared_luck_pair(rng, 0.0))
        false_h1 += s.decision == "H1"
    assert false_h1 <= 10  # 10 with these seeds; 4.1% over 1000 seeds
    false_h1 = 0  # same in points mode: H0 0 points/game vs H1 0.2 points/game
    for seed in range(100):
        rng = random.Random(seed)
        pts = Sprt.for_points(0.0, 0.2, max_points=2)
        while pts.decision is None and pts.n < 5000:
            pts.update(*_shared_luck_pair(rng, 0.0))
        false_h1 += pts.decision == "H1"
    assert false_h1 <= 10  # 5 with these seeds


def test_sprt_deterministic_winner_and_points_mode() -> None:
    s = Sprt()
    while s.decision is None:
        s.update(1, 2)  # wins every game: the 1e-3 pseudo-count at score 0 keeps LLR finite
    assert s.decision == "H1" and s.n <= 30
    # points mode: H0 mean 0 points/game vs H1 0.25 points/game
    rng = random.Random(3)
    pts = Sprt.for_points(0.0, 0.25)
    while pts.decision is None:
        pts.update(*_shared_luck_pair(rng, 0.5))
    assert pts.decision == "H1"
    assert "points/game" in pts.status_line()
    # decision is latched
    pts.update(-3, -3)
    assert pts.decision == "H1" and pts.decided_at == pts.n - 1


# ---------------------------------------------------------------------------------------------
# The normal-model SPRT (luck-adjusted points)
# ---------------------------------------------------------------------------------------------


def test_normal_model_llr_is_the_generalized_likelihood_ratio() -> None:
    """Units 0.4, 0.6, 0.5 against H0 0 / H1 0.5: S0 = 0.16 + 0.36 + 0.25 = 0.77, S1 = 0.01 +
    0.01 + 0 = 0.02, so LLR = (3 / 2) log(0.77 / 0.02) (worked by hand)."""
    sprt = Sprt.for_points(0.0, 0.5, model="normal", min_pairs=2)
    for x in (0.4, 0.6, 0.5):
        sprt.update(x, x)
    assert sprt.llr == pytest.approx(1.5 * math.log(0.77 / 0.02), rel=1e-12)
    assert "normal model" in sprt.status_line()


def test_normal_model_waits_for_its_minimum_and_uses_a_small_spread() -> None:
    """Pairs of exactly +0.5: the distribution-free test needs 20 pairs (a hypothesis may reach
    its mean through outcomes at ±3), the normal model decides at its tenth pair."""
    pairs_model = Sprt.for_points(0.0, 0.5)
    normal = Sprt.for_points(0.0, 0.5, model="normal")
    for _ in range(40):
        pairs_model.update(0.5, 0.5)
        normal.update(0.5, 0.5)
    assert (normal.decision, normal.decided_at) == ("H1", 10)
    assert pairs_model.decision == "H1" and pairs_model.decided_at == 20
    assert math.isfinite(normal.llr)  # identical units: floored, not a division by zero


def test_normal_model_restores_to_the_same_test() -> None:
    rng = random.Random(5)
    sprt = Sprt.for_points(0.0, 0.25, model="normal")
    for _ in range(7):
        sprt.update(rng.gauss(0.1, 0.6), rng.gauss(0.1, 0.6))
    again = Sprt.for_points(0.0, 0.25, model="normal")
    again.restore(sprt.state())
    assert again.llr == sprt.llr and again.n == 7


@pytest.mark.parametrize("truth", ["H0", "H1"])
def test_normal_model_error_rates_stay_within_alpha_and_beta(truth: str) -> None:
    """Normal units with the spread of luck-adjusted backgammon pairs (SD 0.56), at H0 and at H1:
    the wrong hypothesis is accepted in at most alpha = beta = 5 % of 200 runs (about 1.5-2 %
    expected from the tenth pair on), and the test needs fewer pairs than the distribution-free
    one on the same units (the median is its minimum, 10, against 19-20)."""
    mu0, mu1 = 0.0, 0.5
    mean = mu0 if truth == "H0" else mu1
    rng = random.Random(11 if truth == "H0" else 12)
    wrong, normal_pairs, free_pairs = 0, [], []
    for _ in range(200):
        normal = Sprt.for_points(mu0, mu1, model="normal")
        free = Sprt.for_points(mu0, mu1)
        while normal.decision is None or free.decision is None:
            x = rng.gauss(mean, 0.56)
            normal.update(x, x)
            free.update(x, x)
        wrong += normal.decision != truth
        assert normal.decided_at is not None and free.decided_at is not None
        normal_pairs.append(normal.decided_at)
        free_pairs.append(free.decided_at)
    assert wrong / 200 <= 0.05
    normal_pairs.sort()
    free_pairs.sort()
    assert normal_pairs[100] < free_pairs[100]


def test_a_luck_adjusted_spec_makes_the_normal_model_test() -> None:
    from nardy.arena.competition.ledger import new_sprt
    from nardy.arena.competition.schedule import PoolDef, SprtDef

    pool = PoolDef("backgammon", "backgammon")
    luck = SprtDef(mode="points", mu0=0.0, mu1=0.5, on="luck-adjusted")
    assert new_sprt(luck, pool).model == "normal"
    assert new_sprt(SprtDef(mode="points", mu0=0.0, mu1=0.5), pool).model == "pairs"
    with pytest.raises(ValueError, match="min_pairs"):
        Sprt.for_points(0.0, 0.5, model="normal", min_pairs=1)
