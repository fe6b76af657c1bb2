#!/usr/bin/env python3
"""An MCP server on the official Python SDK's low-level `Server` (issue 45
item 6) whose listings are partial, as real servers' often are:

- it declares `resources` (it lists resources) but registers no handler for
  `resources/templates/list`, so the SDK answers that listing with -32601
  "Method not found";
- with `--broken-prompts` it declares `prompts` and answers `prompts/list`
  with an error (-32603 "prompt store offline").

- with `--prompts-fail-after N` it declares `prompts` and lists one prompt,
  `greeting`, N times; every `prompts/list` after that answers an error
  (-32603 "prompt store offline"), until the file given with
  `--prompts-back-when PATH` exists (a server whose store goes away and
  comes back).

- with `--slow-start SECS` it reads nothing for SECS seconds before serving,
  as a server does that downloads itself (`npx`) or warms a cold venv.

One tool, `ping`, answers "pong". Run it with the peers venv's python
(scripts/peers.sh).
"""

import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import McpError

server = Server("partial-listings")


@server.list_tools()
async def list_tools():
    return [
        types.Tool(
            name="ping",
            description="Answers pong.",
            inputSchema={"type": "object", "properties": {}},
        )
    ]


@server.call_tool()
async def call_tool(name, arguments):
    return [types.TextContent(type="text", text="pong")]


@server.list_resources()
async def list_resources():
    return [types.Resource(uri="note://one", name="one", mimeType="text/plain")]


if "--broken-prompts" in sys.argv:

    @server.list_prompts()
    async def list_prompts():
        raise McpError(types.ErrorData(code=-32603, message="prompt store offline"))

if "--prompts-fail-after" in sys.argv:
    import os

    answers_left = int(sys.argv[sys.argv.index("--prompts-fail-after") + 1])
    back_when = (
        sys.argv[sys.argv.index("--prompts-back-when") + 1]
        if "--prompts-back-when" in sys.argv
        else None
    )

    @server.list_prompts()
    async def list_prompts():
        global answers_left
        if answers_left <= 0 and not (back_when and os.path.exists(back_when)):
            raise McpError(types.ErrorData(code=-32603, message="prompt store offline"))
        answers_left -= 1
        return [types.Prompt(name="greeting", description="Says hello.")]


async def main():
    if "--slow-start" in sys.argv:
        await anyio.sleep(float(sys.argv[sys.argv.index("--slow-start") + 1]))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
