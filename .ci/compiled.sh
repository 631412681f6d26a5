#!/usr/bin/env bash
# CI: the opt-in compiled build (setup.py, NARDY_COMPILE=1: core/movegen.py compiled with mypyc).
# Builds the compiled wheel from a clean copy of the tree, installs it into a fresh venv and runs
# the oracle, RULES.md case and conformance tests against the INSTALLED package (not the source
# tree), checking that nardy.core.movegen really is the compiled extension. The pure-Python
# build and the full test suite are .ci/run's business.
# Usage: bash .ci/compiled.sh [PYTHON]   (default python3). Exits 0 with a message when there is
# no C compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
python=${1:-python3}

step() { printf '\n== %s ==\n' "$*"; }

cc=${CC:-$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("CC") or "cc")')}
if ! command -v "${cc%% *}" >/dev/null 2>&1; then
  echo "compiled build: no C compiler found; skipping"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "compiled wheel (NARDY_COMPILE=1, mypyc)"
# A clean copy, so that no stale build/ folder of the source tree can leak into either build.
mkdir "$work/src"
tar -cf - --exclude=./build --exclude=./dist --exclude='*.egg-info' --exclude=./.venv \
  --exclude=__pycache__ --exclude=./.git --exclude=./node_modules . | tar -xf - -C "$work/src"
"$python" -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install -q "build>=1"
(cd "$work/src" && NARDY_COMPILE=1 "$work/build-venv/bin/python" -m build --wheel \
  --outdir "$work/dist" . >"$work/build.log" 2>&1) || { tail -n 40 "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/nardy-*.whl)
echo "$wheel"
case "$wheel" in
  *-py3-none-any.whl) echo "compiled build produced a pure wheel"; exit 1 ;;
esac

step "install into a fresh venv"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel[test]"

step "tests against the installed compiled package"
mkdir "$work/run"
cp -r tests/data "$work/run/data"
cp tests/conftest.py tests/rules_cases.py tests/test_oracle.py tests/test_rules_cases.py \
  tests/test_conformance.py "$work/run/"
printf '[pytest]\nmarkers =\n    slow: long-running tests\naddopts = -ra --strict-markers -p no:cacheprovider\n' \
  >"$work/run/pytest.ini"
cat >"$work/run/test_compiled_build.py" <<'EOF'
"""The tests in this folder must run against the compiled, installed nardy.core.movegen."""

import importlib.machinery

import nardy.core.movegen


def test_movegen_is_compiled() -> None:
    path = nardy.core.movegen.__file__
    assert path is not None
    assert path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), path
    assert "site-packages" in path, path
EOF
(cd "$work/run" && ../venv/bin/python -c \
  "import nardy.core.movegen as m; print(m.__file__); assert m.__file__.endswith('.so') or m.__file__.endswith('.pyd'), m.__file__" \
  && ../venv/bin/python -m pytest -q .)
