"""The bot ids of the named tournament (tests/viewer/conftest.py's ``named_db``) and the names
they show, in a module of its own so that a test imports it by a name no other folder's helper has
(``from conftest import …`` reads whichever conftest.py was imported last when tests/arena and
tests/viewer are collected in one run)."""

NAMED_BOTS = {"local-heur": "heur", "local-rnd": "rnd"}
