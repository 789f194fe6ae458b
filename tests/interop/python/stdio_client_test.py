"""Interop test: the official MCP Python SDK's stdio client (mcp==2.3.0) starts the "stdio"
entry that `cargo run --example serve` prints, and runs through it the same checks that
client_test.py runs over HTTP.

Usage: stdio_client_test.py MODE [--first-line JSON]
  MODE          legacy    initialize handshake over stdio
                stateless 2026-07-28 without a probe (Client(mode="2026-07-28"))
                auto      the SDK default: probe server/discover, fall back to initialize
  --first-line  the serve example's first stdout line; defaults to $TH_FIRST_LINE

The entry (`{"name", "command", "args", "env": [{"name", "value"}]}`, ACP's stdio shape)
starts the serve binary again; that copy finds the session's URL and bearer in its
environment and relays between its stdin/stdout and the session. A streamed call whose
stream the host closes is resumed by the relay, so the SDK sees every progress report and
the result as over HTTP. Each check prints `ok NAME` or `FAIL NAME: WHY`; the last line is
`python-stdio MODE: N passed, M failed`; the exit status is nonzero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio
from client_test import (
    SESSION_TIMEOUT,
    CheckFailed,
    Checks,
    client_mode,
    expect,
    session_check_names,
    session_checks,
    session_failed,
)
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def entry_checks(checks: Checks, entry: dict[str, Any]) -> StdioServerParameters | None:
    """The entry's shape: what an ACP agent (and this SDK) is handed."""
    try:
        expect(isinstance(entry.get("name"), str) and entry["name"], f"no name: {entry}")
        command = entry.get("command")
        expect(isinstance(command, str) and os.path.isabs(command), f"command {command!r} is not an absolute path")
        expect(entry.get("args") == [], f"args {entry.get('args')!r} (want [])")
        env = entry.get("env")
        expect(
            isinstance(env, list) and all(isinstance(v, dict) and set(v) == {"name", "value"} for v in env),
            f"env {env!r} is not a list of {{name, value}}",
        )
        variables = {v["name"]: v["value"] for v in env}
        bearer = variables.get("TOOLHOST_RELAY_AUTHORIZATION", "")
        expect(bearer.startswith("Bearer "), "the env carries no Authorization value")
        expect(bearer not in json.dumps([command, entry["args"]]), "the bearer is on the command line")
    except CheckFailed as exc:
        checks.fail("entry-shape", str(exc))
        return None
    checks.ok("entry-shape", f"{entry['name']}: {command} with {', '.join(sorted(variables))} in env")
    return StdioServerParameters(command=command, args=entry["args"], env=variables)


async def main_async(mode: str, first_line: str) -> int:
    checks = Checks(f"python-stdio {mode}")
    names = session_check_names(mode)
    entry = json.loads(first_line).get("stdio")
    params = entry_checks(checks, entry if isinstance(entry, dict) else {})
    if params is None:
        for name in names:
            checks.fail(name, "no usable entry")
        return checks.summary()

    connected = False
    try:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(params, mode=client_mode(mode)) as client:
                connected = True
                await session_checks(checks, client, mode)
    except Exception as exc:  # noqa: BLE001 - includes anyio exception groups
        session_failed(checks, names, exc, connected)
    return checks.summary()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["legacy", "stateless", "auto"])
    parser.add_argument("--first-line", default=os.environ.get("TH_FIRST_LINE"))
    args = parser.parse_args()
    if not args.first_line:
        parser.error("need --first-line (or TH_FIRST_LINE): the serve example's first stdout line")
    return anyio.run(main_async, args.mode, args.first_line)


if __name__ == "__main__":
    sys.exit(main())
