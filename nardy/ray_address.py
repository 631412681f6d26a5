"""Failing fast on a Ray address nobody listens on (Ray itself retries for minutes).

Shared by the two clients of a Ray cluster: the tournament executor and ``nardy analyze``."""

from __future__ import annotations

import socket

__all__ = ["unreachable"]


def unreachable(address: str, timeout: float = 5.0) -> str | None:
    """Why ``host:port`` cannot be reached (a sentence naming it), or None when it answers or the
    address is not a ``host:port`` ("auto", "local", "ray://…": Ray's to resolve)."""
    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        return (
            f"cannot connect to Ray at {address}: {reason} (is `ray start --head` running there?)"
        )
    return None
