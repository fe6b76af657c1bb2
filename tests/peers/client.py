#!/usr/bin/env python3
"""MCP client driver built on the official Python SDK (`mcp`), for Interlock's tests.

Talks MCP over Streamable HTTP to one URL and prints ONE JSON document on stdout.

    client.py --url URL [--key KEY] [--header 'Name: value']... [--timeout SECONDS] COMMAND...

COMMAND:
    list-tools            {"serverInfo":..., "protocolVersion":..., "capabilities":...,
                           "instructions":..., "tools":[...every page, full tool objects...]}
    call NAME JSON_ARGS   {"result": <CallToolResult>}
    call-task NAME JSON_ARGS
                          the call as an MCP task (2025-11-25, the SDK's experimental API):
                          {"task": <created Task>, "statuses": [{"status","statusMessage"}...
                          each change seen while polling], "result": <CallToolResult>}
    script FILE           FILE is a JSON array of steps run in ONE session:
                            {"op":"list-tools"} | {"op":"call","name":N,"arguments":{...}}
                            | {"op":"sleep","ms":N}
                          prints {"steps":[...], "notifications":[...]}; a failed step is
                          {"error":{"message":...,"code":...}} and the script goes on.

Failure to connect, to initialize, or of the command itself (list-tools/call) prints
{"error":{"message":..., "code":..., ["http_status":...], ["data":...]}} and exits 2.
`code` is the JSON-RPC error code when the failure is a JSON-RPC error (McpError),
else null. Usage errors exit 64. Run it with the peers venv's python (scripts/peers.sh).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import timedelta
from typing import Any

import anyio
import httpx
from mcp import ClientSession, types
from mcp.shared.exceptions import McpError

try:  # mcp >= 1.2x: the non-deprecated entry point takes a ready httpx client.
    from mcp.client.streamable_http import streamable_http_client as _new_client
    from mcp.shared._httpx_utils import create_mcp_http_client
except ImportError:  # pragma: no cover - older SDKs
    _new_client = None
from mcp.client.streamable_http import streamablehttp_client

CLIENT_INFO = types.Implementation(name="interlock-peers-client-py", version="1")
EXIT_FAILURE = 2
EXIT_USAGE = 64


class UsageError(Exception):
    pass


def dump(model: Any) -> Any:
    """A pydantic model (or anything) as plain JSON data, field names as on the wire."""
    if hasattr(model, "model_dump"):
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return model


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """Flatten (nested) exception groups, which anyio task groups raise."""
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for sub in exc.exceptions:
            out.extend(leaf_exceptions(sub))
        return out
    return [exc]


def error_doc(exc: BaseException) -> dict[str, Any]:
    leaves = leaf_exceptions(exc)
    # Prefer the most telling leaf: a JSON-RPC error, then an HTTP status, then the first.
    chosen = next((e for e in leaves if isinstance(e, McpError)), None)
    chosen = chosen or next((e for e in leaves if isinstance(e, httpx.HTTPStatusError)), None)
    chosen = chosen or next((e for e in leaves if not isinstance(e, asyncio.CancelledError)), leaves[0])
    err: dict[str, Any] = {"message": str(chosen) or type(chosen).__name__, "code": None}
    if isinstance(chosen, McpError):
        err["code"] = chosen.error.code
        err["message"] = chosen.error.message
        if chosen.error.data is not None:
            err["data"] = chosen.error.data
    elif isinstance(chosen, httpx.HTTPStatusError):
        err["http_status"] = chosen.response.status_code
    err["type"] = type(chosen).__name__
    return {"error": err}


def transport(url: str, headers: dict[str, str], timeout: float):
    if _new_client is not None:
        http = create_mcp_http_client(headers=headers, timeout=httpx.Timeout(timeout, read=max(timeout, 300.0)))
        return _new_client(url, http_client=http), http
    return streamablehttp_client(url, headers=headers, timeout=timeout), None


async def list_tools(session: ClientSession, init: types.InitializeResult) -> dict[str, Any]:
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(dump(t) for t in page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    doc: dict[str, Any] = {
        "serverInfo": dump(init.serverInfo),
        "protocolVersion": init.protocolVersion,
        "capabilities": dump(init.capabilities),
    }
    if init.instructions is not None:
        doc["instructions"] = init.instructions
    doc["tools"] = tools
    return doc


async def call(session: ClientSession, name: str, arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    return {"result": dump(result)}


async def call_task(session: ClientSession, name: str, arguments: Any) -> dict[str, Any]:
    import warnings

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    created = await session.experimental.call_tool_as_task(name, arguments, ttl=3_600_000)
    task_id = created.task.taskId
    statuses: list[dict[str, Any]] = []
    async for status in session.experimental.poll_task(task_id):
        seen = {"status": status.status, "statusMessage": status.statusMessage}
        if not statuses or statuses[-1] != seen:
            statuses.append(seen)
    result = await session.experimental.get_task_result(task_id, types.CallToolResult)
    return {"task": dump(created.task), "statuses": statuses, "result": dump(result)}


async def run(opts: argparse.Namespace, command: list[str], state: dict[str, Any]) -> tuple[dict[str, Any], int]:
    headers = {}
    for h in opts.header:
        name, sep, value = h.partition(":")
        if not sep:
            raise UsageError(f"--header wants 'Name: value', got {h!r}")
        headers[name.strip()] = value.strip()
    if opts.key:
        headers["Authorization"] = f"Bearer {opts.key}"

    verb = command[0]
    if verb == "list-tools" and len(command) == 1:
        steps = None
    elif verb in ("call", "call-task") and len(command) == 3:
        try:
            arguments = json.loads(command[2])
        except json.JSONDecodeError as e:
            raise UsageError(f"JSON_ARGS is not JSON: {e}") from e
        steps = None
    elif verb == "script" and len(command) == 2:
        try:
            with open(command[1], encoding="utf-8") as f:
                steps = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise UsageError(f"cannot read script {command[1]}: {e}") from e
        if not isinstance(steps, list):
            raise UsageError("a script is a JSON array of steps")
    else:
        raise UsageError(f"unknown command {' '.join(command)!r}")

    notifications: list[dict[str, Any]] = state.setdefault("notifications", [])
    outputs: list[Any] = state.setdefault("steps", []) if verb == "script" else []
    current_step = [-1]

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            record = {"step": current_step[0]}
            record.update(dump(message.root))
            record.pop("jsonrpc", None)
            notifications.append(record)

    cm, http = transport(opts.url, headers, opts.timeout)
    try:
        async with cm as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(
                read,
                write,
                read_timeout_seconds=timedelta(seconds=opts.timeout),
                message_handler=on_message,
                client_info=CLIENT_INFO,
            ) as session:
                with anyio.fail_after(opts.timeout):
                    init = await session.initialize()
                if verb == "list-tools":
                    return await list_tools(session, init), 0
                if verb == "call":
                    return await call(session, command[1], arguments), 0
                if verb == "call-task":
                    return await call_task(session, command[1], arguments), 0
                for i, step in enumerate(steps):
                    current_step[0] = i
                    try:
                        op = step.get("op") if isinstance(step, dict) else None
                        if op == "list-tools":
                            outputs.append(await list_tools(session, init))
                        elif op == "call":
                            outputs.append(await call(session, step["name"], step.get("arguments", {})))
                        elif op == "sleep":
                            await anyio.sleep(float(step.get("ms", 0)) / 1000.0)
                            outputs.append({"slept_ms": step.get("ms", 0)})
                        else:
                            outputs.append({"error": {"message": f"unknown step {json.dumps(step, separators=(',', ':'))}", "code": None}})
                    except Exception as e:  # noqa: BLE001 - a failed step is recorded, the script goes on
                        outputs.append(error_doc(e))
                current_step[0] = len(steps)
                return {"steps": outputs, "notifications": notifications}, 0
    finally:
        if http is not None:
            await http.aclose()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="client.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", help="sent as 'Authorization: Bearer KEY'")
    parser.add_argument("--header", action="append", default=[], help="extra header 'Name: value' (repeatable)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    try:
        opts = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0
    if not opts.command:
        parser.print_usage(sys.stderr)
        return EXIT_USAGE

    state: dict[str, Any] = {}
    try:
        doc, code = anyio.run(run, opts, opts.command, state)
    except UsageError as e:
        print(f"client.py: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BaseException as e:  # noqa: BLE001 - anything else is a connection/protocol failure
        if isinstance(e, KeyboardInterrupt):
            raise
        doc, code = error_doc(e), EXIT_FAILURE
        if opts.command[0] == "script":
            doc.update(state)  # the steps that ran before the session failed
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
