"""A second implementation of the dice audit, written from docs/audit.md alone.

Nothing here calls nardy's seed or dice code: the commitment, ``derive``, the game seeds and an
MT19937 are written from the document's text with :mod:`hashlib` only, and checked against the
document's examples and against every roll of real tournaments read straight from the SQLite file
and the JSONL records (with :mod:`sqlite3` and :mod:`json`). If the engine and the document ever
disagree, this fails.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from nardy.arena.tournament_cli import main as cli

# -- written from docs/audit.md ---------------------------------------------------------------------


def commit(seed: int, salt: bytes) -> str:
    return hashlib.sha256(
        b"nardy-dice-commitment-v1" + b"\x00" + salt + seed.to_bytes(8, "big")
    ).hexdigest()


def derive(*parts: object) -> int:
    text = "[" + ",".join(f'"{p}"' for p in parts) + "]"
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:8], "big") >> 1


def game_seed(
    seed: int, pool: str, rnd: int, a: str, b: str, leg: int, game_no: int, dup: bool
) -> int:
    unit = derive(seed, "dice", pool, rnd)
    if not dup:
        unit = derive(unit, a, b, leg)
    return unit if game_no == 1 else derive(unit, "game", game_no)


class MT:
    M32 = 0xFFFFFFFF

    def __init__(self, seed: int) -> None:
        key = [seed & self.M32, seed >> 32] if seed >= 2**32 else [seed]
        mt = [0] * 624
        mt[0] = 19650218
        for i in range(1, 624):
            mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & self.M32
        i, j, n = 1, 0, len(key)
        for _ in range(max(624, n)):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j) & self.M32
            i, j = i + 1, j + 1
            if i == 624:
                mt[0], i = mt[623], 1
            if j == n:
                j = 0
        for _ in range(623):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & self.M32
            i += 1
            if i == 624:
                mt[0], i = mt[623], 1
        mt[0] = 0x80000000
        self.mt, self.used = mt, 624

    def next32(self) -> int:
        mt = self.mt
        if self.used == 624:
            for k in range(624):
                y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7FFFFFFF)
                mt[k] = mt[(k + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.used = 0
        y = mt[self.used]
        self.used += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)

    def die(self) -> int:
        while (v := self.next32() >> 29) >= 6:
            pass
        return v + 1

    def roll(self) -> list[int]:
        first = self.die()
        return [first, self.die()]


UNIT = re.compile(r"^([^:]+):([^~]+)~([^:]+):(\d{4})([ab])$")


def check_record(record: dict[str, Any], seed: int, commitment: str) -> int:
    """Re-derive one record's seed and rolls; returns the number of rolls checked."""
    stamp = record["dice_commitment"]
    assert stamp == {
        "scheme": "nardy-dice-v1",
        "commitment": commitment,
        "duplicate": stamp["duplicate"],
    }
    pool, a, b, rnd, leg = UNIT.match(record["unit_id"]).groups()  # type: ignore[union-attr]
    assert (pool, int(rnd) - 1, "ab".index(leg)) == (record["pool"], record["round"], record["leg"])
    want = game_seed(
        seed, pool, int(rnd) - 1, a, b, "ab".index(leg), record["game_no"], stamp["duplicate"]
    )
    assert record["seed"] == want, record["game_id"]
    dice = MT(want)
    rolls = record["game"]["rolls"]
    assert rolls == [dice.roll() for _ in rolls], record["game_id"]
    return len(rolls)


# -- the document's examples -----------------------------------------------------------------------


def test_the_documents_examples() -> None:
    assert (
        commit(1, bytes(range(32)))
        == "f67089790bc8f542c80259fb354119caa072259ec0f8ac50bf4a0359663b9d67"
    )
    assert derive(1, "dice", "long", 0) == 6354697827439518455
    assert derive(6354697827439518455, "game", 2) == 2282053526620679698
    mt = MT(6354697827439518455)
    assert [mt.next32() for _ in range(4)] == [0xC49D24BD, 0x4FB10CC7, 0x8D0A6021, 0x120949F8]
    mt = MT(6354697827439518455)
    assert [mt.roll() for _ in range(5)] == [[3, 5], [1, 3], [5, 2], [6, 6], [4, 2]]
    assert MT(0).next32() == MT(0).next32()  # key [0] works


# -- real tournaments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        ["--variant", "backgammon", "--variant", "long", "--match-length", "3", "--games", "3"],
        ["--variant", "trictrac", "--games", "3", "--independent-dice"],
    ],
    ids=["duplicate-matches", "independent"],
)
def test_every_roll_of_real_tournaments(tmp_path: Path, flags: list[str]) -> None:
    db, records = tmp_path / "t.db", tmp_path / "t.jsonl"
    seed = 987654321012345
    args = ["run", "--bots", "heuristic,random", "--seed", str(seed), "--db", str(db)]
    result = CliRunner().invoke(cli, [*args, "--records", str(records), "--quiet", *flags])
    assert result.exit_code == 0, result.output
    con = sqlite3.connect(db)
    ((tid, commitment, salt, revealed_seed),) = con.execute(
        "SELECT tournament_id, commitment, salt, revealed_seed FROM dice_commitments"
    ).fetchall()
    assert revealed_seed == seed and commit(seed, bytes.fromhex(salt)) == commitment
    stored = [
        json.loads(r)
        for (r,) in con.execute("SELECT record FROM games WHERE tournament_id = ?", (tid,))
    ]
    con.close()
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert sorted(r["game_id"] for r in stored) == sorted(r["game_id"] for r in lines)
    assert any(r["game_no"] > 1 for r in stored) or "--independent-dice" in flags
    rolls = sum(check_record(r, seed, commitment) for r in stored)
    assert rolls == sum(check_record(r, seed, commitment) for r in lines) > 100
    # With duplicate dice both legs of a pair roll the same dice (as far as both games go).
    if "--independent-dice" not in flags:
        first = {r["unit_id"]: r["game"]["rolls"] for r in stored if r["game_no"] == 1}
        pairs = [
            (rolls, first[u[:-1] + "b"])
            for u, rolls in first.items()
            if u.endswith("a") and u[:-1] + "b" in first
        ]
        assert len(pairs) == 2  # two pools; round 2 has leg a only (3 games)
        for a, b in pairs:
            n = min(len(a), len(b))
            assert a[:n] == b[:n]
