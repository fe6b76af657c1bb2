#!/usr/bin/env python3
"""An MCP client on the official Python SDK 2.x (`mcp` >= 2.3), for Interlock's tests.

Calls one tool over Streamable HTTP at protocol 2026-07-28 (the stateless era:
`mode="auto"` probes `server/discover`) and prints ONE JSON document on stdout:

    py2-client.py --url URL --key KEY [--timeout S] [--rounds N] call NAME JSON_ARGS
        {"protocolVersion": ..., "result": <CallToolResult>}

The SDK drives the multi round-trip pattern (SEP-2322) by itself: an
`input_required` answer with only a `requestState` is retried with it (50 ms to
250 ms apart), at most `--rounds` times. A failure prints {"error": {...}} and
exits 2. Run it with the py2 venv's python (scripts/peers.sh).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(opts: argparse.Namespace) -> int:
    arguments = json.loads(opts.arguments)
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {opts.key}"},
        timeout=httpx2.Timeout(opts.timeout),
    )
    try:
        async with Client(
            streamable_http_client(opts.url, http_client=http),
            read_timeout_seconds=opts.timeout,
            input_required_max_rounds=opts.rounds,
        ) as client:
            result = await client.call_tool(opts.name, arguments)
            doc = {
                "protocolVersion": client.protocol_version,
                "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
    except Exception as e:  # noqa: BLE001 - reported as JSON for the test to read
        leaf = e
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]
        print(json.dumps({"error": {"type": type(leaf).__name__, "message": str(leaf) or repr(leaf)}}))
        return 2
    finally:
        await http.aclose()
    print(json.dumps(doc))
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    p.add_argument("--rounds", type=int, default=10, help="input_required rounds before giving up")
    p.add_argument("verb", choices=["call"])
    p.add_argument("name")
    p.add_argument("arguments")
    sys.exit(asyncio.run(main(p.parse_args())))
