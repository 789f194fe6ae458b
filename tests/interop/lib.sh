# shellcheck shell=bash
# Shared functions for the interop runners (source this file, do not run it).
#
# Every function works from the repository root found relative to this file,
# so a runner may be started from any directory. Nothing here builds Rust code:
# the programs must already be built (`cargo build --examples --bins`).
#
#   th_start_example NAME [ARG...]
#                           start the built program NAME (target/debug/examples/NAME,
#                           an example of toolhost, or target/debug/NAME, a
#                           harness program) with the given arguments and stdin held
#                           open, read its first stdout line (a JSON object) and export
#                           TH_URL, TH_AUTH, TH_PID (and TH_FIRST_LINE)
#   th_stop_example         close that stdin, wait for the exit; SIGTERM, then
#                           SIGKILL if it lingers
#   th_set_aside PREFIX     keep the running program aside so that another can be
#                           started: its TH_PID, TH_URL, TH_AUTH, TH_STDOUT_FILE and
#                           TH_STDERR_FILE move to PREFIX_PID, PREFIX_URL, …
#   th_stop_aside PREFIX    stop a program set aside as th_stop_example would
#   th_setup_python         tests/interop/.venv with python/requirements.txt
#                           under python/constraints.txt
#   th_setup_ts             npm ci in tests/interop/ts
#   th_setup_node22         Node 22 from the npm registry's per-platform package
#                           into tests/interop/.node; exports NODE22
#   th_pick_node            a Node >= 20 for the TypeScript packages: the machine's
#                           node, else (or when TH_TS_NODE=node22) th_setup_node22's;
#                           exports TH_NODE
#
# Call th_start_example directly, never in `$(...)` or a pipeline: it exports
# variables and keeps a file descriptor open in the calling shell.
#
# Knobs (environment):
#   TH_EXAMPLE_CMD   run this command line instead of the built example
#                    (for trying the runners against a stand-in server)
#   TH_START_TIMEOUT seconds to wait for the first stdout line (default 60)
#   TH_LOG_NAME      name the program's logs out/TH_LOG_NAME.std{out,err}
#                    instead of out/NAME.std{out,err}
#   TH_PYTHON        interpreter that creates the venv (default python3, >= 3.10)
#   TH_NODE22_VERSION exact node-linux-<arch> package version (default below)
#   TH_TS_NODE       the node th_pick_node tries first (default node; node22 forces Node 22)
#   CARGO_TARGET_DIR honoured when locating the built example

TH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TH_INTEROP="$TH_ROOT/tests/interop"
TH_OUT="${TH_OUT:-$TH_INTEROP/out}"
TH_NODE22_DEFAULT_VERSION="22.23.5"

th_log() { printf '[interop] %s\n' "$*" >&2; }

# th_now: seconds since the epoch with milliseconds, for step timings.
th_now() { date +%s.%3N; }
# th_elapsed START: seconds since START, 1 decimal.
th_elapsed() { awk -v s="$1" -v e="$(th_now)" 'BEGIN { printf "%.1f", e - s }'; }

# th_hash FILE...: one digest over the contents of the given files.
th_hash() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }

# th_json_string KEY < JSON: the string value of a top-level key, or fail.
th_json_string() {
    if command -v jq >/dev/null; then
        jq -er --arg k "$1" '.[$k] | strings' 2>/dev/null
    else
        python3 -c 'import json, sys
v = json.load(sys.stdin).get(sys.argv[1])
sys.exit(1) if not isinstance(v, str) else print(v)' "$1" 2>/dev/null
    fi
}

th_start_example() {
    local name="${1:?th_start_example needs an example name}"
    local timeout="${TH_START_TIMEOUT:-60}"
    local target="${CARGO_TARGET_DIR:-$TH_ROOT/target}"
    case "$target" in /*) ;; *) target="$TH_ROOT/$target" ;; esac
    local bin="$target/debug/examples/$name"
    [ -x "$bin" ] || bin="$target/debug/$name"
    if [ -z "${TH_EXAMPLE_CMD:-}" ] && [ ! -x "$bin" ]; then
        th_log "program '$name' is not built: neither $target/debug/examples/$name nor $bin (run: cargo build --examples --bins)"
        return 1
    fi
    if [ -n "${TH_PID:-}" ]; then
        th_log "an example is already running (pid $TH_PID); stop it first"
        return 1
    fi
    mkdir -p "$TH_OUT"
    TH_RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/th-example.XXXXXX")"
    local fifo="$TH_RUN_DIR/stdin"
    mkfifo "$fifo"
    # Open the fifo read-write first: on Linux that never blocks, and it
    # guarantees the child's read-only open does not block either. The child
    # sees EOF on stdin only once this descriptor is closed (th_stop_example),
    # so the child itself must not inherit it.
    exec {TH_STDIN_FD}<>"$fifo"
    TH_STDOUT_FILE="$TH_OUT/${TH_LOG_NAME:-$name}.stdout"
    TH_STDERR_FILE="$TH_OUT/${TH_LOG_NAME:-$name}.stderr"
    : >"$TH_STDOUT_FILE"
    : >"$TH_STDERR_FILE"
    if [ -n "${TH_EXAMPLE_CMD:-}" ]; then
        # `exec` so that $! is the server's own pid, not a wrapper shell's.
        bash -c "exec $TH_EXAMPLE_CMD" <"$fifo" >"$TH_STDOUT_FILE" 2>"$TH_STDERR_FILE" {TH_STDIN_FD}>&- &
    else
        (cd "$TH_ROOT" && exec "$bin" "${@:2}") <"$fifo" >"$TH_STDOUT_FILE" 2>"$TH_STDERR_FILE" {TH_STDIN_FD}>&- &
    fi
    TH_PID=$!
    export TH_PID

    local deadline line=""
    deadline=$(( $(date +%s) + timeout ))
    while :; do
        # A complete first line ends with a newline; a partial one is not read.
        if [ "$(head -c 65536 "$TH_STDOUT_FILE" | wc -l)" -ge 1 ]; then
            IFS= read -r line <"$TH_STDOUT_FILE"
            break
        fi
        if ! kill -0 "$TH_PID" 2>/dev/null; then
            th_log "example '$name' exited before printing its first line; stderr:"
            sed 's/^/    /' "$TH_STDERR_FILE" >&2
            th_stop_example
            return 1
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            th_log "example '$name' printed no first line within ${timeout}s"
            th_stop_example
            return 1
        fi
        sleep 0.05
    done

    TH_FIRST_LINE="$line"
    TH_URL="$(th_json_string url <<<"$line")" || TH_URL=""
    TH_AUTH="$(th_json_string authorization <<<"$line")" || TH_AUTH=""
    if [ -z "$TH_URL" ] || [ -z "$TH_AUTH" ]; then
        th_log "example '$name': first stdout line is not {\"url\":…,\"authorization\":…}: $line"
        th_stop_example
        return 1
    fi
    export TH_URL TH_AUTH TH_FIRST_LINE
    th_log "example '$name' (pid $TH_PID) serves $TH_URL"
}

th_stop_example() {
    local pid="${TH_PID:-}"
    if [ -n "${TH_STDIN_FD:-}" ]; then
        exec {TH_STDIN_FD}>&-
        unset TH_STDIN_FD
    fi
    th_stop_pid "$pid"
    [ -n "${TH_RUN_DIR:-}" ] && rm -rf "$TH_RUN_DIR"
    unset TH_PID TH_URL TH_AUTH TH_FIRST_LINE TH_RUN_DIR
    return 0
}

# th_stop_pid PID: wait for PID (a child of this shell whose stdin was just
# closed) to exit, SIGTERM and then SIGKILL it if it lingers; its status in
# TH_EXIT_STATUS.
th_stop_pid() {
    local pid="$1"
    if [ -n "$pid" ]; then
        local i
        # stdin closed: the example should leave by itself.
        for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$pid" 2>/dev/null; then
            # Not SIGINT: a non-interactive shell starts background jobs with
            # SIGINT ignored, so only a program that installs its own handler sees it.
            th_log "pid $pid still running 5s after stdin closed; sending SIGTERM"
            kill -TERM "$pid" 2>/dev/null
            for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        fi
        if kill -0 "$pid" 2>/dev/null; then
            th_log "pid $pid ignored SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
        TH_EXIT_STATUS=$?
    fi
    return 0
}

th_set_aside() {
    local prefix="${1:?th_set_aside needs a variable prefix}" var
    if [ -z "${TH_PID:-}" ]; then
        th_log "th_set_aside $prefix: no program is running"
        return 1
    fi
    for var in PID STDIN_FD RUN_DIR URL AUTH FIRST_LINE STDOUT_FILE STDERR_FILE; do
        local from="TH_$var"
        printf -v "${prefix}_$var" '%s' "${!from:-}"
        export "${prefix}_$var"
    done
    unset TH_PID TH_STDIN_FD TH_RUN_DIR TH_URL TH_AUTH TH_FIRST_LINE
}

th_stop_aside() {
    local prefix="${1:?th_stop_aside needs a variable prefix}"
    local pid_var="${prefix}_PID" fd_var="${prefix}_STDIN_FD" dir_var="${prefix}_RUN_DIR"
    local fd="${!fd_var:-}" dir="${!dir_var:-}"
    # `exec {var}>&-` closes the descriptor whose number the variable holds.
    [ -n "$fd" ] && exec {fd}>&-
    th_stop_pid "${!pid_var:-}"
    [ -n "$dir" ] && rm -rf "$dir"
    unset "${prefix}_PID" "${prefix}_STDIN_FD" "${prefix}_RUN_DIR"
    return 0
}

th_setup_python() {
    local py="${TH_PYTHON:-python3}"
    local venv="$TH_INTEROP/.venv"
    local req="$TH_INTEROP/python/requirements.txt" con="$TH_INTEROP/python/constraints.txt"
    local stamp="$venv/.th-stamp" want
    want="$(th_hash "$req" "$con")"
    if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    if [ ! -x "$venv/bin/python" ]; then
        "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
            th_log "$py is older than 3.10 (mcp needs >= 3.10); set TH_PYTHON"
            return 1
        }
        "$py" -m venv "$venv" || return 1
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check \
        -r "$req" -c "$con" || return 1
    echo "$want" >"$stamp"
}

th_setup_ts() {
    local dir="$TH_INTEROP/ts"
    local stamp="$dir/node_modules/.th-stamp" want
    want="$(th_hash "$dir/package.json" "$dir/package-lock.json")"
    if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || return 1
    echo "$want" >"$stamp"
}

# The layout (.node/bin/node + LICENSE), version and integrity pin match
# tests/interop/conformance/setup.sh, which calls this function when present:
# both must install the same Node into the same place.
th_setup_node22() {
    local version="${TH_NODE22_VERSION:-$TH_NODE22_DEFAULT_VERSION}"
    local dest="$TH_INTEROP/.node" arch integrity=""
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) arch=x64 ;;
        Linux-aarch64) arch=arm64 ;;
        *) th_log "no node-linux package for $(uname -sm)"; return 1 ;;
    esac
    if [ "$version" = "$TH_NODE22_DEFAULT_VERSION" ]; then
        case "$arch" in
            x64) integrity="sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==" ;;
            arm64) integrity="sha512-e1LOUGKVruPGuLVutn8+Cgm5pI1APm4Kvh+zbb/qe/ZpD9s+TQby5iUgZOWmPpbSKpj0Td8DP1N0NEnXasHizg==" ;;
        esac
    fi
    local node="$dest/bin/node"
    if [ "$("$node" --version 2>/dev/null)" != "v$version" ]; then
        local tmp tgz got
        tmp="$(mktemp -d "${TMPDIR:-/tmp}/th-node22.XXXXXX")"
        # `npm pack` only downloads the tarball: no install scripts run.
        if ! (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null); then
            th_log "npm pack node-linux-$arch@$version failed"
            rm -rf "$tmp"
            return 1
        fi
        tgz="$tmp/node-linux-$arch-$version.tgz"
        if [ -n "$integrity" ]; then
            got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
            if [ "$got" != "$integrity" ]; then
                th_log "integrity mismatch for node-linux-$arch@$version: $got"
                rm -rf "$tmp"
                return 1
            fi
        fi
        rm -rf "$dest"
        mkdir -p "$dest"
        if ! tar -xzf "$tgz" -C "$dest" --strip-components=1 package/bin/node package/LICENSE; then
            rm -rf "$tmp" "$dest"
            return 1
        fi
        rm -rf "$tmp"
    fi
    local got_version
    got_version="$("$node" --version 2>/dev/null)"
    if [ "$got_version" != "v$version" ]; then
        th_log "$node does not run as v$version (got '${got_version:-nothing}')"
        return 1
    fi
    NODE22="$node"
    export NODE22
}

# The TypeScript packages pinned here declare engines node >= 20: Node 22 is
# installed only where the machine's node is older, or when TH_TS_NODE asks.
th_pick_node() {
    local node="${TH_TS_NODE:-node}" major t0
    major="$("$node" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
    if [ "$node" = node22 ] || [ "$major" -lt 20 ]; then
        t0=$(th_now)
        th_setup_node22 || return 1
        echo "setup node22: $(th_elapsed "$t0")s"
        node="$NODE22"
    fi
    TH_NODE="$node"
    export TH_NODE
}
