"""Optional compiled build of the move generator (docs/performance.md, "Compiled build").

All metadata lives in pyproject.toml. By default this is a plain pure-Python build, exactly as
without this file. With ``NARDY_COMPILE=1`` in the environment, ``nardy/core/movegen.py`` is also
compiled with mypyc into a C extension that shadows the .py module (which stays in the wheel):

    NARDY_COMPILE=1 python -m build --wheel

mypy (which provides mypyc) is then asked for as a build requirement; a C compiler is needed.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup

COMPILED_MODULES = ["nardy/core/movegen.py"]
# mypyc type-checks what the module imports (nardy.core imports pluggy), so that is needed too.
BUILD_REQUIRES = ["mypy>=1.10", "pluggy>=1.5,<2"]

if os.environ.get("NARDY_COMPILE") == "1":
    try:
        from mypyc.build import mypycify
    except ImportError:
        # The build front end first asks for the build requirements (an ``egg_info`` run, which
        # gets here without mypy and learns of it from setup_requires); a real build needs mypyc.
        if "egg_info" not in sys.argv[1:] and "dist_info" not in sys.argv[1:]:
            sys.exit("NARDY_COMPILE=1 needs mypy (for mypyc) installed in the build environment")
        setup(setup_requires=BUILD_REQUIRES)
    else:
        setup(
            setup_requires=BUILD_REQUIRES,
            ext_modules=mypycify(COMPILED_MODULES, opt_level="3"),
        )
else:
    setup()
