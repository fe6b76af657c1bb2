#!/usr/bin/env python3
"""A stdio MCP client on the official Python SDK (`mcp`), for Interlock's tests.

Spawns SERVER_COMMAND as a stdio MCP server (as Claude Desktop and other agents do with
`interlock mcp`), initializes, lists the tools, optionally calls one with a progress
token, and prints ONE JSON document on stdout:

    stdio-client.py [--call NAME] [--arguments JSON] [--timeout SECONDS] -- SERVER_COMMAND...

    {"tools": [names...], "result": <CallToolResult>, "progress": [{"progress":..,
     "total":.., "message":..}, ...]}

A failure (of initialize, list, or the call) is {"error": {"message":..., "code":...}}
in place of the part that failed (exit 2 if initialize or list failed). The server
gets this process's environment (so INTERLOCK_API_KEY / INTERLOCK_GATEWAY_URL reach it).
Run it with the peers venv's python (scripts/peers.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import timedelta

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

CLIENT_INFO = types.Implementation(name="interlock-peers-stdio-client-py", version="1")


def error_of(e: BaseException) -> dict:
    if isinstance(e, McpError):
        return {"message": e.error.message, "code": e.error.code}
    return {"message": f"{type(e).__name__}: {e}", "code": None}


async def run(args: argparse.Namespace, command: list[str]) -> tuple[dict, int]:
    out: dict = {}
    progress: list[dict] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append({"progress": value, "total": total, "message": message})

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    timeout = timedelta(seconds=args.timeout)
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, read_timeout_seconds=timeout, client_info=CLIENT_INFO
        ) as session:
            try:
                init = await session.initialize()
                out["protocolVersion"] = init.protocolVersion
                listed = await session.list_tools()
                out["tools"] = [t.name for t in listed.tools]
            except Exception as e:  # noqa: BLE001 - reported as JSON
                out["error"] = error_of(e)
                return out, 2
            if args.call:
                try:
                    result = await session.call_tool(
                        args.call,
                        json.loads(args.arguments),
                        read_timeout_seconds=timeout,
                        progress_callback=on_progress,
                    )
                    out["result"] = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
                except Exception as e:  # noqa: BLE001 - reported as JSON
                    out["error"] = error_of(e)
                out["progress"] = progress
    return out, 0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--call")
    p.add_argument("--arguments", default="{}")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no server command")
    try:
        out, rc = anyio.run(run, args, command)
    except Exception as e:  # noqa: BLE001 - e.g. the server exited before answering
        out, rc = {"error": error_of(e)}, 2
    print(json.dumps(out))
    return rc


if __name__ == "__main__":
    sys.exit(main())
