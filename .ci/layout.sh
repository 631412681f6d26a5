#!/usr/bin/env bash
# CI: the package layout without symlinks (setup.py: nardy.core ← core/, nardy.variants ← variants/,
# nardy.arena ← arena/). Three cases:
#   1. a checkout made without symlinks (git -c core.symlinks=false) installs from source and runs;
#   2. from the repository root there is one import path per module: nardy.core.position loads
#      core/position.py, and "import core.position" is refused instead of loading a second copy;
#   3. a plugin package type-checks with mypy --strict against the README's editable install.
# Usage: bash .ci/layout.sh [PYTHON]   (default python3; case 3 uses ./.venv, made by .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
python=${1:-python3}
repo=$(pwd)
step() { printf '\n== %s ==\n' "$*"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "layout 1: a checkout without symlinks installs and runs"
git -c core.symlinks=false clone -q "$repo" "$work/checkout"
if find "$work/checkout" -path "$work/checkout/.git" -prune -o -type l -print | grep -q .; then
  echo "the checkout holds symlinks"; exit 1
fi
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$work/checkout"
(cd "$work" && ./venv/bin/nardy variants >/dev/null \
  && ./venv/bin/nardy play --variant backgammon --bots heuristic,random --games 5 --seed 1 --quiet >/dev/null \
  && ./venv/bin/python -c "import nardy.core, nardy.variants.long, nardy.arena.records.storage, nardy.testing")

step "layout 2: one import path per module from the repository root"
.venv/bin/python - <<'PY'
import importlib
import nardy.core.position as position
assert position.__file__.endswith("core/position.py"), position.__file__
try:
    importlib.import_module("core.position")
except ImportError as error:
    assert "import nardy.core instead" in str(error), error
else:
    raise SystemExit("import core.position loaded a second copy of nardy.core.position")
print("ok:", position.__file__)
PY

step "layout 3: a plugin package type-checks against the editable install"
cp -r examples/nardy-nackgammon "$work/plugin"
(cd "$work/plugin" && "$repo/.venv/bin/mypy" --strict --no-incremental nardy_nackgammon.py tests)
