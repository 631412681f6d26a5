"""Analysis for every variant: N-ply equities of plays, errors, the luck of rolls, cube decisions
and luck-adjusted results (``docs/analysis.md``). The evaluators and the search it rates plays by
are engines, :mod:`nardy.engines`, which the bots share."""
