"""Interop test: the official MCP Python SDK client (mcp==2.3.0) against a toolhost server.

Usage: client_test.py MODE [--url URL] [--auth "Bearer ..."]
  MODE      legacy    initialize handshake (Client(mode="legacy"): the SDK offers 2025-11-25)
            stateless 2026-07-28 without a probe (Client(mode="2026-07-28"))
            auto      the SDK default: probe server/discover, fall back to initialize
  --url     defaults to $TH_URL, --auth (the Authorization header value) to $TH_AUTH

The server must serve the demo tools of `cargo run --example serve` (echo, add, transfer).
Each check prints `ok NAME` or `FAIL NAME: WHY`; the last line is
`python-sdk MODE: N passed, M failed`; the exit status is nonzero on any failure.
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
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

MODERN = "2026-07-28"
CHECK_TIMEOUT = 20.0
SESSION_TIMEOUT = 120.0
EXPECTED_TOOLS = {"echo", "add", "transfer"}


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
    text = f"{type(exc).__name__}: {exc}"
    code = getattr(exc, "code", None)
    if isinstance(code, int) and str(code) not in text:
        text += f" (code {code})"
    return " ".join(text.split())


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


def raw_request_body(mode: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A request of the mode's era, for the raw HTTP checks (no SDK in the way)."""
    if mode == "stateless":
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientInfo": {"name": "interop-raw", "version": "0"},
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
        return body, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_PROTOCOL_VERSIONS[-1],
            "capabilities": {},
            "clientInfo": {"name": "interop-raw", "version": "0"},
        },
    }
    return body, {}


async def raw_post(url: str, authorization: str | None, mode: str) -> httpx2.Response:
    body, extra = raw_request_body(mode)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **extra}
    if authorization is not None:
        headers["Authorization"] = authorization
    async with httpx2.AsyncClient(timeout=10.0) as http:
        return await http.post(url, content=json.dumps(body).encode(), headers=headers)


def expect_401(resp: httpx2.Response) -> str:
    expect(resp.status_code == 401, f"HTTP {resp.status_code} (want 401); body {resp.text[:200]!r}")
    challenge = resp.headers.get("www-authenticate", "")
    expect(
        challenge.split(" ", 1)[0].lower() == "bearer",
        f"WWW-Authenticate is {challenge!r} (want a Bearer challenge)",
    )
    return f"401, WWW-Authenticate: {challenge}"


def session_check_names(mode: str) -> list[str]:
    """The checks `session_checks` runs in `mode`, in order."""
    names = ["connect"] + (["discover"] if mode != "legacy" else [])
    names += ["list-tools", "call-echo", "call-add", "call-transfer-ok", "call-transfer-declined"]
    return names + ["call-count-progress", "call-count-reconnect"]


async def main_async(mode: str, url: str, authorization: str) -> int:
    checks = Checks(f"python-sdk {mode}")
    names = session_check_names(mode)

    connected = False
    try:
        # One deadline for the whole session: a cancel scope may not wrap only the
        # client's __aenter__, whose task groups outlive it.
        with anyio.fail_after(SESSION_TIMEOUT):
            async with httpx2.AsyncClient(headers={"Authorization": authorization}, timeout=30.0) as http:
                async with Client(streamable_http_client(url, http_client=http), mode=client_mode(mode)) as client:
                    connected = True
                    await session_checks(checks, client, mode)
    except Exception as exc:  # noqa: BLE001 - includes anyio exception groups
        session_failed(checks, names, exc, connected)

    await auth_checks(checks, url, authorization, mode)
    return checks.summary()


def session_failed(checks: Checks, names: list[str], exc: BaseException, connected: bool) -> None:
    """Reports what ended a session early: at the disconnect, or before any of `names` ran."""
    why = f"no answer within {SESSION_TIMEOUT:.0f}s" if isinstance(exc, TimeoutError) else describe(exc)
    if os.environ.get("TH_DEBUG"):
        traceback.print_exc()
    if connected:
        checks.fail("disconnect", why)
    else:
        checks.fail(names[0], why)
        for name in names[1:]:
            checks.fail(name, "not connected")


async def session_checks(checks: Checks, client: Client, mode: str) -> None:
    async def connect() -> str:
        version = client.protocol_version
        if mode == "legacy":
            expect(version in HANDSHAKE_PROTOCOL_VERSIONS, f"negotiated {version!r}, not a handshake-era revision")
            expect(client.session.initialize_result is not None, "no InitializeResult recorded")
            expect(client.server_info is not None and bool(client.server_info.name), "no serverInfo.name")
        else:
            # auto must end on the stateless revision once the server speaks it
            expect(version == MODERN, f"negotiated {version!r} (want {MODERN})")
        if mode != "stateless":  # a pinned client synthesizes empty capabilities; `discover` checks them
            expect(client.server_capabilities.tools is not None, "server capabilities declare no tools")
        if mode == "stateless":
            return f"protocol {version}, adopted without a round trip"
        return f"protocol {version}"

    await checks.run("connect", connect)

    if mode != "legacy":

        async def discover() -> str:
            # mode=2026-07-28 adopts a synthesized DiscoverResult without asking the server:
            # send a real server/discover and validate the answer.
            raw = await client.session.send_discover(MODERN)
            result = types.DiscoverResult.model_validate(raw)
            expect(MODERN in result.supported_versions, f"supportedVersions {result.supported_versions}")
            expect(result.capabilities.tools is not None, "capabilities.tools missing")
            return f"supportedVersions {result.supported_versions}"

        await checks.run("discover", discover)

    async def list_tools() -> str:
        result = await client.list_tools()
        names = {t.name for t in result.tools}
        expect(EXPECTED_TOOLS <= names, f"tools {sorted(names)} lack {sorted(EXPECTED_TOOLS - names)}")
        for tool in result.tools:
            expect(tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema type is not object")
        return ", ".join(sorted(names))

    await checks.run("list-tools", list_tools)

    async def call_echo() -> None:
        text = "héllo, interop ✓"
        result = await client.call_tool("echo", {"text": text})
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        expect(text_blocks(result) == [text], f"content {text_blocks(result)!r} (want [{text!r}])")

    await checks.run("call-echo", call_echo)

    async def call_add() -> None:
        result = await client.call_tool("add", {"a": 2, "b": 3.5})
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        sc = result.structured_content
        expect(isinstance(sc, dict) and isinstance(sc.get("sum"), (int, float)), f"structuredContent {sc!r}")
        assert isinstance(sc, dict)
        expect(math.isclose(sc["sum"], 5.5), f"structuredContent.sum is {sc['sum']!r} (want 5.5)")
        texts = text_blocks(result)
        expect(any(_json_equal(t, sc) for t in texts), f"no text block holding the JSON {sc}: {texts!r}")

    await checks.run("call-add", call_add)

    async def call_transfer_ok() -> None:
        result = await client.call_tool("transfer", {"amount": 7})
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        expect(any("transferred 7" in t for t in text_blocks(result)), f"content {text_blocks(result)!r}")

    await checks.run("call-transfer-ok", call_transfer_ok)

    async def call_transfer_declined() -> None:
        result = await client.call_tool("transfer", {"amount": 500})
        expect(result.is_error is True, f"isError is {result.is_error!r} (want true); content {text_blocks(result)!r}")
        texts = text_blocks(result)
        expect(any("limit" in t for t in texts), f"no reason text mentioning the limit: {texts!r}")
        sc = result.structured_content
        expect(isinstance(sc, dict) and sc.get("code") == "over_limit", f"structuredContent {sc!r}")

    await checks.run("call-transfer-declined", call_transfer_declined)

    async def count(reconnect: bool) -> str:
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        result = await client.call_tool("count", {"to": 4, "reconnect": reconnect}, progress_callback=on_progress)
        expect(not result.is_error, f"isError true: {text_blocks(result)}")
        # The host closes the stream only where it can be resumed: the handshake era.
        closed = reconnect and mode == "legacy"
        want = "counted to 4; the stream was closed after step 1" if closed else "counted to 4"
        expect(text_blocks(result) == [want], f"content {text_blocks(result)!r} (want [{want!r}])")
        expect(seen == [1, 2, 3, 4], f"progress callbacks {seen!r} (want [1, 2, 3, 4])")
        return f"progress {seen}" + (", resumed after the host closed the stream" if closed else "")

    async def call_count_progress() -> str:
        return await count(False)

    await checks.run("call-count-progress", call_count_progress)

    async def call_count_reconnect() -> str:
        # In the handshake era the host closes the response stream after step 1;
        # the SDK must resume it with Last-Event-ID to see steps 2-4 and the result.
        return await count(True)

    await checks.run("call-count-reconnect", call_count_reconnect)


async def auth_checks(checks: Checks, url: str, authorization: str, mode: str) -> None:
    async def no_header() -> str:
        return expect_401(await raw_post(url, None, mode))

    await checks.run("http-401-without-authorization", no_header)

    async def wrong_bearer() -> str:
        return expect_401(await raw_post(url, "Bearer " + "0" * 64, mode))

    await checks.run("http-401-with-unknown-bearer", wrong_bearer)

    async def sdk_refused() -> str:
        async with httpx2.AsyncClient(timeout=10.0) as http:
            client = Client(streamable_http_client(url, http_client=http), mode=client_mode(mode))
            try:
                async with client:
                    # stateless adopts without a round trip: make one
                    await client.list_tools()
            except Exception as exc:  # noqa: BLE001 - the refusal is the expected outcome
                return f"refused: {describe(exc)}"
        raise CheckFailed("the SDK client worked without the Authorization header")

    await checks.run("sdk-refused-without-authorization", sdk_refused)


def _json_equal(text: str, value: Any) -> bool:
    try:
        return json.loads(text) == value
    except ValueError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["legacy", "stateless", "auto"])
    parser.add_argument("--url", default=os.environ.get("TH_URL"))
    parser.add_argument("--auth", default=os.environ.get("TH_AUTH"))
    args = parser.parse_args()
    if not args.url or not args.auth:
        parser.error("need --url and --auth (or TH_URL and TH_AUTH)")
    return anyio.run(main_async, args.mode, args.url, args.auth)


if __name__ == "__main__":
    sys.exit(main())
