"""``python -m nardy``: the same as the ``nardy`` command."""

from __future__ import annotations

from nardy.cli import main

if __name__ == "__main__":
    main()
