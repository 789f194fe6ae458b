#!/usr/bin/env bash
# Installs what tests/interop/conformance/run.sh needs, repeatably on a fresh machine:
#   1. Node 22 (the suite needs >= 22; the machine's Node may be older): the npm
#      registry's per-platform package node-linux-<arch>, version and integrity
#      pinned, into tests/interop/.node/ (gitignored), by th_setup_node22 of
#      tests/interop/lib.sh, which the SDK-client interop runs share;
#   2. the suite, pinned in package.json + package-lock.json: `npm ci` into
#      node_modules/, run by that Node 22 (skipped while both files are unchanged).
# Prints the Node 22 binary's path as its last stdout line; progress goes to stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"

th_setup_node22 || { th_log "conformance: Node 22 setup failed"; exit 2; }

stamp="$here/node_modules/.th-stamp"
want=$(th_hash "$here/package.json" "$here/package-lock.json")
if [[ "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  th_log "conformance: npm ci (suite pinned in $here/package.json)"
  # npm's shebang is `env node`: put Node 22 first so npm and the suite's install
  # checks run on it.
  (cd "$here" && PATH="$(dirname "$NODE22"):$PATH" \
    npm ci --no-audit --no-fund --loglevel=error >&2) || {
    th_log "conformance: npm ci failed"
    exit 2
  }
  echo "$want" >"$stamp"
fi
echo "$NODE22"
