#!/usr/bin/env python3
"""Regenerate tests/data/rules_cases.yaml from RULES.md §5.

Usage (from anywhere):

    python tests/tools/extract_rules_cases.py [--rules PATH] [--out PATH] [--check]

Every fenced ```yaml block of RULES.md §5 becomes one YAML document of the data file, its text
kept byte for byte. ``--check`` writes nothing and exits 1 if the data file is out of date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

import rules_cases  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rules", type=Path, default=rules_cases.RULES_PATH)
    parser.add_argument("--out", type=Path, default=rules_cases.DATA_PATH)
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if stale")
    args = parser.parse_args(argv)

    blocks = rules_cases.extract_blocks(args.rules.read_text(encoding="utf-8"))
    for text in blocks:  # every block must parse and carry an id and a variant
        rules_cases.parse_block(text)
    content = rules_cases.render_data_file(blocks)
    out: Path = args.out
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else None
        if current != content:
            print(f"{out} is out of date with {args.rules}", file=sys.stderr)
            return 1
        print(f"{out} is up to date ({len(blocks)} blocks)")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(content)
    print(f"wrote {len(blocks)} blocks to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
