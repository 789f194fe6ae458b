"""The official MCP Python SDK server (mcp==2.3.0, MCPServer over Streamable HTTP) for
toolhost's client interop test.

Usage: server.py [--stdio]   (run with tests/interop/.venv/bin/python; see run.sh)

With --stdio it serves the same tools over stdio instead (newline-delimited JSON-RPC on
stdin/stdout, the SDK's own stdio transport), for toolhost's stdio relay; it then prints
nothing else and exits when stdin closes.

Binds 127.0.0.1 on a free port and prints one JSON line first:
`{"url": "http://127.0.0.1:PORT/mcp", "authorization": "Bearer <random>"}`. Every request
must carry that Authorization header (401 with `WWW-Authenticate: Bearer` otherwise), so the
client's credential path is exercised too. Serves both eras on one endpoint (the SDK routes
2026-07-28 requests by their headers and `_meta`), in the SDK's default SSE response mode.
Exits when stdin closes.

Tools: echo(text) -> text; add(a, b) -> {"sum": a + b} as structured content;
count(steps) reports `steps` progress events, then returns "counted N";
count_reconnect(steps) does the same but closes its SSE stream after step 1 (resumable
with Last-Event-ID: the server keeps its events in an in-memory event store);
fail(why) raises ToolError, which the SDK turns into an isError result carrying `why`;
wait(tag, seconds) reports one progress event, then sleeps, and records `tag` when the call
is cancelled during the sleep; cancelled_waits() returns those tags as structured content
{"tags": [...]}, so a test can see that a cancellation reached this server.

Tools that speak to the client mid-call, as the SDK lets a tool do it: ping_on_call pings the
client naming its call (`related_request_id`: over Streamable HTTP the ping rides the call's own
SSE stream); ping_alone(seconds) pings it without (`ctx.session.send_ping()`'s way: the SDK sends
it on the session's standalone GET stream, and with no such stream open nothing carries it), and
fails when no answer came within `seconds`; toggle_tool(on_call) adds the tool `toggled`, or
removes it when it is there, and says so with notifications/tools/list_changed — on the call's
stream when `on_call`, else on the standalone stream (`ctx.session.send_tool_list_changed()`).
Over stdio every one of them travels on stdout alike.
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import threading

from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel

mcp = MCPServer("python-sdk-server", version="2.3.0")


@mcp.tool(description="Returns the given text unchanged.")
def echo(text: str) -> str:
    return text


class Sum(BaseModel):
    sum: float


@mcp.tool(description="Adds two numbers.")
def add(a: float, b: float) -> Sum:
    return Sum(sum=a + b)


@mcp.tool(description="Reports `steps` progress events, then returns.")
async def count(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted {steps}"


@mcp.tool(description="Reports progress, closes its SSE stream after step 1, reports the rest.")
async def count_reconnect(steps: int, ctx: Context) -> str:
    # The SDK offers close_sse_stream only with an event store and a client at
    # 2025-11-25 or later; say in the result whether the stream was closed, so
    # that a client which never had to resume cannot pass the test.
    closable = ctx.request_context.close_sse_stream is not None
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        if step == 1:
            await ctx.close_sse_stream()
            await anyio.sleep(0.05)
    return f"counted {steps}" + (" after closing the stream" if closable else "")


class MemoryEventStore(EventStore):
    """Every event of the run in memory (a test server): ids count up from 1, and a
    replay sends the later events of the stream the given id belongs to.

    The SDK names a POST's stream by its JSON-RPC request id, which repeats across
    MCP sessions, and gives the store no session: right for one session at a time,
    which is how run.sh runs the tests."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []

    async def store_event(self, stream_id: str, message: Any) -> str:
        event_id = str(len(self.events) + 1)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> str | None:
        found = [i for i, (event_id, _, _) in enumerate(self.events) if event_id == last_event_id]
        if not found:
            return None
        stream = self.events[found[0]][1]
        for event_id, stream_id, message in self.events[found[0] + 1 :]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


@mcp.tool(description="Always fails with the given reason.")
def fail(why: str) -> str:
    # ToolError: a failure the tool saw coming, whose message reaches the model.
    raise ToolError(why)


# The tags of the `wait` calls cancelled so far, in order (one process, one list).
cancelled_tags: list[str] = []


@mcp.tool(description="Reports progress 1, then waits `seconds` unless cancelled; a cancelled wait is recorded.")
async def wait(tag: str, seconds: float, ctx: Context) -> str:
    # The progress event tells the caller the handler is running, so a cancel sent
    # after it is one this handler can see (and not one for a call never started).
    await ctx.report_progress(1, None, "waiting")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        cancelled_tags.append(tag)
        raise
    return f"waited {seconds} seconds"


class CancelledWaits(BaseModel):
    tags: list[str]


@mcp.tool(description="The tags of the wait calls that were cancelled, oldest first.")
def cancelled_waits() -> CancelledWaits:
    return CancelledWaits(tags=list(cancelled_tags))


@mcp.tool(description="Pings the client on this call's stream, then returns.")
async def ping_on_call(ctx: Context) -> str:
    await ctx.session.send_request(
        types.PingRequest(),
        types.EmptyResult,
        request_read_timeout_seconds=10,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
    )
    return "pinged on the call's stream"


@mcp.tool(description="Pings the client unrelated to this call, waiting `seconds` for its answer.")
async def ping_alone(seconds: float, ctx: Context) -> str:
    # send_ping() with a timeout: no related request id, so the standalone channel.
    await ctx.session.send_request(types.PingRequest(), types.EmptyResult, request_read_timeout_seconds=seconds)
    return "pinged alone"


def toggled() -> str:
    return "toggled"


@mcp.tool(description="Adds the tool `toggled`, or removes it, and announces the change.")
async def toggle_tool(on_call: bool, ctx: Context) -> str:
    names = {tool.name for tool in await mcp.list_tools()}
    if "toggled" in names:
        mcp.remove_tool("toggled")
        done = "removed"
    else:
        mcp.add_tool(toggled, name="toggled", description="Appears and goes.")
        done = "added"
    if on_call:
        await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
    else:
        await ctx.session.send_tool_list_changed()
    return done


def require_bearer(app, expected: str):
    """An ASGI wrapper answering 401 to any HTTP request without the bearer."""
    wanted = expected.encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if not secrets.compare_digest(headers.get(b"authorization", b""), wanted):
                body = json.dumps(
                    {"jsonrpc": "2.0", "error": {"code": -32000, "message": "Unauthorized"}}
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="python-sdk-server"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    if sys.argv[1:] == ["--stdio"]:
        mcp.run("stdio")
        return
    authorization = "Bearer " + secrets.token_hex(32)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    # With an event store the SDK primes its streams, can close them mid-call and
    # replays on a GET with Last-Event-ID (retry hint: 50 ms).
    app = require_bearer(
        mcp.streamable_http_app(event_store=MemoryEventStore(), retry_interval=50), authorization
    )
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    def stop_when_stdin_closes() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{port}/mcp", "authorization": authorization}), flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
