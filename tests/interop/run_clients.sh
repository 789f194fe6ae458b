#!/usr/bin/env bash
# Interop runs of the official MCP clients against `cargo run --example serve`.
#
#   bash tests/interop/run_clients.sh [CLIENT:MODE ...]
#
# Needs the example built first (`cargo build --example serve`); installs the pinned
# clients itself (tests/interop/.venv, tests/interop/ts/node_modules). Runs, each
# against a freshly started server:
#   python-sdk:legacy python-sdk:stateless python-sdk:auto   (mcp==2.3.0)
#   python-stdio:legacy python-stdio:stateless python-stdio:auto
#                                                            (mcp==2.3.0's stdio client
#                                                             starting the example's "stdio"
#                                                             entry: the stdio relay)
#   ts-sdk:legacy                                            (@modelcontextprotocol/sdk 1.32.2)
#   ts-client:legacy ts-client:stateless ts-client:auto      (@modelcontextprotocol/client 2.4.0)
# or only the ones named on the command line.
#
# Expected failures: lines `CLIENT MODE  # reason` in tests/interop/expected-failures.txt
# (only lines starting with python-sdk, python-stdio, ts-sdk or ts-client are read; the file is shared
# with the conformance runner), plus TH_EXPECTED_FAILURES="CLIENT MODE, CLIENT MODE".
# An expected failure does not fail the run; one that passes prints a notice to remove
# its line. Exit status: 0 when every run passed or failed as expected, 1 otherwise
# (2 when setup or the server start failed).
#
# Output: each run's check lines, then one summary line per run and a closing
# `clients: N passed, M failed, K skipped` (K = expected failures).
# Logs: tests/interop/out/clients-CLIENT-MODE.log, out/serve.stderr.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

example="${TH_EXAMPLE:-serve}"
expected_file="${TH_EXPECTED_FAILURES_FILE:-$TH_INTEROP/expected-failures.txt}"
all_runs=(python-sdk:legacy python-sdk:stateless python-sdk:auto python-stdio:legacy python-stdio:stateless python-stdio:auto ts-sdk:legacy ts-client:legacy ts-client:stateless ts-client:auto)
if [ $# -gt 0 ]; then runs=("$@"); else runs=("${all_runs[@]}"); fi

for run in "${runs[@]}"; do
    case " ${all_runs[*]} " in
        *" $run "*) ;;
        *) echo "unknown run '$run'; known: ${all_runs[*]}" >&2; exit 2 ;;
    esac
done

# --- expected failures -------------------------------------------------------
declare -A expected=()
add_expected() { # "CLIENT MODE  # reason"
    local line="$1" reason="" client mode rest
    case "$line" in *"#"*) reason="${line#*#}"; line="${line%%#*}" ;; esac
    read -r client mode rest <<<"$line"
    case "$client" in python-sdk | python-stdio | ts-sdk | ts-client) ;; *) return 0 ;; esac
    [ -n "$mode" ] || return 0
    read -r reason <<<"$reason" # trims
    expected["$client $mode"]="${reason:-listed as expected to fail}"
}
if [ -f "$expected_file" ]; then
    while IFS= read -r line || [ -n "$line" ]; do add_expected "$line"; done <"$expected_file"
fi
IFS=',' read -r -a extra <<<"${TH_EXPECTED_FAILURES:-}"
for line in "${extra[@]}"; do add_expected "$line"; done

# --- setup -------------------------------------------------------------------
mkdir -p "$TH_OUT"
need_python=0 need_ts=0
for run in "${runs[@]}"; do
    case "$run" in python-*) need_python=1 ;; ts-*) need_ts=1 ;; esac
done
if [ "$need_python" = 1 ]; then
    t0=$(th_now)
    th_setup_python || { echo "setup: python venv failed" >&2; exit 2; }
    echo "setup python venv: $(th_elapsed "$t0")s"
fi
if [ "$need_ts" = 1 ]; then
    t0=$(th_now)
    th_setup_ts || { echo "setup: npm ci in tests/interop/ts failed" >&2; exit 2; }
    echo "setup ts node_modules: $(th_elapsed "$t0")s"
    th_pick_node || { echo "setup: Node 22 failed" >&2; exit 2; }
    ts_node="$TH_NODE"
    echo "ts clients run on node $("$ts_node" --version)"
fi

# --- runs --------------------------------------------------------------------
trap 'th_stop_example' EXIT
declare -a summary=() notices=()
passed=0 failed=0 xfailed=0

for run in "${runs[@]}"; do
    client="${run%%:*}" mode="${run#*:}" key="${run%%:*} ${run#*:}"
    log="$TH_OUT/clients-$client-$mode.log"
    case "$client" in
        python-sdk) cmd=("$TH_INTEROP/.venv/bin/python" "$TH_INTEROP/python/client_test.py" "$mode") ;;
        python-stdio) cmd=("$TH_INTEROP/.venv/bin/python" "$TH_INTEROP/python/stdio_client_test.py" "$mode") ;;
        ts-sdk) cmd=("$ts_node" "$TH_INTEROP/ts/sdk_client_test.mjs" "$mode") ;;
        ts-client) cmd=("$ts_node" "$TH_INTEROP/ts/client_v2_test.mjs" "$mode") ;;
    esac
    echo "=== $key"
    th_start_example "$example" || { echo "could not start example '$example'" >&2; exit 2; }
    t0=$(th_now)
    # A run never takes longer than a few minutes; past that it is stuck.
    timeout --kill-after=10 300 "${cmd[@]}" </dev/null 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    secs=$(th_elapsed "$t0")
    alive=1
    kill -0 "$TH_PID" 2>/dev/null || alive=0
    th_stop_example
    last="$(grep -E "^$client $mode: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)"
    [ -n "$last" ] || last="$client $mode: no summary line (exit status $rc)"
    if [ "$alive" = 0 ]; then
        echo "FAIL server-alive: the example exited during the run (see $TH_STDERR_FILE)" | tee -a "$log"
        rc=1
    fi

    if [ -n "${expected[$key]+set}" ]; then
        if [ "$rc" = 0 ]; then
            verdict="PASS, but listed as an expected failure"
            notices+=("NOTICE: '$key' passes now: remove its line from tests/interop/expected-failures.txt")
            passed=$((passed + 1))
        else
            verdict="expected failure (${expected[$key]})"
            xfailed=$((xfailed + 1))
        fi
    elif [ "$rc" = 0 ]; then
        verdict="PASS"
        passed=$((passed + 1))
    else
        verdict="FAIL"
        failed=$((failed + 1))
    fi
    summary+=("$(printf '%-44s %6ss  %s' "$last" "$secs" "$verdict")")
done

echo
echo "=== interop client summary"
for line in "${summary[@]}"; do echo "$line"; done
for line in "${notices[@]}"; do echo "$line"; done
echo "clients: $passed passed, $failed failed, $xfailed skipped"
[ "$failed" = 0 ]
