"""Interop test: the official MCP Python SDK's stdio client (mcp==2.3.0) starts the "stdio"
entry that `cargo run --example serve` prints, and lists and calls its tools through it.

Usage: stdio_client_test.py MODE [--first-line JSON]
  MODE          legacy    initialize handshake over stdio
                stateless 2026-07-28 without a probe (Client(mode="2026-07-28"))
                auto      the SDK default: probe server/discover, fall back to initialize
  --first-line  the serve example's first stdout line; defaults to $TH_FIRST_LINE

The entry (`{"name", "command", "args", "env": [{"name", "value"}]}`, ACP's stdio shape)
starts the serve binary again; that copy finds the session's URL and bearer in its
environment and relays between its stdin/stdout and the session. Each check prints
`ok NAME` or `FAIL NAME: WHY`; the last line is `python-stdio MODE: N passed, M failed`;
the exit status is nonzero on any failure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

MODERN = "2026-07-28"
CHECK_TIMEOUT = 20.0
SESSION_TIMEOUT = 120.0
EXPECTED_TOOLS = {"echo", "add", "transfer", "count"}


class CheckFailed(Exception):
    """An expectation did not hold; the message says what was seen."""


def expect(cond: bool, why: str) -> None:
    if not cond:
        raise CheckFailed(why)


def describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping anyio's single-member exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, CheckFailed):
        return str(exc)
    return " ".join(f"{type(exc).__name__}: {exc}".split())


class Checks:
    def __init__(self, label: str) -> None:
        self.label = label
        self.passed = 0
        self.failed = 0

    def ok(self, name: str, note: str = "") -> None:
        self.passed += 1
        print(f"ok {name}" + (f" ({note})" if note else ""), flush=True)

    def fail(self, name: str, why: str) -> None:
        self.failed += 1
        print(f"FAIL {name}: {why}", flush=True)

    async def run(self, name: str, body: Callable[[], Awaitable[str | None]]) -> bool:
        try:
            with anyio.fail_after(CHECK_TIMEOUT):
                note = await body()
        except TimeoutError:
            self.fail(name, f"no answer within {CHECK_TIMEOUT:.0f}s")
            return False
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none aborts the run
            self.fail(name, describe(exc))
            if os.environ.get("TH_DEBUG"):
                traceback.print_exc()
            return False
        self.ok(name, note or "")
        return True

    def summary(self) -> int:
        print(f"{self.label}: {self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def text_blocks(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def client_mode(mode: str) -> str:
    return {"legacy": "legacy", "stateless": MODERN, "auto": "auto"}[mode]


def entry_checks(checks: Checks, entry: dict[str, Any]) -> StdioServerParameters | None:
    """The entry's shape: what an ACP agent (and this SDK) is handed."""
    try:
        expect(isinstance(entry.get("name"), str) and entry["name"], f"no name: {entry}")
        command = entry.get("command")
        expect(isinstance(command, str) and os.path.isabs(command), f"command {command!r} is not an absolute path")
        expect(entry.get("args") == [], f"args {entry.get('args')!r} (want [])")
        env = entry.get("env")
        expect(
            isinstance(env, list) and all(set(v) == {"name", "value"} for v in env),
            f"env {env!r} is not a list of {{name, value}}",
        )
        variables = {v["name"]: v["value"] for v in env}
        bearer = variables.get("TOOLHOST_BRIDGE_AUTHORIZATION", "")
        expect(bearer.startswith("Bearer "), "the env carries no Authorization value")
        expect(bearer not in json.dumps([command, entry["args"]]), "the bearer is on the command line")
    except CheckFailed as exc:
        checks.fail("entry-shape", str(exc))
        return None
    checks.ok("entry-shape", f"{entry['name']}: {command} with {', '.join(sorted(variables))} in env")
    return StdioServerParameters(command=command, args=entry["args"], env=variables)


async def main_async(mode: str, first_line: str) -> int:
    checks = Checks(f"python-stdio {mode}")
    names = ["connect", "list-tools", "call-echo", "call-add", "call-transfer-declined"]
    names += ["call-count-progress", "call-count-reconnect"]
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
        why = f"no answer within {SESSION_TIMEOUT:.0f}s" if isinstance(exc, TimeoutError) else describe(exc)
        if os.environ.get("TH_DEBUG"):
            traceback.print_exc()
        if connected:
            checks.fail("disconnect", why)
        else:
            for name in names:
                checks.fail(name, why if name == "connect" else "not connected")
    return checks.summary()


async def session_checks(checks: Checks, client: Client, mode: str) -> None:
    async def connect() -> str:
        version = client.protocol_version
        if mode == "legacy":
            expect(version in HANDSHAKE_PROTOCOL_VERSIONS, f"negotiated {version!r}, not a handshake-era revision")
            expect(client.server_info is not None and client.server_info.name == "toolhost-demo", "serverInfo")
        else:
            expect(version == MODERN, f"negotiated {version!r} (want {MODERN})")
        return f"protocol {version} over the relay"

    await checks.run("connect", connect)

    async def list_tools() -> str:
        result = await client.list_tools()
        names = {t.name for t in result.tools}
        expect(EXPECTED_TOOLS <= names, f"tools {sorted(names)} lack {sorted(EXPECTED_TOOLS - names)}")
        return ", ".join(sorted(names))

    await checks.run("list-tools", list_tools)

    async def call_echo() -> None:
        text = "héllo over stdio ✓"
        result = await client.call_tool("echo", {"text": text})
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        expect(text_blocks(result) == [text], f"content {text_blocks(result)!r} (want [{text!r}])")

    await checks.run("call-echo", call_echo)

    async def call_add() -> None:
        result = await client.call_tool("add", {"a": 2, "b": 3.5})
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        sc = result.structured_content
        expect(isinstance(sc, dict) and math.isclose(sc.get("sum", 0), 5.5), f"structuredContent {sc!r}")

    await checks.run("call-add", call_add)

    async def call_transfer_declined() -> None:
        result = await client.call_tool("transfer", {"amount": 500})
        expect(result.is_error is True, f"isError is {result.is_error!r} (want true)")
        expect(any("limit" in t for t in text_blocks(result)), f"no reason text: {text_blocks(result)!r}")

    await checks.run("call-transfer-declined", call_transfer_declined)

    async def count(reconnect: bool) -> str:
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        result = await client.call_tool("count", {"to": 4, "reconnect": reconnect}, progress_callback=on_progress)
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        # Behind the relay, the host closes the stream only in the handshake era, and the
        # relay (not this client) resumes it: stdio has no stream to close.
        closed = reconnect and mode == "legacy"
        want = "counted to 4; the stream was closed after step 1" if closed else "counted to 4"
        expect(text_blocks(result) == [want], f"content {text_blocks(result)!r} (want [{want!r}])")
        expect(seen == [1, 2, 3, 4], f"progress callbacks {seen!r} (want [1, 2, 3, 4])")
        return f"progress {seen}" + (", the relay resumed the stream the host closed" if closed else "")

    async def call_count_progress() -> str:
        return await count(False)

    await checks.run("call-count-progress", call_count_progress)

    async def call_count_reconnect() -> str:
        return await count(True)

    await checks.run("call-count-reconnect", call_count_reconnect)


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
