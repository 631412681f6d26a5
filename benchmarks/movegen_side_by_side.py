"""The move generator of the working tree against a git revision's, both compiled, side by side.

    python benchmarks/movegen_side_by_side.py [--baseline HEAD] [--rounds 6] [--inner 3]
        [--games 6] [--variants backgammon,long,...] [--pure]

``measure_movegen.py --baseline`` loads the other revision's generator as Python source beside
the current one, so it compares pure builds only. The compiled build is a C extension named
``nardy.core.movegen``, and one process cannot load two of them; so this script builds each
generator (``setup.py build_ext --inplace``, as the editable install does, in a copy made in a
temporary folder: ``git archive`` of the revision, the tracked files of the working tree as they
are now) and measures each in worker processes of its own, alternating which goes first, each
worker seeing only its copy (``PYTHONPATH``, in a package layout of links to the copy's folders).
With ``--pure`` both builds load their Python source (``NARDY_MOVEGEN=pure``).

Each worker times ``legal_plays`` over the backgammon oracle (from position JSON) and over every
play decision of ``--games`` seeded random games of each variant, each pass ``--inner`` times,
and reports its best rate, in positions per CPU-second. The table gives the median over
``--rounds`` workers of each build and the paired ratio (candidate ÷ baseline, the two workers of
a round): its spread on unchanged code shows the run's noise.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nardy.core.variant import Variant

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PACKAGE_DIRS = {"core": "core", "variants": "variants", "arena": "arena"}
"""Subpackages of ``nardy`` that live in folders of their own (setup.py's PACKAGE_DIRS)."""
VARIANTS = "backgammon,long,nardgammon,fevga,giul,plakoto,portes"
"""One or more variants of each search: the fast path, the ordered search, the pinning search."""


def worker(variants: list[str], games: int, inner: int) -> None:
    """Prints one JSON line: the generator's kind and each corpus's best rate."""
    sys.path.insert(0, str(HERE))
    from movegen_corpus import game_corpus, load_oracle

    import nardy.core._engine as engine
    from nardy.core import load_variant
    from nardy.core.position import Position

    oracle = [(c.position, c.steps) for c in load_oracle()]
    backgammon = load_variant("backgammon")

    def oracle_pass() -> None:
        legal_plays, from_json = backgammon.legal_plays, Position.from_json
        for p, s in oracle:
            legal_plays(from_json(p), s)

    passes = {"oracle (from JSON)": (oracle_pass, len(oracle))}
    for name in variants:
        variant = load_variant(name)
        corpus = game_corpus(variant, games)

        def corpus_pass(variant: Variant = variant, corpus: list[Any] = corpus) -> None:
            legal_plays = variant.legal_plays
            for p, s in corpus:
                legal_plays(p, s)

        passes[name] = (corpus_pass, len(corpus))
    for run, _ in passes.values():  # warm-up
        run()
    best = dict.fromkeys(passes, 0.0)
    for _ in range(inner):
        for name, (run, count) in passes.items():
            gc.collect()
            start = time.process_time()
            run()
            best[name] = max(best[name], count / (time.process_time() - start))
    print(json.dumps({"kind": engine.KIND, **best}))


def copy_of(revision: str | None, folder: Path) -> None:
    """The revision's files (``None``: the working tree's tracked files as they are) in folder."""
    folder.mkdir(parents=True)
    archive = folder / "tree.tar"
    if revision is None:
        files = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(
            ["tar", "-c", "--null", "-T", "-", "-f", str(archive)],
            cwd=ROOT,
            input=files,
            check=True,
        )
    else:
        subprocess.run(["git", "archive", "-o", str(archive), revision], cwd=ROOT, check=True)
    subprocess.run(["tar", "-xf", str(archive)], cwd=folder, check=True)
    archive.unlink()


def build(folder: Path, pure: bool) -> Path:
    """Compiles the copy's generator in place and returns a folder to put on PYTHONPATH."""
    if not pure:
        built = subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
            cwd=folder,
            env={**os.environ, "NARDY_COMPILE": "1"},
            capture_output=True,
            text=True,
        )
        if built.returncode:
            sys.exit(f"building {folder} failed:\n{built.stderr[-2000:]}")
    tree = folder / "_path" / "nardy"
    tree.mkdir(parents=True)
    for entry in (folder / "nardy").iterdir():
        (tree / entry.name).symlink_to(entry)
    for package, source in PACKAGE_DIRS.items():
        (tree / package).symlink_to(folder / source)
    return tree.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="HEAD", help="git revision to compare with")
    parser.add_argument("--rounds", type=int, default=6, help="workers of each build")
    parser.add_argument("--inner", type=int, default=3, help="passes per worker (best kept)")
    parser.add_argument("--games", type=int, default=6, help="random games per variant corpus")
    parser.add_argument("--variants", default=VARIANTS)
    parser.add_argument("--pure", action="store_true", help="compare the Python sources")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="movegen-side-"))
    try:
        compare(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compare(args: argparse.Namespace, scratch: Path) -> None:
    """Builds both generators under ``scratch``, runs the workers and prints the table."""
    trees: dict[str, Path] = {}
    for label, revision in ((f"baseline {args.baseline}", args.baseline), ("working tree", None)):
        folder = scratch / ("baseline" if revision else "candidate")
        copy_of(revision, folder)
        trees[label] = build(folder, args.pure)
    env = dict(os.environ)
    if args.pure:
        env["NARDY_MOVEGEN"] = "pure"
    runs: dict[str, list[dict[str, float | str]]] = {label: [] for label in trees}
    labels = list(trees)
    inner = [str(args.inner)]
    for round_ in range(args.rounds):
        for label in labels if round_ % 2 == 0 else labels[::-1]:
            done = subprocess.run(
                [sys.executable, __file__, "--worker", args.variants, str(args.games), *inner],
                env={**env, "PYTHONPATH": str(trees[label])},
                cwd=scratch,  # not the repository, whose folders are no package layout
                capture_output=True,
                text=True,
            )
            if done.returncode:
                sys.exit(f"a worker failed:\n{done.stderr[-2000:]}")
            runs[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    base, mine = labels
    kinds = ", ".join(f"{label}: {runs[label][0]['kind']}" for label in labels)
    print(f"generators: {kinds}; {args.rounds} rounds, best of {args.inner} passes per worker")
    print(f"| positions per CPU-s | {base} | {mine} | ratio, paired: median [min-max] |")
    print("|---|---:|---:|---:|")
    for measure in runs[base][0]:
        if measure == "kind":
            continue
        old = [float(r[measure]) for r in runs[base]]
        new = [float(r[measure]) for r in runs[mine]]
        ratios = [n / o for o, n in zip(old, new, strict=True)]
        print(
            f"| {measure} | {statistics.median(old):,.0f} | {statistics.median(new):,.0f} | "
            f"{statistics.median(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}] |"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
