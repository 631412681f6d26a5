"""The generated protocol modules of the arena, in one place.

The ``.proto`` files in ``protos/nardy/{game,bot,arena}/v1/`` are compiled by
``python protos/generate.py`` into :mod:`nardy.arena._gen`, a tree that mirrors the proto
packages and is never edited by hand. Code in :mod:`nardy.arena` imports the generated modules
from here rather than from ``_gen`` directly::

    from nardy.arena.protocol import bot_pb2 as _bot_pb2

so that the generated layout can change without touching hand-written code. docs/protocol.md
describes the messages and the two transports.
"""

from __future__ import annotations

from google.protobuf.descriptor import ServiceDescriptor

from nardy.arena._gen.nardy.arena.v1 import arena_pb2, arena_pb2_grpc
from nardy.arena._gen.nardy.bot.v1 import bot_pb2, bot_pb2_grpc
from nardy.arena._gen.nardy.game.v1 import game_pb2

__all__ = [
    "ARENA_ADMIN_METHODS",
    "ARENA_PROTOCOL",
    "ARENA_SERVICE",
    "ARENA_SERVICE_NAME",
    "BOT_PROTOCOL",
    "BOT_SERVICE_NAME",
    "GAME_PROTOCOL",
    "arena_pb2",
    "arena_pb2_grpc",
    "bot_pb2",
    "bot_pb2_grpc",
    "game_pb2",
]

GAME_PROTOCOL: str = game_pb2.DESCRIPTOR.package
"""The proto package of the shared game messages, ``"nardy.game.v1"``."""
BOT_PROTOCOL: str = bot_pb2.DESCRIPTOR.package
"""The proto package bots implement, ``"nardy.bot.v1"`` (sent in ``GetInfoRequest.protocol``)."""
ARENA_PROTOCOL: str = arena_pb2.DESCRIPTOR.package
"""The proto package of the arena's own API, ``"nardy.arena.v1"``."""

BOT_SERVICE_NAME: str = bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name
"""``"nardy.bot.v1.BotService"``, from the descriptor (for health checking and reflection)."""
ARENA_SERVICE: ServiceDescriptor = arena_pb2.DESCRIPTOR.services_by_name["ArenaService"]
"""The arena service's descriptor: its methods, their message types, streaming and options, from
which the server builds its handler table (an RPC added to the proto is served without a
hand-written entry)."""
ARENA_SERVICE_NAME: str = ARENA_SERVICE.full_name
"""``"nardy.arena.v1.ArenaService"``, from the descriptor (for health checking and reflection)."""
ARENA_ADMIN_METHODS: frozenset[str] = frozenset(
    method.name
    for method in ARENA_SERVICE.methods
    if method.GetOptions().Extensions[arena_pb2.admin_only]
)
"""The methods that need the administrator's token: those marked ``option (admin_only) = true``
in ``arena.proto``, so the proto is the one list of them."""
