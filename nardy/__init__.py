"""nardy: a framework for the backgammon family of race games."""

__version__ = "0.1.0"
