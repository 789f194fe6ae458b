#!/usr/bin/env bash
# Issue 18's proof with servers nobody here wrote: examples/gateway bridges the
# official MCP server-everything (stdio; @modelcontextprotocol/server-everything,
# pinned in package.json here) and the official Python SDK server
# (../python_server/server.py, Streamable HTTP, mcp==2.3.0) into one session
# beside its own demo tools, and the official SDK clients exercise that session:
#
#   python:auto    mcp==2.3.0's Client, its default mode (settles on 2026-07-28)
#   python:legacy  the same client in the initialize era
#   ts:legacy      @modelcontextprotocol/sdk 1.32.2's Client (2025-11-25)
#
#   bash tests/interop/gateway/run.sh [CLIENT:MODE ...]
#
# Needs the example built first (`cargo build --example gateway`); installs the
# pinned packages itself (tests/interop/.venv, ts/node_modules, and
# gateway/node_modules with `npm ci`). Every run gets a fresh Python server and
# gateway, because each run kills its servers mid-session. The checks, the same
# in both clients: listing (local, `everything_*` and `py_*` tools), calls with
# structured results and isError passed through, progress relayed, cancellation
# relayed (seen by the remote servers), and a server killed mid-session.
#
# The clients get the gateway's TH_URL and TH_AUTH, plus TH_BRIDGED (the bridged
# servers to check), TH_PY_URL, TH_PY_AUTH and TH_PY_PID (the Python server, which
# the client calls directly for comparison, then kills), TH_EVERYTHING_PID
# (server-everything, the gateway's child), TH_GATEWAY_PID, TH_GATEWAY_LOG (the
# gateway's stderr, where its event hook writes) and TH_EVERYTHING_WIRE (what
# server-everything read from stdin: wire_tap.cjs, loaded into its node with
# --require, records it; nothing else of the server changes).
#
# Each run's `… Killed … server.py` line is bash reporting the Python server the
# client killed on purpose.
#
# Exit status: 0 when every run passed, 1 otherwise (2 when setup or a start failed).
# Logs: tests/interop/out/gateway-CLIENT-MODE.{log,stderr,everything-wire.jsonl}
# and out/gateway-py-CLIENT-MODE.stderr.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
source "$here/../lib.sh"

all_runs=(python:auto python:legacy ts:legacy)
if [ $# -gt 0 ]; then runs=("$@"); else runs=("${all_runs[@]}"); fi
for run in "${runs[@]}"; do
    case " ${all_runs[*]} " in
        *" $run "*) ;;
        *) echo "unknown run '$run'; known: ${all_runs[*]}" >&2; exit 2 ;;
    esac
done

# --- setup -------------------------------------------------------------------
mkdir -p "$TH_OUT"
t0=$(th_now)
th_setup_python || { echo "setup: python venv failed" >&2; exit 2; }
echo "setup python venv: $(th_elapsed "$t0")s"
t0=$(th_now)
th_setup_ts || { echo "setup: npm ci in tests/interop/ts failed" >&2; exit 2; }
echo "setup ts node_modules: $(th_elapsed "$t0")s"
t0=$(th_now)
stamp="$here/node_modules/.th-stamp"
want="$(th_hash "$here/package.json" "$here/package-lock.json")"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
        { echo "setup: npm ci in tests/interop/gateway failed" >&2; exit 2; }
    echo "$want" >"$stamp"
fi
echo "setup server-everything: $(th_elapsed "$t0")s"
th_pick_node || { echo "setup: Node 22 failed" >&2; exit 2; }
everything="$here/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$everything" ] || { echo "setup: $everything is missing" >&2; exit 2; }
echo "node $("$TH_NODE" --version), server-everything $("$TH_NODE" -p "require('$here/node_modules/@modelcontextprotocol/server-everything/package.json').version")"

# --- runs --------------------------------------------------------------------
stop_all() {
    th_stop_example
    th_stop_aside PY
}
trap stop_all EXIT
declare -a summary=()
passed=0 failed=0

for run in "${runs[@]}"; do
    client="${run%%:*}" mode="${run#*:}"
    log="$TH_OUT/gateway-$client-$mode.log"
    echo "=== $client $mode"

    TH_LOG_NAME="gateway-py-$client-$mode" \
        TH_EXAMPLE_CMD="'$TH_INTEROP/.venv/bin/python' '$TH_INTEROP/python_server/server.py'" \
        th_start_example python-sdk-server || { echo "the Python SDK server did not start" >&2; exit 2; }
    th_set_aside PY

    # What server-everything reads from stdin, recorded by wire_tap.cjs (the child
    # inherits the gateway's environment). The stdio value is split on spaces: the
    # paths here have none.
    wire="$TH_OUT/gateway-$client-$mode.everything-wire.jsonl"
    : >"$wire"
    # The Python server's credential goes through the environment, never
    # the command line (which every user can read).
    TH_PY_AUTH_VALUE="$PY_AUTH" TH_EVERYTHING_WIRE="$wire" TH_LOG_NAME="gateway-$client-$mode" th_start_example gateway \
        --stdio "everything=$TH_NODE --require $here/wire_tap.cjs $everything stdio" \
        --http "py=$PY_URL" --auth-env "py=TH_PY_AUTH_VALUE" ||
        { echo "the gateway did not start (log: $TH_OUT/gateway-$client-$mode.stderr)" >&2; exit 2; }
    # The servers connect in the background: the checks start once both
    # have joined (their `is ready` lines on the gateway's stderr).
    for server in everything py; do
        for _ in $(seq 1 300); do
            grep -q "MCP server \"$server\" is ready" "$TH_STDERR_FILE" && break
            sleep 0.1
        done
        grep -q "MCP server \"$server\" is ready" "$TH_STDERR_FILE" ||
            { echo "$server did not join the gateway within 30 s (log: $TH_STDERR_FILE)" >&2; exit 2; }
    done
    # server-everything is the gateway's only child process.
    everything_pid="$(ps -o pid= --ppid "$TH_PID" | tr -d ' ')"

    case "$client" in
        python) cmd=("$TH_INTEROP/.venv/bin/python" "$TH_INTEROP/python/gateway_client_test.py" "$mode") ;;
        ts) cmd=("$TH_NODE" "$TH_INTEROP/ts/gateway_client_test.mjs" "$mode") ;;
    esac
    t0=$(th_now)
    # A run takes seconds; past a few minutes it is stuck.
    TH_BRIDGED="py everything" TH_PY_URL="$PY_URL" TH_PY_AUTH="$PY_AUTH" TH_PY_PID="$PY_PID" \
        TH_EVERYTHING_PID="$everything_pid" TH_GATEWAY_PID="$TH_PID" TH_GATEWAY_LOG="$TH_STDERR_FILE" \
        TH_EVERYTHING_WIRE="$wire" \
        timeout --kill-after=10 180 "${cmd[@]}" </dev/null 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    secs=$(th_elapsed "$t0")
    alive=1
    kill -0 "$TH_PID" 2>/dev/null || alive=0
    th_stop_example
    th_stop_aside PY
    last="$(grep -E "^gateway-$client $mode: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)"
    [ -n "$last" ] || last="gateway-$client $mode: no summary line (exit status $rc)"
    if [ "$alive" = 0 ]; then
        echo "FAIL gateway-alive: the gateway exited during the run (see $TH_OUT/gateway-$client-$mode.stderr)" | tee -a "$log"
        rc=1
    fi
    if [ "$rc" = 0 ]; then
        verdict=PASS
        passed=$((passed + 1))
    else
        verdict=FAIL
        failed=$((failed + 1))
    fi
    summary+=("$(printf '%-44s %6ss  %s' "$last" "$secs" "$verdict")")
done

echo
echo "=== gateway interop summary"
for line in "${summary[@]}"; do echo "$line"; done
echo "gateway: $passed passed, $failed failed"
[ "$failed" = 0 ]
