#!/usr/bin/env python3
"""A client of the LLM proxy on the official `openai` Python SDK (issue 42).

    llm-client.py BASE_URL API_KEY MODEL chat|chat-tool|stream|models [PROMPT]

(`chat-tool` sends PROMPT as a tool's result fed back to the model.)

Prints one JSON line: `{"content": ...}` (a streamed answer joined from its
chunks, with `"chunks": N`), `{"models": [...]}`, or, when the SDK raises,
`{"status": HTTP status, "error": the error object's message}` — or, when
the connection broke off, `{"broken": what the SDK said, "content": what
came before}`.
"""

import json
import sys

import httpx
import openai

base_url, api_key, model, mode = sys.argv[1:5]
prompt = sys.argv[5] if len(sys.argv) > 5 else "Hello"
client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
messages = [{"role": "user", "content": prompt}]
if mode == "chat-tool":
    messages = [
        {"role": "user", "content": "Summarize the page."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": prompt},
    ]
try:
    if mode == "models":
        print(json.dumps({"models": [m.id for m in client.models.list()]}))
    elif mode in ("chat", "chat-tool"):
        r = client.chat.completions.create(model=model, messages=messages)
        print(json.dumps({"content": r.choices[0].message.content}))
    elif mode == "stream":
        parts = []
        chunks = 0
        try:
            for c in client.chat.completions.create(model=model, messages=messages, stream=True):
                chunks += 1
                if c.choices and c.choices[0].delta.content:
                    parts.append(c.choices[0].delta.content)
        except (openai.APIConnectionError, httpx.HTTPError) as e:
            print(json.dumps({"broken": f"{type(e).__name__}: {e}", "content": "".join(parts)}))
            sys.exit(0)
        print(json.dumps({"content": "".join(parts), "chunks": chunks}))
    else:
        sys.exit(f"unknown mode {mode}")
except openai.APIStatusError as e:
    message = e.body.get("message") if isinstance(e.body, dict) else str(e.body)
    print(json.dumps({"status": e.status_code, "error": message}))
