#!/usr/bin/env bash
# CI: the builds of the move generator (setup.py). From a clean copy of the tree:
#   1. the default wheel compiles core/movegen.py with mypyc (and core/_batchgen.c, the batch
#      API's C generator): a platform wheel whose installed nardy.core.movegen is the extension
#      (`nardy --version` says "compiled"); the oracle, RULES.md case, conformance, compiled-vs-source
#      and C-batch-vs-source tests run against the INSTALLED package;
#   2. NARDY_COMPILE=0 builds the pure py3-none-any wheel, which loads the source;
#   3. without a C compiler (CC pointing nowhere) the default build falls back to the pure wheel,
#      warning once in the build's output.
# The whole test suite runs against both generators in .ci/run (NARDY_MOVEGEN=pure the second time).
# Usage: bash .ci/compiled.sh [PYTHON]   (default python3). Without a C compiler only 2 and 3 run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
python=${1:-python3}

step() { printf '\n== %s ==\n' "$*"; }

cc=${CC:-$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("CC") or "cc")')}
have_cc=1
command -v "${cc%% *}" >/dev/null 2>&1 || have_cc=0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A clean copy, so that no stale build/ folder or in-place extension of the source tree can leak
# into the builds.
mkdir "$work/src"
tar -cf - --exclude=./build --exclude=./dist --exclude='*.egg-info' --exclude=./.venv \
  --exclude=__pycache__ --exclude=./.git --exclude=./node_modules --exclude='*.so' . | tar -xf - -C "$work/src"
"$python" -m venv "$work/build-venv"
"$work/build-venv/bin/pip" install -q "build>=1"

# build_wheel NAME [ENV...]: a wheel of the clean copy into $work/NAME, its build output in NAME.log
build_wheel() {
  local name=$1; shift
  (cd "$work/src" && env "$@" "$work/build-venv/bin/python" -m build --wheel \
    --outdir "$work/$name" . >"$work/$name.log" 2>&1) || { tail -n 40 "$work/$name.log" >&2; exit 1; }
  ls "$work/$name"/nardy-*.whl
}

# generator_of WHEEL: installs it into a fresh venv and prints what `nardy --version` says
generator_of() {
  rm -rf "$work/check-venv"
  "$python" -m venv "$work/check-venv"
  "$work/check-venv/bin/pip" install -q "$1"
  (cd "$work" && ./check-venv/bin/nardy --version | sed -n 's/^move generator: //p')
}

step "pure wheel (NARDY_COMPILE=0)"
wheel=$(build_wheel pure NARDY_COMPILE=0)
echo "$wheel"
case "$wheel" in *-py3-none-any.whl) ;; *) echo "NARDY_COMPILE=0 built a platform wheel"; exit 1 ;; esac
kind=$(generator_of "$wheel"); echo "$kind"
case "$kind" in "pure (Python source; no compiled extension installed)") ;; *) exit 1 ;; esac

step "default wheel without a C compiler: falls back to the pure one and says so"
wheel=$(build_wheel nocc CC=/nonexistent/cc)
echo "$wheel"
case "$wheel" in *-py3-none-any.whl) ;; *) echo "no compiler, yet a platform wheel"; exit 1 ;; esac
grep -c "WARNING (nardy): no C compiler found" "$work/nocc.log"
kind=$(generator_of "$wheel"); echo "$kind"
case "$kind" in pure*) ;; *) exit 1 ;; esac

if [ "$have_cc" = 0 ]; then
  echo "compiled build: no C compiler found; the compiled wheel is not built here"
  exit 0
fi

step "default wheel (compiled with mypyc)"
wheel=$(build_wheel dist)
echo "$wheel"
case "$wheel" in
  *-py3-none-any.whl) echo "the default build produced a pure wheel"; tail -n 40 "$work/dist.log"; exit 1 ;;
esac
kind=$(generator_of "$wheel"); echo "$kind"
case "$kind" in compiled*) ;; *) exit 1 ;; esac

step "install into a fresh venv"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel[test]"

step "tests against the installed compiled package"
mkdir "$work/run"
cp -r tests/data "$work/run/data"
mkdir "$work/run/core" "$work/run/variants"
cp tests/conftest.py tests/rules_cases.py "$work/run/"
cp tests/core/test_oracle.py tests/core/test_rules_cases.py tests/core/test_compiled.py \
  tests/core/test_properties.py tests/core/test_batch.py tests/core/test_batchgen.py "$work/run/core/"
cp tests/variants/test_conformance.py "$work/run/variants/"
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
  "import nardy.core.movegen as m; print(m.__file__); assert m.__file__.endswith('.so') or m.__file__.endswith('.pyd'), m.__file__; import nardy.core._batchgen as c; print(c.__file__)" \
  && ../venv/bin/python -m pytest -q --all .)
