#!/usr/bin/env python3
"""A client of the LLM proxy on the official `anthropic` Python SDK (issue 42):
Anthropic's Messages API through the gateway, with the agent key as the SDK's
`api_key` (sent as `x-api-key`).

    llm-anthropic-client.py BASE_URL API_KEY MODEL chat|stream PROMPT

Prints one JSON line: `{"content": ...}` (a streamed answer joined from its
text deltas, with `"events": N`), or, when the SDK raises,
`{"status": HTTP status, "type": the error's type, "error": its message}`.
"""

import json
import sys

import anthropic

base_url, api_key, model, mode, prompt = sys.argv[1:6]
client = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0)
messages = [{"role": "user", "content": prompt}]
try:
    if mode == "chat":
        r = client.messages.create(model=model, max_tokens=64, messages=messages)
        print(json.dumps({"content": "".join(b.text for b in r.content if b.type == "text")}))
    elif mode == "stream":
        parts = []
        events = 0
        with client.messages.stream(model=model, max_tokens=64, messages=messages) as stream:
            for event in stream:
                events += 1
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    parts.append(event.delta.text)
        print(json.dumps({"content": "".join(parts), "events": events}))
    else:
        sys.exit(f"unknown mode {mode}")
except anthropic.APIStatusError as e:
    err = e.body.get("error", {}) if isinstance(e.body, dict) else {}
    print(json.dumps({"status": e.status_code, "type": err.get("type"), "error": err.get("message", str(e.body))}))
