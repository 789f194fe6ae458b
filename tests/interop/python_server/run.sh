#!/usr/bin/env bash
# toolhost::client against a server nobody here wrote: the official MCP Python
# SDK's MCPServer over Streamable HTTP (mcp==2.3.0, pinned like the client
# interop runs), in both eras.
#
#   bash tests/interop/python_server/run.sh
#
# Installs the pinned SDK into tests/interop/.venv (th_setup_python), starts
# server.py (its first stdout line is {"url", "authorization"}), and runs the
# ignored tests of tests/tests/client/python_sdk.rs and bridge.rs named `…python_sdk_server…` against it with
# TH_PY_URL and TH_PY_AUTH set, then the one of bridge_stdio.rs; the stdio ones (one of
# python_sdk.rs, bridge_stdio.rs's) start server.py --stdio themselves (TH_PY_STDIO: the
# command line, tab-separated). Builds the test binary itself (cargo test).
# Exit status: the tests' (2 when setup or the server start failed).
# Logs: tests/interop/out/python-sdk-server.std{out,err}.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
source "$here/../lib.sh"

t0=$(th_now)
th_setup_python || { echo "setup: python venv failed" >&2; exit 2; }
echo "setup python venv: $(th_elapsed "$t0")s"

# lib.sh starts any command that prints {"url", "authorization"} first and
# stops it by closing its stdin.
TH_EXAMPLE_CMD="'$TH_INTEROP/.venv/bin/python' '$here/server.py'" \
    th_start_example python-sdk-server || { echo "python SDK server did not start" >&2; exit 2; }
trap th_stop_example EXIT

export TH_PY_URL="$TH_URL" TH_PY_AUTH="$TH_AUTH"
# The same tools over stdio, which the tests start themselves (words tab-separated).
export TH_PY_STDIO="$TH_INTEROP/.venv/bin/python"$'\t'"$here/server.py"$'\t'"--stdio"
# One test at a time: the SDK keys a POST's event stream by its JSON-RPC request id,
# which repeats across MCP sessions, so the one event store server.py keeps could
# replay another session's event to a resuming client if sessions overlapped.
(cd "$TH_ROOT" && cargo test --quiet --test client -- --ignored --test-threads=1 python_sdk_server)
status=$?
# The same server bridged into a toolhost session (McpServerLayer), over HTTP
# and, started by the bridge itself, over stdio.
(cd "$TH_ROOT" && cargo test --quiet --test bridge -- --ignored --test-threads=1 python_sdk_server)
bridged=$?
[ "$status" -eq 0 ] && status=$bridged
(cd "$TH_ROOT" && cargo test --quiet --test bridge_stdio -- --ignored python_sdk_server)
stdio=$?
[ "$status" -eq 0 ] && status=$stdio
if [ "$status" -eq 0 ]; then
    echo "python-sdk-server: client interop passed"
else
    echo "python-sdk-server: client interop FAILED (server log: $TH_OUT/python-sdk-server.stderr)"
fi
exit "$status"
