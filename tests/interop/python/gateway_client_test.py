"""Interop test: the official MCP Python SDK client (mcp==2.3.0) against examples/gateway
bridging the official server-everything (stdio) and the official Python SDK server (HTTP).

Usage: gateway_client_test.py MODE   (started by tests/interop/gateway/run.sh)
  MODE  auto    the SDK default: probe server/discover, settle on 2026-07-28
        legacy  initialize handshake (the SDK offers 2025-11-25)

Environment: TH_URL and TH_AUTH (the gateway), TH_BRIDGED (the bridged servers to
check, of "py everything"), TH_PY_URL, TH_PY_AUTH and TH_PY_PID (the Python SDK server,
called directly for comparison, then killed by this test), TH_EVERYTHING_PID (server-everything, the gateway's child, killed by this
test), TH_GATEWAY_PID (its parent), TH_GATEWAY_LOG (the gateway's stderr, where its
event hook writes) and TH_EVERYTHING_WIRE (what server-everything read from stdin).

The checks are the ones tests/interop/ts/gateway_client_test.mjs runs, in the same
order and with the same names. Each prints `ok NAME` or `FAIL NAME: WHY`; the last line
is `gateway-python MODE: N passed, M failed`; the exit status is nonzero on any failure.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from client_test import Checks, CheckFailed, describe, expect, text_blocks  # noqa: E402

MODERN = "2026-07-28"
SESSION_TIMEOUT = 150.0
LOCAL_TOOLS = {"echo", "add"}
PY_TOOLS = {
    f"py_{name}"
    for name in (
        "echo", "add", "count", "count_reconnect", "fail", "wait", "cancelled_waits",
        "ping_on_call", "ping_alone", "toggle_tool",
    )
}
# server-everything 2026.8.31's tools, under the gateway's qualified names.
EVERYTHING_TOOLS = {
    f"everything_{name}"
    for name in (
        # what server-everything always lists
        "echo",
        "get-annotated-message",
        "get-env",
        "get-resource-links",
        "get-resource-reference",
        "get-structured-content",
        "get-sum",
        "get-tiny-image",
        "gzip-file-as-resource",
        "toggle-simulated-logging",
        "toggle-subscriber-updates",
        "trigger-long-running-operation",
        # what it lists for a client that declares roots, elicitation and sampling,
        # as the gateway's bridge does (it declares no tasks, nor URL elicitation)
        "get-roots-list",
        "trigger-elicitation-request",
        "trigger-sampling-request",
        "simulate-research-query",
    )
}
UNAVAILABLE = (
    'The MCP server "{}" that provides this tool is unavailable or failed, so the call did not complete. '
    "The other tools still work; try this one again later."
)
# What server-everything writes to stderr as it starts; the gateway's hook logs it.
EVERYTHING_STARTED = 'MCP server "everything" wrote to stderr: Starting default (STDIO) server...'
# How long a relayed cancellation may take to reach the remote server. Over
# 2026-07-28 the client cancels by closing its stream, which the gateway notices
# at its next keep-alive write (one second apart).
CANCEL_WITHIN = 10.0


def structured(result: types.CallToolResult) -> Any:
    return result.structured_content


def gateway_log() -> str:
    path = os.environ.get("TH_GATEWAY_LOG", "")
    with open(path, encoding="utf-8", errors="replace") as log:
        return log.read()


def children(pid: int) -> list[int]:
    """The process ids whose parent is `pid`."""
    listed = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False)
    return [int(word) for word in listed.stdout.split()]


def wire_messages() -> list[dict[str, Any]]:
    """The JSON-RPC messages server-everything read from stdin so far (recorded by
    tests/interop/gateway/wire_tap.cjs), a line still being written left out."""
    messages = []
    with open(os.environ["TH_EVERYTHING_WIRE"], encoding="utf-8") as wire:
        for line in wire:
            try:
                messages.append(json.loads(line))
            except ValueError:
                pass
    return messages


def wire_tool_calls(name: str) -> list[dict[str, Any]]:
    """The tools/call requests for `name` that server-everything read."""
    return [m for m in wire_messages() if m.get("method") == "tools/call" and m.get("params", {}).get("name") == name]


async def wait_until(probe: Callable[[], Awaitable[bool]], within: float, what: str) -> float:
    """Polls `probe` until it is true; returns the seconds it took, or fails naming `what`."""
    start = time.monotonic()
    while True:
        if await probe():
            return time.monotonic() - start
        if time.monotonic() - start > within:
            raise CheckFailed(f"{what}: not within {within:.0f}s")
        await anyio.sleep(0.05)


def refuses_connections(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=1.0):
            return False
    except ConnectionRefusedError:
        return True


async def call_and_cancel(client: Client, name: str, arguments: dict[str, Any]) -> list[float]:
    """Calls `name`, cancels the call after its first progress event, and returns the
    progress seen; fails unless the call ended cancelled (no result)."""
    progress: list[float] = []
    started = anyio.Event()
    outcome: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)
        started.set()

    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def call() -> None:
            with scope:
                outcome.append(await client.call_tool(name, arguments, progress_callback=on_progress))

        tg.start_soon(call)
        with anyio.fail_after(15):
            await started.wait()
        scope.cancel()
    expect(not outcome, f"the call returned {outcome!r} although it was cancelled")
    expect(scope.cancelled_caught, "the call was not cancelled")
    return progress


async def call_and_kill(client: Client, name: str, arguments: dict[str, Any], pid: int) -> types.CallToolResult:
    """Calls `name`, kills process `pid` after the call's first progress event, and
    returns the call's result."""
    started = anyio.Event()
    outcome: list[types.CallToolResult] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async with anyio.create_task_group() as tg:

        async def call() -> None:
            outcome.append(await client.call_tool(name, arguments, progress_callback=on_progress))

        tg.start_soon(call)
        with anyio.fail_after(15):
            await started.wait()
        os.kill(pid, signal.SIGKILL)
    return outcome[0]


@asynccontextmanager
async def direct_client(url: str, auth: str, mode: str) -> AsyncIterator[Client]:
    """The same SDK client in the same mode, connected straight to a bridged server."""
    async with httpx2.AsyncClient(headers={"Authorization": auth}, timeout=30.0) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


def relayed_part(result: types.CallToolResult) -> dict[str, Any]:
    """What a bridge must pass through: content, structured content, isError and the
    tool's own `_meta`. The `io.modelcontextprotocol/` keys describe the hop (each
    server names itself there), so they are left out."""
    meta = {k: v for k, v in (result.meta or {}).items() if not k.startswith("io.modelcontextprotocol/")}
    return {
        "content": [c.model_dump() for c in result.content],
        "structuredContent": result.structured_content,
        "isError": result.is_error,
        "_meta": meta,
    }


async def session_checks(checks: Checks, client: Client, mode: str, bridged: set[str]) -> None:
    async def connect() -> str:
        version = client.protocol_version
        if mode == "auto":
            expect(version == MODERN, f"negotiated {version!r} (want {MODERN})")
        else:
            expect(version != MODERN, f"negotiated {version!r} (want a handshake-era revision)")
        return f"protocol {version}"

    await checks.run("connect", connect)

    async def list_tools() -> str:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        names = set(tools)
        expect(LOCAL_TOOLS <= names, f"local tools missing: {sorted(LOCAL_TOOLS - names)}")
        py = {n for n in names if n.startswith("py_")}
        everything = {n for n in names if n.startswith("everything_")}
        strays = names - LOCAL_TOOLS - py - everything
        expect(not strays, f"tools neither local nor qualified: {sorted(strays)}")
        if "py" in bridged:
            expect(py == PY_TOOLS, f"py_* tools {sorted(py)} (want {sorted(PY_TOOLS)})")
            expect(
                tools["py_add"].output_schema is not None and "sum" in tools["py_add"].output_schema["properties"],
                f"py_add's outputSchema {tools['py_add'].output_schema!r}",
            )
        else:
            expect(not py, f"py_* tools listed although py is not bridged: {sorted(py)}")
        if "everything" in bridged:
            expect(
                everything == EVERYTHING_TOOLS,
                f"everything_* tools lack {sorted(EVERYTHING_TOOLS - everything)}, add {sorted(everything - EVERYTHING_TOOLS)}",
            )
            schema = tools["everything_get-structured-content"].output_schema or {}
            expect(
                set(schema.get("properties", {})) == {"temperature", "conditions", "humidity"},
                f"everything_get-structured-content's outputSchema {schema!r}",
            )
        else:
            expect(not everything, f"everything_* tools listed although everything is not bridged: {sorted(everything)}")
        return f"{len(names)} tools: {len(LOCAL_TOOLS)} local, {len(py)} py_*, {len(everything)} everything_*"

    await checks.run("list-tools", list_tools)

    text = "héllo, gateway ✓"

    async def call_local() -> None:
        echoed = await client.call_tool("echo", {"text": text})
        expect(not echoed.is_error and text_blocks(echoed) == [text], f"echo: {echoed!r}")
        added = await client.call_tool("add", {"a": 2, "b": 3})
        expect(not added.is_error and structured(added) == {"sum": 5}, f"add: {added!r}")

    await checks.run("call-local", call_local)

    if "py" in bridged:

        async def call_py() -> None:
            echoed = await client.call_tool("py_echo", {"text": text})
            expect(not echoed.is_error and text_blocks(echoed) == [text], f"py_echo: {echoed!r}")
            added = await client.call_tool("py_add", {"a": 2, "b": 3.5})
            expect(not added.is_error and structured(added) == {"sum": 5.5}, f"py_add: {added!r}")
            failed = await client.call_tool("py_fail", {"why": "no such invoice"})
            expect(failed.is_error is True, f"py_fail isError is {failed.is_error!r}")
            want = "Error executing tool fail: no such invoice"
            expect(text_blocks(failed) == [want], f"py_fail content {text_blocks(failed)!r}")
            # Unchanged: the same calls made straight to the Python server give the same results.
            async with direct_client(os.environ["TH_PY_URL"], os.environ["TH_PY_AUTH"], mode) as py:
                for name, args, through in (("add", {"a": 2, "b": 3.5}, added), ("fail", {"why": "no such invoice"}, failed)):
                    direct = await py.call_tool(name, args)
                    expect(
                        relayed_part(through) == relayed_part(direct),
                        f"py_{name} through the gateway {relayed_part(through)} != direct {relayed_part(direct)}",
                    )
                    # The hop's own keys name the server the client talks to, if any.
                    named = (through.meta or {}).get("io.modelcontextprotocol/serverInfo")
                    expect(named is None or named.get("name") == "gateway", f"py_{name}'s result names {named!r}")

        await checks.run("call-py", call_py)

    if "everything" in bridged:

        async def call_everything() -> None:
            echoed = await client.call_tool("everything_echo", {"message": text})
            expect(not echoed.is_error and text_blocks(echoed) == [f"Echo: {text}"], f"everything_echo: {echoed!r}")
            summed = await client.call_tool("everything_get-sum", {"a": 2, "b": 3.5})
            want = "The sum of 2 and 3.5 is 5.5."
            expect(not summed.is_error and text_blocks(summed) == [want], f"everything_get-sum: {summed!r}")
            forwarded = [m["params"].get("arguments") for m in wire_tool_calls("get-sum")]
            expect(forwarded == [{"a": 2, "b": 3.5}], f"server-everything read get-sum's arguments as {forwarded!r}")
            weather = await client.call_tool("everything_get-structured-content", {"location": "Chicago"})
            want_sc = {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
            expect(not weather.is_error and structured(weather) == want_sc, f"structuredContent {structured(weather)!r}")
            expect([json.loads(t) for t in text_blocks(weather)] == [want_sc], f"content {text_blocks(weather)!r}")
            ref = await client.call_tool("everything_get-resource-reference", {"resourceType": "Text", "resourceId": 2})
            kinds = [c.type for c in ref.content]
            expect(not ref.is_error and kinds == ["text", "resource", "text"], f"content types {kinds}")
            resource = ref.content[1].resource
            expect(str(resource.uri) == "demo://resource/dynamic/text/2", f"embedded resource uri {resource.uri}")
            expect(resource.text.startswith("Resource 2: This is a plaintext resource"), f"resource text {resource.text!r}")
            bad = await client.call_tool("everything_get-resource-reference", {"resourceType": "Text", "resourceId": 0})
            expect(bad.is_error is True, f"resourceId 0: isError is {bad.is_error!r}")
            want = "Invalid resourceId: 0. Must be a finite positive integer."
            expect(text_blocks(bad) == [want], f"resourceId 0: content {text_blocks(bad)!r}")

        await checks.run("call-everything", call_everything)

    if "py" in bridged:

        async def progress_py() -> str:
            seen: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            result = await client.call_tool("py_count", {"steps": 3}, progress_callback=on_progress)
            expect(text_blocks(result) == ["counted 3"], f"content {text_blocks(result)!r}")
            expect(seen == [1, 2, 3], f"progress {seen!r} (want [1, 2, 3])")
            return f"progress {seen}"

        await checks.run("progress-py", progress_py)

    if "everything" in bridged:

        async def progress_everything() -> str:
            seen: list[tuple[float, float | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append((value, total))

            result = await client.call_tool(
                "everything_trigger-long-running-operation", {"duration": 0.4, "steps": 4}, progress_callback=on_progress
            )
            want = "Long running operation completed. Duration: 0.4 seconds, Steps: 4."
            expect(text_blocks(result) == [want], f"content {text_blocks(result)!r}")
            expect(seen == [(1, 4), (2, 4), (3, 4), (4, 4)], f"progress {seen!r} (want 1..4 of 4)")
            return f"progress {[p for p, _ in seen]} of 4"

        await checks.run("progress-everything", progress_everything)

    if "py" in bridged:

        async def cancel_py() -> str:
            tag = f"python-{mode}-{os.getpid()}"
            before = await client.call_tool("py_cancelled_waits", {})
            expect(structured(before) == {"tags": []}, f"cancelled waits before any cancel: {structured(before)!r}")
            await call_and_cancel(client, "py_wait", {"tag": tag, "seconds": 60})

            async def seen() -> bool:
                return structured(await client.call_tool("py_cancelled_waits", {})) == {"tags": [tag]}

            took = await wait_until(seen, CANCEL_WITHIN, f"the Python server never recorded the cancelled wait {tag!r}")
            return f"the Python server saw the cancel after {took:.1f}s"

        await checks.run("cancel-py", cancel_py)

    if "everything" in bridged:

        async def cancel_everything() -> str:
            args = {"duration": 30, "steps": 30}
            await call_and_cancel(client, "everything_trigger-long-running-operation", args)
            calls = [m["id"] for m in wire_tool_calls("trigger-long-running-operation") if m["params"].get("arguments") == args]
            expect(len(calls) == 1, f"server-everything read {len(calls)} such tools/call (want 1)")

            async def seen() -> bool:
                return any(
                    m.get("method") == "notifications/cancelled" and m["params"].get("requestId") == calls[0]
                    for m in wire_messages()
                )

            took = await wait_until(seen, CANCEL_WITHIN, f"server-everything never read a notifications/cancelled for request {calls[0]}")
            return f"server-everything read notifications/cancelled for request {calls[0]} after {took:.1f}s"

        await checks.run("cancel-everything", cancel_everything)

    if "py" in bridged:

        async def kill_py() -> str:
            # Killed in the middle of a call: that call, and every later py_* call,
            # ends in a clear tool error.
            cut = await call_and_kill(client, "py_wait", {"tag": "killed", "seconds": 60}, int(os.environ["TH_PY_PID"]))
            expect(cut.is_error is True, f"the call cut by the kill: isError is {cut.is_error!r}")
            expect(text_blocks(cut) == [UNAVAILABLE.format("py")], f"the call cut by the kill: {text_blocks(cut)!r}")
            py_url = os.environ["TH_PY_URL"]

            async def gone() -> bool:
                return refuses_connections(py_url)

            await wait_until(gone, 5.0, "the killed Python server still accepts connections")

            # The layer finds it gone, cannot connect it again, and takes its
            # tools off the list (README, "the gateway": at most 1 s of grace).
            async def unlisted() -> bool:
                return not any(t.name.startswith("py_") for t in (await client.list_tools()).tools)

            took = await wait_until(unlisted, 10.0, "the killed server's tools are still listed")
            dead = await client.call_tool("py_echo", {"text": text})
            expect(dead.is_error is True, f"py_echo after the kill: isError is {dead.is_error!r}")
            expect(
                text_blocks(dead)[0].startswith('Unknown tool: "py_echo" is not available'),
                f"py_echo after the kill: {text_blocks(dead)!r}",
            )
            expect('MCP server "py" is gone' in gateway_log(), "the gateway's hook heard nothing of the death")
            echoed = await client.call_tool("echo", {"text": text})
            expect(not echoed.is_error and text_blocks(echoed) == [text], f"echo after the kill: {echoed!r}")
            if "everything" in bridged:
                echoed = await client.call_tool("everything_echo", {"message": text})
                expect(text_blocks(echoed) == [f"Echo: {text}"], f"everything_echo after the kill: {echoed!r}")
            return f"the cut call failed clearly, py_* left the list after {took:.1f}s, the rest still serves"

        await checks.run("kill-py", kill_py)

    if "everything" in bridged:

        async def kill_everything() -> str:
            # Killed in the middle of a call: that call ends in a clear tool error,
            # and the next everything_* call starts server-everything again.
            gateway = int(os.environ["TH_GATEWAY_PID"])
            first = int(os.environ["TH_EVERYTHING_PID"])
            expect(children(gateway) == [first], f"the gateway's children are {children(gateway)} (want [{first}])")
            args = {"duration": 30, "steps": 30}
            cut = await call_and_kill(client, "everything_trigger-long-running-operation", args, first)
            expect(cut.is_error is True, f"the call cut by the kill: isError is {cut.is_error!r}")
            expect(text_blocks(cut) == [UNAVAILABLE.format("everything")], f"the call cut by the kill: {text_blocks(cut)!r}")
            detail = 'MCP server "everything": tools/call of "trigger-long-running-operation" failed'
            expect(detail in gateway_log(), "the gateway's hook heard no detail")
            echoed = await client.call_tool("everything_echo", {"message": text})
            expect(not echoed.is_error and text_blocks(echoed) == [f"Echo: {text}"], f"everything_echo after the kill: {echoed!r}")

            async def replaced() -> bool:
                # The new child's stderr reaches the gateway's log on a thread of its own.
                now = children(gateway)
                return len(now) == 1 and now[0] != first and gateway_log().count(EVERYTHING_STARTED) == 2

            await wait_until(
                replaced,
                5.0,
                "no new server-everything (want one child of the gateway, not the killed one, and a second start in its log)",
            )
            echoed = await client.call_tool("echo", {"text": text})
            expect(not echoed.is_error and text_blocks(echoed) == [text], f"echo after the kill: {echoed!r}")
            return f"pid {first} killed mid-call, pid {children(gateway)[0]} serves the next call"

        await checks.run("kill-everything", kill_everything)


async def main_async(mode: str) -> int:
    checks = Checks(f"gateway-python {mode}")
    url, auth = os.environ["TH_URL"], os.environ["TH_AUTH"]
    bridged = set(os.environ.get("TH_BRIDGED", "py everything").split())
    try:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with httpx2.AsyncClient(headers={"Authorization": auth}, timeout=30.0) as http:
                client_mode = "auto" if mode == "auto" else "legacy"
                async with Client(streamable_http_client(url, http_client=http), mode=client_mode) as client:
                    await session_checks(checks, client, mode, bridged)
    except Exception as exc:  # noqa: BLE001 - includes anyio exception groups
        checks.fail("session", describe(exc))
    return checks.summary()


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in ("auto", "legacy"):
        print(__doc__, file=sys.stderr)
        return 2
    for name in ("TH_URL", "TH_AUTH", "TH_PY_URL", "TH_PY_AUTH", "TH_PY_PID", "TH_GATEWAY_LOG"):
        if not os.environ.get(name):
            print(f"{name} must be set (see tests/interop/gateway/run.sh)", file=sys.stderr)
            return 2
    return anyio.run(main_async, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
