"""The arena's competition room: what a tournament is and what it finds out. Its definition and
schedule (``schedule``), the run that plays its units (``tournament``, on threads, processes or
Ray: ``ray_executor``), its tally and tables (``standings``), the stored totals of its results
(``ledger``), its ratings and SPRTs (``stats``, ``sprt_luck``, ``standings_analysis``). docs/architecture.md, "The arena's
rooms"."""
