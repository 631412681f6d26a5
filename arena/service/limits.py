"""What one request may ask of the arena: sizes, counts and the addresses it will dial.

Every value of a request is checked against :class:`ArenaLimits` before anything is allocated,
and a value out of range is a :class:`LimitError` (``INVALID_ARGUMENT``) naming the field and
the limit. Scheduling is lazy (:mod:`nardy.arena.competition.schedule`), so a tournament at the limits costs
memory in proportion to its pairings, not its games.

Server bots: the arena dials the address it is given, so an open address policy would let a
caller probe the arena's network (which ports answer). By default only public addresses are
allowed; loopback, private, link-local and other special ranges need
``allow_private_addresses`` (``nardy arena serve --allow-private-addresses``, the natural choice
when bots run on the same machine or LAN). A host name is resolved and every address it resolves
to must be allowed.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

__all__ = [
    "ADMIN_WORKERS",
    "DEFAULT_HELLO_TIMEOUT",
    "DEFAULT_MAX_CALLS",
    "DEFAULT_MAX_CALLS_PER_PEER",
    "DEFAULT_MAX_PENDING_HELLOS",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_MAX_STREAMS_PER_PEER",
    "MAX_ANONYMOUS_REQUEST_BYTES",
    "MAX_WAITING_CALLS",
    "ArenaLimits",
    "LimitError",
    "check_bot_address",
    "split_host_port",
]


DEFAULT_MAX_STREAMS = 4_000
"""Streams open at once on one arena, from everyone (``--max-streams``; see
:mod:`nardy.arena.service.streams`)."""

DEFAULT_MAX_STREAMS_PER_PEER = 64
"""Streams open at once from one IP address (``--max-streams-per-peer``)."""


DEFAULT_MAX_CALLS_PER_PEER = 16
"""Unary calls in progress at once from one IP address, the admin's not counted
(``--max-calls-per-peer``); half the default worker threads."""


DEFAULT_MAX_CALLS = 12
"""Unary calls (the admin's not counted) whose request is read and that run at once, from
everyone (``--max-calls``): what bounds the request bodies the arena holds for anonymous
callers whatever the number of their addresses. A 4 MiB body costs about 13 MB while it is
read and refused (the transport's buffers, the bytes, the allocator's slack): 12 keep a flood
of them at +136 to +156 MB, under the 200 MB of issue 34 (``benchmarks/load_arena.py
unary-flood``). The other calls wait their turn unread (:class:`~nardy.arena.service.streams.CallQueue`)."""

DEFAULT_MAX_REQUEST_BYTES = 32 * 1024
"""Largest message the public port reads (``--max-request-bytes``); the operator's port reads up
to ``--max-message-bytes``. A stream reads each message whole before anyone can look at it (a
``Connect``'s first message comes before the bot is known; a reflection stream's every one), so
what an attacker holding every stream mid-message can make the arena keep is this times the
streams: (``--max-streams`` 4,000 + ``--max-pending-hellos`` 256 + 256 waiting calls) x 32 KiB
= 141 MiB at most, under issue 34's 200 MB (at the old 4 MiB, 17.6 GiB). Nothing sent to the
public port needs more: a Hello, a decision's answer or an anonymous request is a few hundred
bytes, a tournament's definition a few KiB (64 bots), and the operator's port takes larger."""

MAX_ANONYMOUS_REQUEST_BYTES = 64 * 1024
"""Largest unary request parsed for a caller without the admin token (every such request is a
few hundred bytes); a larger one, read within ``--max-message-bytes``, is refused
(``RESOURCE_EXHAUSTED``) without being parsed, which would copy it once more."""

MAX_WAITING_CALLS = 256
"""Unary calls waiting, unread, for one of the ``--max-calls`` places; beyond, a call is refused
(``RESOURCE_EXHAUSTED``). A waiting call holds at most its stream's receive window (64 KiB)."""

ADMIN_WORKERS = 4
"""Threads of the admin's own lane for unary calls (no anonymous call runs there)."""

DEFAULT_HELLO_TIMEOUT = 10.0
"""Seconds a ``Connect`` stream may stay open without sending its Hello (``--hello-timeout``)."""

DEFAULT_MAX_PENDING_HELLOS = 256
"""``Connect`` streams open without a Hello yet, from everyone (``--max-pending-hellos``); per
address they are bounded by ``--max-streams-per-peer``. Not counted in ``--max-streams``."""


class LimitError(ValueError):
    """A request exceeds a limit or names an address the arena will not dial."""


@dataclass(frozen=True, slots=True)
class ArenaLimits:
    """The arena's limits (``nardy arena serve --max-...``)."""

    max_games_per_pairing: int = 10_000
    max_bots_per_tournament: int = 64
    max_games_per_tournament: int = 1_000_000
    """Games (matches) of one tournament in all: pairings x games per pairing."""
    max_running_tournaments: int = 8
    max_registered_bots: int = 1_000
    max_name_length: int = 64
    max_match_length: int = 64
    max_concurrency: int = 64
    max_per_decision: float = 600.0
    """Seconds; also bounds the per-game reserve (x 100)."""
    max_options: int = 32
    allow_private_addresses: bool = False

    def check_count(self, what: str, value: int, low: int, high: int) -> None:
        if not low <= value <= high:
            raise LimitError(f"{what} must be between {low} and {high}, not {value}")

    def check_name(self, what: str, name: str, *, required: bool = True) -> None:
        if required and not name:
            raise LimitError(f"{what} is empty")
        if len(name) > self.max_name_length:
            raise LimitError(
                f"{what} is {len(name)} characters long; at most {self.max_name_length}"
            )


def split_host_port(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too; a ``dns:///`` prefix is dropped) → (host, port)."""
    text = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise LimitError(f"address {address!r}: expected host:port")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or any(c in host for c in "/?#@ ,"):
        raise LimitError(f"address {address!r}: expected host:port")
    return host, int(port)


def _allowed(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_bot_address(address: str, limits: ArenaLimits) -> None:
    """Raise :class:`LimitError` unless the arena may dial ``address`` (see the module doc)."""
    host, port = split_host_port(address)
    if limits.allow_private_addresses:
        return
    try:
        ips = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise LimitError(f"address {address!r}: cannot resolve {host!r}") from None
        ips = [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos]
    bad = [str(ip) for ip in ips if not _allowed(ip)]
    if bad:
        raise LimitError(
            f"address {address!r} is not public ({', '.join(sorted(set(bad)))}); the arena "
            "dials loopback and private addresses only when started with "
            "--allow-private-addresses"
        )
