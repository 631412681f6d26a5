#!/usr/bin/env bash
# Install the PostgreSQL server from the Debian packages, for tests/arena/test_storage_postgres.py
# (which starts a throwaway cluster of its own on a free port: this script only installs).
# Idempotent, quiet: nothing to do when the server binaries are there already. Starts no server.
set -euo pipefail

if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
  echo "PostgreSQL is not installed and cannot be installed here (needs root and apt-get)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# The package would start its default cluster as a service; forbid service starts meanwhile.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
log=$(mktemp)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql; } >"$log" 2>&1 \
  || ! compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  cat "$log" >&2
  rm -f "$log"
  echo "PostgreSQL could not be installed" >&2
  exit 1
fi
rm -f "$log"
