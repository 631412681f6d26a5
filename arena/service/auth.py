"""Who may do what in the arena: the admin token, bot tokens, and how they are checked.

* The **admin token** lives in a file (``nardy arena serve --admin-token-file``), created with a
  fresh random token and mode 0600 when missing. State-changing RPCs need it as
  ``authorization: Bearer <token>`` call metadata (:meth:`Authenticator.check_admin`).
* **Bot tokens** are issued at registration. The arena keeps only their SHA-256 hashes (in memory
  and in its database): a dial-out bot's token is checked by hashing what the bot presents. A
  server bot's token is the arena's credential *towards* the bot, so the arena must be able to
  present it again after a restart: it is derived from the arena's secret and the bot id
  (HMAC-SHA256, :func:`server_bot_token`) instead of being stored.

Every comparison of secrets is constant-time (:func:`hmac.compare_digest` on hashes).
Tokens are 32 random bytes (256 bits), so a plain SHA-256 is a sufficient hash: there is nothing
to brute-force that a slow password hash would protect.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

__all__ = [
    "ADMIN_TOKEN_ENV",
    "AuthError",
    "Authenticator",
    "Caller",
    "bearer_token",
    "hash_token",
    "load_or_create_admin_token",
    "new_token",
    "read_admin_token",
    "server_bot_token",
    "write_secret_file",
]

ADMIN_TOKEN_ENV = "NARDY_ARENA_TOKEN"
"""The environment variable the operator CLI reads the admin token from (before the file)."""

Caller = Literal["admin", "bot", "anonymous", "unknown"]


class AuthError(RuntimeError):
    """The admin token file cannot be read or created (one line, for the CLI)."""


def new_token() -> str:
    """A fresh secret token: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The SHA-256 hex digest the arena stores instead of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def server_bot_token(secret: str, bot_id: str) -> str:
    """The token the arena presents to the server bot ``bot_id``: HMAC-SHA256 of the id under
    the arena's secret, so that it survives restarts without being stored."""
    mac = hmac.new(secret.encode("utf-8"), b"server-bot:" + bot_id.encode("utf-8"), "sha256")
    return mac.hexdigest()


def bearer_token(metadata: Iterable[tuple[str, str | bytes]]) -> str | None:
    """The token of an ``authorization: Bearer <token>`` metadata entry, or None."""
    for key, value in metadata:
        if key.lower() == "authorization":
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
            scheme, _, token = text.strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def read_admin_token(path: Path) -> str:
    """The token in ``path`` (surrounding whitespace ignored); :class:`AuthError` if unusable."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise AuthError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise AuthError(f"{path}: not a token file (not UTF-8 text)") from None
    if len(token) < 16 or any(c.isspace() for c in token):
        raise AuthError(f"{path}: not a token file (want one token of 16+ characters)")
    return token


def load_or_create_admin_token(path: Path) -> tuple[str, bool]:
    """The admin token in ``path``, creating the file (mode 0600, a fresh token) if it does not
    exist. Returns ``(token, created)``. An existing file readable by others is refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise AuthError(
                f"{path}: readable by others (mode {stat.S_IMODE(mode):o}); chmod 600 it"
            ) from None
        return read_admin_token(path), False
    except OSError as exc:
        raise AuthError(f"{path}: {exc.strerror or exc}") from None
    token = new_token()
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return token, True


def write_secret_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600, atomically: a temporary file in the same
    directory (created 0600) is filled, flushed and renamed over ``path``, so that a reader (a
    server bot reading its ``--token-file`` at every call) never sees an empty or partial file,
    and a pre-existing file's looser mode is not kept. :class:`AuthError` if it cannot."""
    directory = path.parent
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise AuthError(f"{path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o600)  # mkstemp's mode already; explicit for the reader of this code
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise AuthError(f"{path}: {exc.strerror or exc}") from None


class Authenticator:
    """Checks the bearer token of a call against the admin token's hash and the bots'."""

    def __init__(self, admin_token: str | None) -> None:
        """:param admin_token: None disables the admin check (every caller is admin): for the
        in-process :class:`~nardy.arena.service.core.Arena` and tests, never for a served arena."""
        self._admin_hash = None if admin_token is None else hash_token(admin_token)

    @property
    def enabled(self) -> bool:
        return self._admin_hash is not None

    def caller(self, token: str | None, is_bot_token: bool) -> Caller:
        """Who presents ``token``: the admin, a bot (``is_bot_token``), nobody, or a stranger."""
        if self._admin_hash is None:
            return "admin"
        if token is None:
            return "anonymous"
        if hmac.compare_digest(hash_token(token), self._admin_hash):
            return "admin"
        return "bot" if is_bot_token else "unknown"
