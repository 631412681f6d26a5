"""Dice anyone can audit: a tournament commits to its secret seed and reveals it at the end.

At creation the engine draws a random 32-byte salt and publishes

    commitment = SHA-256(PREFIX || salt || seed as 8 bytes, unsigned, big-endian)

(:func:`commitment`, ``PREFIX = b"nardy-dice-commitment-v1\\x00"``) in the tournament's public
info and in every game record (``record["dice_commitment"]``). The seed and the salt stay secret
while games are played: the dice of every game derive from the seed (``docs/audit.md``), so
whoever knows it knows every future roll. When the tournament ends (finished, stopped by its
SPRT, or cancelled) :func:`reveal` publishes both, and anyone can recompute the commitment and
every roll of every game (:mod:`nardy.arena.records.verify`, ``nardy arena verify``).

The commitment binds the operator as well: once it is published, no other seed can be passed
off as the tournament's, so the dice cannot be chosen after the fact.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from nardy.arena.records.storage import DiceRow, StorageError, Store

__all__ = [
    "PREFIX",
    "REVEALED_STATUSES",
    "SCHEME",
    "DiceAudit",
    "commit",
    "commitment",
    "public_dice",
    "reveal",
]

SCHEME = "nardy-dice-v1"
"""The name of the commitment and of the seed → dice derivation (``docs/audit.md``)."""

PREFIX = b"nardy-dice-commitment-v1\x00"
"""Domain separation: no other SHA-256 the project computes starts with these bytes."""

REVEALED_STATUSES = ("finished", "stopped", "cancelled")
"""Engine statuses that end a tournament for good: its seed is revealed. ``interrupted`` and
``failed`` tournaments can be resumed, so their seed stays secret."""


def commitment(seed: int, salt: bytes) -> str:
    """The commitment to ``seed`` with ``salt`` (32 bytes): lowercase hex SHA-256."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed {seed} is not a 64-bit unsigned number")
    if len(salt) != 32:
        raise ValueError(f"the salt has {len(salt)} bytes, not 32")
    return hashlib.sha256(PREFIX + salt + seed.to_bytes(8, "big")).hexdigest()


def matches(seed: int, salt_hex: str, expected: str) -> bool:
    """Whether ``seed`` and ``salt_hex`` give the commitment ``expected`` (constant time)."""
    try:
        salt = bytes.fromhex(salt_hex)
        value = commitment(seed, salt)
    except ValueError:
        return False
    return hmac.compare_digest(value, expected.lower())


@dataclass(frozen=True, slots=True)
class DiceAudit:
    """What the public may know of a tournament's dice: the commitment always, the seed and the
    salt once revealed."""

    tournament_id: str
    scheme: str
    commitment: str
    revealed: bool
    seed: int | None = None
    salt: str | None = None

    @classmethod
    def from_row(cls, row: DiceRow) -> DiceAudit:
        revealed = row.revealed is not None
        return cls(
            tournament_id=row.tournament_id,
            scheme=row.scheme,
            commitment=row.commitment,
            revealed=revealed,
            seed=row.revealed_seed if revealed else None,
            salt=row.salt if revealed else None,
        )

    def sealed(self) -> DiceAudit:
        """The view before the reveal: the commitment only."""
        return DiceAudit(self.tournament_id, self.scheme, self.commitment, False)

    def record_field(self) -> dict[str, str]:
        """``record["dice_commitment"]`` of every game: never the seed nor the salt."""
        return {"scheme": self.scheme, "commitment": self.commitment}

    def to_json(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme,
            "commitment": self.commitment,
            "revealed": self.revealed,
            "seed": self.seed,
            "salt": self.salt,
        }


def commit(store: Store, tournament_id: str, seed: int) -> DiceAudit:
    """The tournament's commitment: a new one (fresh salt) for a new tournament, the stored one
    when resuming. Raises :class:`StorageError` if the stored commitment is not to ``seed``."""
    salt = secrets.token_bytes(32)
    row = store.commit_dice(tournament_id, SCHEME, commitment(seed, salt), salt.hex())
    if row.scheme != SCHEME or not matches(seed, row.salt, row.commitment):
        raise StorageError(
            f"tournament {tournament_id}: the stored dice commitment is not to this seed "
            "(the database was changed?)"
        )
    return DiceAudit.from_row(row)


def reveal(store: Store, tournament_id: str, seed: int) -> DiceAudit:
    """Publish the seed and the salt of a tournament that has ended (finished, stopped or
    cancelled). Idempotent. A cancelled tournament calls it too: its dice are then public, so it
    must never be resumed (its remaining games would be predictable)."""
    return DiceAudit.from_row(store.reveal_dice(tournament_id, seed))


def public_dice(store: Store, tournament_id: str) -> DiceAudit | None:
    """The public view of a stored tournament's dice (None for one from before commitments)."""
    row = store.dice(tournament_id)
    return None if row is None else DiceAudit.from_row(row)
