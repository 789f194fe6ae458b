"""The official MCP Python SDK server (mcp==2.3.0, MCPServer over Streamable HTTP) for
toolhost's client interop test.

Usage: server.py   (run with tests/interop/.venv/bin/python; see run.sh)

Binds 127.0.0.1 on a free port and prints one JSON line first:
`{"url": "http://127.0.0.1:PORT/mcp", "authorization": "Bearer <random>"}`. Every request
must carry that Authorization header (401 with `WWW-Authenticate: Bearer` otherwise), so the
client's credential path is exercised too. Serves both eras on one endpoint (the SDK routes
2026-07-28 requests by their headers and `_meta`), in the SDK's default SSE response mode.
Exits when stdin closes.

Tools: echo(text) -> text; add(a, b) -> {"sum": a + b} as structured content;
count(steps) reports `steps` progress events, then returns "counted N";
fail(why) raises ToolError, which the SDK turns into an isError result carrying `why`.
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import threading

import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
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


@mcp.tool(description="Always fails with the given reason.")
def fail(why: str) -> str:
    # ToolError: a failure the tool saw coming, whose message reaches the model.
    raise ToolError(why)


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
    authorization = "Bearer " + secrets.token_hex(32)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = require_bearer(mcp.streamable_http_app(), authorization)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    def stop_when_stdin_closes() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{port}/mcp", "authorization": authorization}), flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
