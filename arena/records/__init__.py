"""The arena's records room: what the arena keeps and how it is checked. The store of
tournaments, games and dice commitments (``storage``: SQLite or PostgreSQL; ``rows``: its rows as
JSON; ``ledger_rows``: the columns and values of the stored totals, which the competition
keeps), the dice commitment and its reveal (``audit``) and the replay of stored records
(``verify``). docs/architecture.md, "The arena's rooms"."""
