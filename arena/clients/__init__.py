"""The arena's clients room: how the arena reaches a bot and plays a game with it. A bot's
transport (``bot_client``: a gRPC BotService, ``dial_out``: the bot's own stream, ``local``: a
process the arena starts), the messages between kernel values and the bot protocol
(``convert``), and the runner that seats remote bots in the one game loop (``runner``).
docs/architecture.md, "The arena's rooms"."""
