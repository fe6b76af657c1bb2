"""A minimal MCP server on the official Python SDK 2.x (`mcp` >= 2.3), for the
protocol-era tests (issue 15 item 21).

The SDK serves both eras on one entry point: over stdio the client's first
request decides the connection's era (`initialize` opens a 2025-11-25
handshake connection; a request carrying the 2026-07-28 `_meta` envelope opens
a stateless one) and a request from the other era is refused afterwards; over
Streamable HTTP each POST is routed by its `MCP-Protocol-Version` header.

One tool, `era`, answers with what the server saw of the request that called
it: the protocol version it served the call at and the `_meta` keys the
request carried, so a test can tell which era reached the upstream and that
no envelope of the other era leaked into it.

    python py2-server.py                       # stdio
    python py2-server.py --http PORT           # Streamable HTTP at http://127.0.0.1:PORT/mcp
"""

import argparse
import json

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py2-era-server", instructions="Reports the protocol era of each call.")


@server.tool()
def era(text: str, ctx: Context) -> str:
    """Echo `text` with the protocol version and the request `_meta` keys this call arrived with."""
    rc = ctx.request_context
    meta = (rc.params or {}).get("_meta") or {}
    return json.dumps(
        {
            "text": text,
            "protocolVersion": rc.protocol_version,
            "metaKeys": sorted(meta.keys()),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http, json_response=True)


if __name__ == "__main__":
    main()
