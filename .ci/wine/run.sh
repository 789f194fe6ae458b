#!/usr/bin/env bash
# Windows, run: the library's unit tests and the black-box host tests that
# need neither Python nor Node, built for x86_64-pc-windows-gnu and run
# under Wine (Debian's wine64), each test program with the shim
# bcryptprimitives.dll beside it (see bcryptprimitives.c for why).
# Installs what it needs itself; prints the toolchain, each program's
# counts, the totals and the time taken.
#
# Usage: bash .ci/wine/run.sh [PROGRAM...]: with names (test programs of
# tests/tests), runs only those, without the unit tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TERM_COLOR=never
target=x86_64-pc-windows-gnu
started=$(date +%s)

need=()
command -v wine >/dev/null || need+=(wine wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64)
if [ ${#need[@]} -gt 0 ]; then
    # A new machine's package lists may be empty or stale.
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
fi
rustup target add "$target"
rustc -V
wine --version 2>/dev/null
x86_64-w64-mingw32-gcc --version | head -n 1

# A prefix of the CI's own, made once; console programs need no display.
export WINEPREFIX="$PWD/target/wine-prefix" WINEDEBUG=-all
unset DISPLAY WAYLAND_DISPLAY
# A wineserver of this prefix left by an earlier run that was cut short
# would make `wineserver -p` below refuse to start (exit 2).
wineserver -k 2>/dev/null || true
trap 'wineserver -k 2>/dev/null || true' EXIT
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    wineboot -i >/dev/null 2>&1 </dev/null
    # wineboot leaves its own wineserver running for a few seconds; a
    # persistent one cannot start beside it.
    wineserver -w
fi
# One wineserver, and Wine's own services, for the whole run, started here
# with none of our pipes: one started by a test program inside $(...)
# below would hold that pipe open after the program ended, and the
# substitution would never return.
wineserver -p >/dev/null 2>&1 </dev/null || { echo "wineserver -p failed (exit $?)"; exit 1; }
wineboot >/dev/null 2>&1 </dev/null

shim=target/wine-shim/bcryptprimitives.dll
mkdir -p "$(dirname "$shim")"
x86_64-w64-mingw32-gcc -O2 -shared -s -o "$shim" \
    .ci/wine/bcryptprimitives.c .ci/wine/bcryptprimitives.def -ladvapi32

# The black-box tests: every program of tests/tests but threads (Linux
# only: it reads /proc, and is empty elsewhere). The tests in them that
# need Python or Node are ignored unless asked for, as on Linux.
tests=(acp ask bridge bridge_stdio cancelled_calls client concurrency core examples fuzz
    gateway_isolation hostile list_changes logging long_calls registry relay
    resume revocation schema serve setup stateless stdio_client tools typed
    unauthenticated_load visibility)
unit_tests=yes
if [ $# -gt 0 ]; then
    tests=("$@")
    unit_tests=no
fi

# Tests that cannot run under Wine, by binary, with the Wine limitation
# that stops each (none of them a Windows one). Tests that cannot run on
# Windows at all (they start sh or kill(1), or read /proc) say so in their
# source and show as ignored.
declare -A skip=(
    # Wine 8's taskkill refuses /T ("Unknown or invalid command line
    # option"), so the stand-in agent's sleeping grandchild outlives the
    # driver and holds the example's output open for its whole 120 s: the
    # test passes, late, without having checked anything (src/child/group.rs).
    #
    # The misbehaving agents' tests (acp/misbehaving.rs) count the agent's
    # grandchild and read its peak memory in /proc, which Windows has not,
    # and their floods (200,000 updates; 100,000 lines between turns)
    # through Wine's pipes outlast the program's own 300 s watchdog; the one
    # that behaves still runs. The agent held on its full pipe is ended
    # with its group, which needs taskkill /T, as above.
    [acp]="--skip nothing_the_agent_started_outlives_the_driver
        --skip a_flood_of_updates_and_garbage_around_every_answer_still_end_the_turn
        --skip an_agent_that_crashes_mid_turn_fails_it_at_once_naming_its_status_and_last_words
        --skip an_agent_that_crashes_at_startup_fails_initialize_at_once_naming_its_status
        --skip an_agent_that_never_answers_the_prompt_fails_at_the_turn_timeout_and_is_ended
        --skip a_64_mib_line_ends_the_turn_naming_size_and_setting_without_being_buffered
        --skip the_agents_stderr_reaches_the_applications_hook_and_the_error_keeps_its_last_lines
        --skip an_agent_flooding_between_turns_is_held_back_and_the_next_turn_hears_every_line
        --skip an_agent_blocked_on_its_pipe_between_turns_is_ended_with_the_driver"
)

# cargo names each test program it built; its JSON says where.
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        kind = "lib" if "lib" in m["target"]["kind"] else m["target"]["name"]
        print(kind, m["executable"])
'
}

built_from=$(date +%s)
programs=$(
    {
        if [ "$unit_tests" = yes ]; then
            cargo test -p toolhost --lib --all-features --target "$target" --no-run --message-format=json
        fi &&
        cargo test -p toolhost-tests --target "$target" --no-run --message-format=json \
            $(printf -- '--test %s ' "${tests[@]}")
    } | executables
)
echo "built in $(( $(date +%s) - built_from ))s"
# Beside every program a test may start: the test programs, the harness
# programs (stdio_server) and the examples (acp_turn).
for dir in deps . examples; do
    mkdir -p "target/$target/debug/$dir"
    cp "$shim" "target/$target/debug/$dir/"
done

passed=0 failed=0 ignored=0 failures=()
while read -r name exe; do
    from=$(date +%s)
    # shellcheck disable=SC2206 # the skip list is words
    args=(${skip[$name]:-})
    set +e
    # stdin is the list being read: the program gets none.
    output=$(timeout 900 wine "$exe" "${args[@]}" 2>&1 </dev/null)
    status=$?
    set -e
    # A program that died before its summary has none: not a reason to stop.
    summary=$(grep -E '^test result:' <<<"$output" | tail -n 1 || true)
    p=$(sed -n 's/.* \([0-9]*\) passed.*/\1/p' <<<"$summary")
    f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<<"$summary")
    i=$(sed -n 's/.* \([0-9]*\) ignored.*/\1/p' <<<"$summary")
    passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) ignored=$((ignored + ${i:-0}))
    printf '%-14s %4s passed %3s failed %3s ignored  %3ss  (exit %s)\n' \
        "$name" "${p:-?}" "${f:-?}" "${i:-?}" "$(( $(date +%s) - from ))" "$status"
    if [ "$status" != 0 ]; then
        failures+=("$name")
        grep -E -A 12 '^---- |panicked|^failures:' <<<"$output" | head -n 80 || true
        [ -n "$summary" ] || tail -n 30 <<<"$output"
    fi
done <<<"$programs"

# Nothing of this prefix is left running (the EXIT trap ends the
# wineserver).
for name in "${!skip[@]}"; do
    echo "skipped under Wine ($name): ${skip[$name]}"
done
echo "Windows (Wine): $passed passed, $failed failed, $ignored ignored, in $(( $(date +%s) - started ))s"
if [ ${#failures[@]} -gt 0 ]; then
    echo "failed under Wine: ${failures[*]}"
    exit 1
fi
