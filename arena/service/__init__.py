"""The arena's service room: the arena as a gRPC service. The service core over value types
(``core.Arena``: bots, games, tournaments), the servicer, the only module that translates between
it and the protobuf messages (``servicer``), and the server around them (``server``) with its
tokens (``auth``), limits (``limits``, ``streams``), errors (``rpc_errors``), the bot registry
(``registry``), the watchers' feed (``feed``) and the public view (``public``).
docs/architecture.md, "The arena's rooms"."""
