#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against toolhost's conformance fixture (tests/src/bin/conformance.rs):
# every scored server scenario at 2025-11-25 (18) and at 2026-07-28 (25), plus unscored
# extras (lists in suite.py).
#
#   bash tests/interop/conformance/run.sh
#       starts target/debug/conformance (building it when missing), reads the
#       URL from its first stdout line, stops it by closing its stdin at the end;
#   TH_URL=http://127.0.0.1:PORT/cap/<secret>/mcp bash tests/interop/conformance/run.sh
#       tests a server that is already running (the URL must work without headers:
#       the suite's runner cannot send Authorization);
#   TH_EXAMPLE_CMD='…' bash tests/interop/conformance/run.sh
#       starts that command line instead of the fixture (tests/interop/lib.sh).
#
# Knobs: TH_CONFORMANCE_JOBS (scenarios run side by side, default 2),
#   TH_CONFORMANCE_TIMEOUT_MS (per scenario, default 30000),
#   TH_CONFORMANCE_ONLY (regex on "<revision> <scenario>", to run a subset),
#   TH_CONFORMANCE_OUT (results, default tests/interop/out/conformance; emptied first).
#
# Output: one line per scenario (failing checks indented below it), then
#   conformance 2025-11-25: N/18 scored scenarios passed
#   conformance 2026-07-28: N/25 scored scenarios passed
#   conformance extras: N/M passed (not scored)
#   conformance: P passed, F failed, E skipped      (scored; E = expected failures)
# Exit status: 1 when a scored scenario fails that tests/interop/expected-failures.txt
# does not list (`conformance <revision> <scenario>  # <owning issue>`); 2 when the
# suite or the server could not be set up; 0 otherwise. An expected failure that
# passes prints a notice to remove its line, and does not fail the run.
set -uo pipefail   # no -e: lib.sh's functions report failures by status

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../lib.sh
source "$here/../lib.sh"

t0=$(th_now)
node_bin=$(bash "$here/setup.sh" | tail -n 1) || exit 2
cli="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "conformance: suite $("$node_bin" "$cli" --version) on Node $("$node_bin" --version) (setup $(th_elapsed "$t0")s)"

out="${TH_CONFORMANCE_OUT:-$TH_OUT/conformance}"
rm -rf "$out"
mkdir -p "$out" || exit 2

if [[ -z "${TH_URL:-}" ]]; then
  target="${CARGO_TARGET_DIR:-$TH_ROOT/target}"
  case "$target" in /*) ;; *) target="$TH_ROOT/$target" ;; esac
  if [[ -z "${TH_EXAMPLE_CMD:-}" && ! -x "$target/debug/conformance" ]]; then
    echo "conformance: building the conformance fixture"
    (cd "$TH_ROOT" && cargo build --quiet -p toolhost-tests --bin conformance) || exit 2
  fi
  trap th_stop_example EXIT
  th_start_example conformance || exit 2
fi
echo "conformance: server at ${TH_URL%%/cap/*}/cap/…"   # the path holds a credential

status=0
python3 "$here/suite.py" \
  --url "$TH_URL" --node "$node_bin" --cli "$cli" --out "$out" \
  --expected "$TH_INTEROP/expected-failures.txt" \
  --jobs "${TH_CONFORMANCE_JOBS:-2}" \
  --timeout-ms "${TH_CONFORMANCE_TIMEOUT_MS:-30000}" \
  --only "${TH_CONFORMANCE_ONLY:-}" || status=$?
exit "$status"
