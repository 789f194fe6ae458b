#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against the toolhost example server, at 2025-11-25 (18 scored scenarios)
# and 2026-07-28 (25 scored), plus unscored extras; see suite.py for the lists.
#
#   TH_URL=http://127.0.0.1:PORT/cap/<secret>/mcp tests/interop/conformance/run.sh
#       tests a server that is already running (the URL must reach it without headers:
#       the suite cannot send Authorization);
#   tests/interop/conformance/run.sh
#       without TH_URL, starts target/debug/examples/conformance itself (building it
#       with cargo when missing; TH_SERVER_BIN overrides the path), reads the URL from
#       its first stdout line, and stops it by closing its stdin at the end.
#
# Environment: TH_CONFORMANCE_JOBS (parallel scenarios, default 2),
#   TH_CONFORMANCE_TIMEOUT_MS (per scenario, default 30000),
#   TH_CONFORMANCE_ONLY (regex on "<revision> <scenario>", for debugging a subset),
#   TH_CONFORMANCE_OUT (results folder, default tests/interop/out/conformance).
# Exit status: 1 when a scored scenario fails that tests/interop/expected-failures.txt
# does not list; 2 when the suite or the server cannot be set up.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
interop=$(cd "$here/.." && pwd)
root=$(cd "$interop/../.." && pwd)

t0=$(date +%s)
node_bin=$(bash "$here/setup.sh" | tail -n 1) || { echo "conformance: setup failed" >&2; exit 2; }
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "conformance: suite $("$node_bin" "$cli" --version) on Node $("$node_bin" --version) (setup $(( $(date +%s) - t0 ))s)"

out="${TH_CONFORMANCE_OUT:-$interop/out/conformance}"
rm -rf "$out"
mkdir -p "$out"

server_pid=""
server_stdin=""
stop_server() {
  if [[ -n "$server_stdin" ]]; then
    exec {server_stdin}>&-   # closing stdin asks the example to shut down
    server_stdin=""
  fi
  if [[ -n "$server_pid" ]]; then
    for _ in $(seq 50); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      echo "conformance: server $server_pid ignored stdin EOF; terminating it" >&2
      kill "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT

url="${TH_URL:-}"
if [[ -z "$url" ]]; then
  bin="${TH_SERVER_BIN:-$root/target/debug/examples/conformance}"
  if [[ ! -x "$bin" && -z "${TH_SERVER_BIN:-}" ]]; then
    echo "conformance: building the conformance example"
    (cd "$root" && cargo build --quiet --example conformance) || exit 2
  fi
  [[ -x "$bin" ]] || { echo "conformance: no server binary at $bin" >&2; exit 2; }
  fifo="$out/server.stdin"
  mkfifo "$fifo"
  "$bin" <"$fifo" >"$out/server.stdout" 2>"$out/server.stderr" &
  server_pid=$!
  exec {server_stdin}>"$fifo"
  for _ in $(seq 300); do
    if [[ -s "$out/server.stdout" ]] && head -n 1 "$out/server.stdout" | grep -q '}'; then break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  url=$(head -n 1 "$out/server.stdout" 2>/dev/null |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["url"])' 2>/dev/null) || url=""
  if [[ -z "$url" ]]; then
    echo "conformance: the server printed no {\"url\":…} line; its stderr:" >&2
    tail -n 20 "$out/server.stderr" >&2 || true
    exit 2
  fi
  echo "conformance: started $bin (pid $server_pid)"
fi
echo "conformance: server at ${url%%/cap/*}/cap/…"   # the capability path is a credential

set +e
python3 "$here/suite.py" \
  --url "$url" --node "$node_bin" --cli "$cli" --out "$out" \
  --expected "$interop/expected-failures.txt" \
  --jobs "${TH_CONFORMANCE_JOBS:-2}" \
  --timeout-ms "${TH_CONFORMANCE_TIMEOUT_MS:-30000}" \
  --only "${TH_CONFORMANCE_ONLY:-}"
status=$?
set -e
stop_server
if [[ -n "$(find "$out" -name server.stderr -size +0 2>/dev/null)" ]]; then
  echo "conformance: server stderr kept in $out/server.stderr"
fi
exit "$status"
