"""The web spectator (``nardy web``): tournaments, live standings, game replays, positions.

An optional part of nardy: ``pip install 'nardy[web]'`` (Starlette, Jinja2, uvicorn).
"""
