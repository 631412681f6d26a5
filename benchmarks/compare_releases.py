"""This tree's nardy side by side with another install (e.g. the last release), paired, in one run.

    python benchmarks/compare_releases.py --baseline /path/to/other-venv/bin/python [--reps 7]

Each repetition runs the same worker once under each interpreter (``--python``, default this one, and
``--baseline``), in alternating order, one after the other, each in a fresh process that imports its
own ``nardy``. A worker measures, with process CPU time (the machine may be shared):

* **jsonl**: ``run_jsonl_stream`` (the loop of ``nardy plays --jsonl``) over the 2,550 oracle queries
  (``tests/data/backgammon-oracle.jsonl.gz`` as ``{"position": …, "dice": …}`` lines), queries/s;
  then over its doubles and its non-doubles apart;
* **command**: the whole ``nardy plays --variant backgammon --jsonl`` command on the same queries, as a
  child process (user + system CPU, including start-up), queries/s;
* **games**: ``--games`` whole backgammon games between two random players through ``Game``
  (seeded dice and choices, cube refused), games/s;
* **aec**, **batched** (docs/learning.md): random legal actions through ``raw_aec_env`` (``--aec-games``
  games) and ``batched_env`` of 256 games (``--batched-steps`` steps), backgammon and long without the
  cube, games per CPU-second; a digest of every observation and reward, so that the two installs'
  episodes are compared byte for byte;
* **doubles**: one clock read around every ``legal_plays(Position.from_json(p), steps)`` of the
  810 doubles of the oracle, the collector on as a program leaves it (``gc.collect()`` before the
  pass): p50 and p99.

The report gives every measure's median over the repetitions under each interpreter, with min–max,
and the median of the per-repetition ratios (this tree ÷ baseline): the pairs share the machine's
state of the moment, so the ratio is steadier than either rate. Both outputs of the jsonl loop are
also compared byte for byte.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "tests" / "data" / "backgammon-oracle.jsonl.gz"

_WORKER = r"""
import gc, gzip, hashlib, io, json, random, sys, time
from nardy.core import Position, load_variant
from nardy.core.dice import SeededDice
from nardy.core.game import DoubleDecision, Game, PlayDecision, TakeDecision
from nardy.core.jsonl import run_jsonl_stream

queries_path, games = sys.argv[1], int(sys.argv[2])
aec_games, batched_steps = int(sys.argv[4]), int(sys.argv[5])
variant = load_variant("backgammon")
data = open(queries_path, "rb").read()
report = {}

class Sink:
    def __init__(self):
        self.parts = []
    def write(self, text):
        self.parts.append(text)
    def flush(self):
        pass

gc.collect()
sink = Sink()
started = time.process_time()
stats = run_jsonl_stream(variant, io.BytesIO(data), sink)
report["jsonl_cpu"] = time.process_time() - started
report["jsonl_queries"] = stats.queries
report["jsonl_digest"] = hashlib.sha256("".join(sink.parts).encode()).hexdigest()
for subset in ("doubles", "non_doubles"):
    wanted = subset == "doubles"
    part = b"".join(
        line + b"\n"
        for line in data.splitlines()
        if (json.loads(line)["dice"][0] == json.loads(line)["dice"][1]) == wanted
    )
    gc.collect()
    started = time.process_time()
    count = run_jsonl_stream(variant, io.BytesIO(part), Sink()).queries
    report[f"jsonl_{subset}"] = count / (time.process_time() - started)

def play_game(seed):
    rng = random.Random(seed)
    game = Game(variant, SeededDice(seed))
    while game.decision is not None:
        decision = game.decision
        if isinstance(decision, PlayDecision):
            game.decide(rng.randrange(len(decision.plays)))
        elif isinstance(decision, DoubleDecision):
            game.decide(False)
        elif isinstance(decision, TakeDecision):
            game.decide("take")

gc.collect()
started = time.process_time()
for seed in range(games):
    play_game(seed)
report["games_cpu"] = time.process_time() - started
report["games"] = games

doubles = []
with gzip.open(sys.argv[3], "rt", encoding="utf-8") as f:
    for line in f:
        case = json.loads(line)
        a, b = case["dice"]
        if a == b:
            doubles.append((case["position"], (a,) * 4))
clock = time.perf_counter_ns
latencies = []
gc.collect()
for obj, steps in doubles:
    t0 = clock()
    variant.legal_plays(Position.from_json(obj), steps)
    latencies.append(clock() - t0)
latencies.sort()
report["doubles_p50_us"] = latencies[len(latencies) // 2] / 1000
report["doubles_p99_us"] = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))] / 1000

# The learning environments (docs/learning.md): random legal actions, as a user's loop picks them;
# the digest covers every observation, mask and reward, so equal digests mean equal episodes.
import numpy as np
from nardy.env import batched_env, raw_aec_env

for name in ("backgammon", "long"):
    options = {"cube": False} if "cube" in load_variant(name).options else {}
    env = raw_aec_env(name, **options)
    rng = np.random.default_rng(7)
    digest = hashlib.sha256()
    gc.collect()
    started = time.process_time()
    for seed in range(aec_games):
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, _ = env.last()
            digest.update(obs["observation"].tobytes())
            digest.update(repr(reward).encode())
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
    report[f"aec_{name}"] = aec_games / (time.process_time() - started)
    report[f"aec_{name}_digest"] = digest.hexdigest()

    env = batched_env(name, 256, **options)
    rng = np.random.default_rng(7)
    env.reset(seed=7)
    digest = hashlib.sha256()
    finished = 0
    gc.collect()
    started = time.process_time()
    for _step in range(batched_steps):
        obs, rewards, terminated, _ = env.step((rng.random(256) * env.counts).astype(np.int64))
        digest.update(obs["observation"].tobytes())
        digest.update(np.asarray(rewards).tobytes())
        finished += int(np.count_nonzero(terminated))
    report[f"batched_{name}"] = finished / (time.process_time() - started)
    report[f"batched_{name}_digest"] = digest.hexdigest()
print(json.dumps(report))
"""


def write_queries(path: Path) -> int:
    count = 0
    with gzip.open(ORACLE, "rt", encoding="utf-8") as src, path.open("w", encoding="utf-8") as out:
        for line in src:
            case = json.loads(line)
            out.write(json.dumps({"position": case["position"], "dice": case["dice"]}) + "\n")
            count += 1
    return count


def run_worker(
    python: str, queries: Path, games: int, aec_games: int, batched_steps: int
) -> dict[str, Any]:
    done = subprocess.run(
        [
            python,
            "-c",
            _WORKER,
            str(queries),
            str(games),
            str(ORACLE),
            str(aec_games),
            str(batched_steps),
        ],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),  # import the interpreter's own nardy, not this tree's folders
    )
    if done.returncode:
        raise SystemExit(f"the worker failed under {python}:\n{done.stderr}")
    report: dict[str, Any] = json.loads(done.stdout)
    command = [str(Path(python).parent / "nardy"), "plays", "--variant", "backgammon", "--jsonl"]
    with queries.open("rb") as stdin:
        before = _children_cpu()
        subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, check=True)
        report["command_cpu"] = _children_cpu() - before
    return report


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


MEASURES = (
    (
        "jsonl",
        "nardy plays --jsonl loop, queries/s (CPU)",
        lambda r: r["jsonl_queries"] / r["jsonl_cpu"],
        True,
    ),
    ("jsonl-doubles", "same, the 810 doubles only", lambda r: r["jsonl_doubles"], True),
    (
        "jsonl-non-doubles",
        "same, the 1,740 non-doubles only",
        lambda r: r["jsonl_non_doubles"],
        True,
    ),
    (
        "command",
        "whole `nardy plays --jsonl` command, queries/s (CPU, with start-up)",
        lambda r: r["jsonl_queries"] / r["command_cpu"],
        True,
    ),
    ("games", "random-bot backgammon games/s (CPU)", lambda r: r["games"] / r["games_cpu"], True),
    ("p50", "doubles `legal_plays` from JSON, p50 µs", lambda r: r["doubles_p50_us"], False),
    ("p99", "doubles `legal_plays` from JSON, p99 µs", lambda r: r["doubles_p99_us"], False),
    *(
        (
            f"{kind}-{name}",
            f"{title} `{name}`, games/s (CPU)",
            lambda r, key=f"{kind}_{name}": r[key],
            True,
        )
        for kind, title in (
            ("aec", "AEC env, random legal actions,"),
            ("batched", "`batched_env` of 256 games, random legal actions,"),
        )
        for name in ("backgammon", "long")
    ),
)
DIGESTS = (
    "jsonl_digest",
    *(f"{k}_{n}_digest" for k in ("aec", "batched") for n in ("backgammon", "long")),
)
"""The outputs both installs must give byte for byte."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", required=True, help="the other install's python")
    parser.add_argument(
        "--python", default=sys.executable, help="this tree's python (default: this one)"
    )
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--aec-games", type=int, default=100, help="AEC env games a variant")
    parser.add_argument(
        "--batched-steps", type=int, default=200, help="steps of the 256-game batched env"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        queries = Path(tmp) / "queries.jsonl"
        write_queries(queries)
        runs: dict[str, list[dict[str, Any]]] = {"new": [], "base": []}
        for rep in range(args.reps):
            order = [("new", args.python), ("base", args.baseline)]
            if rep % 2:
                order.reverse()
            for name, python in order:
                runs[name].append(
                    run_worker(python, queries, args.games, args.aec_games, args.batched_steps)
                )
            print(f"repetition {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
    identical = True
    for key in DIGESTS:
        same = len({r[key] for r in runs["new"] + runs["base"]}) == 1
        identical &= same
        print(
            f"{key.removesuffix('_digest')} output identical in both installs: {'yes' if same else 'NO'}"
        )
    print(f"repetitions: {args.reps}, paired; median [min–max]\n")
    print("| measure | this tree | baseline | ratio (paired median) [min–max] |")
    print("|---|---:|---:|---:|")
    for _key, title, value, higher_better in MEASURES:
        new = [value(r) for r in runs["new"]]
        base = [value(r) for r in runs["base"]]
        ratios = [n / b if higher_better else b / n for n, b in zip(new, base, strict=True)]
        print(
            f"| {title} | {statistics.median(new):,.1f} [{min(new):,.1f}–{max(new):,.1f}] "
            f"| {statistics.median(base):,.1f} [{min(base):,.1f}–{max(base):,.1f}] "
            f"| {statistics.median(ratios):.2f}× [{min(ratios):.2f}–{max(ratios):.2f}] |"
        )
    print(
        "\nratio: this tree's rate ÷ the baseline's (for latencies: the baseline's ÷ this tree's)"
    )
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
