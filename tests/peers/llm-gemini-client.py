#!/usr/bin/env python3
"""A client of the LLM proxy on Google's official `google-genai` Python SDK
(issue 42), in Gemini's own wire format.

    llm-gemini-client.py BASE_URL API_KEY MODEL chat|chat-tool|stream [PROMPT]

(`chat-tool` sends PROMPT as a function's response fed back to the model.)

Prints one JSON line: `{"content": ...}` (a streamed answer joined from its
chunks, with `"chunks": N`), or, when the SDK raises, `{"status": HTTP
status, "error": the error's message}`.
"""

import json
import sys

from google import genai
from google.genai import errors, types

base_url, api_key, model, mode = sys.argv[1:5]
prompt = sys.argv[5] if len(sys.argv) > 5 else "Hello"
client = genai.Client(
    api_key=api_key,
    http_options=types.HttpOptions(base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1)),
)
contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
if mode == "chat-tool":
    contents = [
        types.Content(role="user", parts=[types.Part(text="Summarize the page.")]),
        types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name="fetch", args={}))]),
        types.Content(
            role="user",
            parts=[types.Part(function_response=types.FunctionResponse(name="fetch", response={"page": prompt}))],
        ),
    ]
config = types.GenerateContentConfig(system_instruction="Answer briefly.")
try:
    if mode in ("chat", "chat-tool"):
        r = client.models.generate_content(model=model, contents=contents, config=config)
        print(json.dumps({"content": r.text}))
    elif mode == "stream":
        parts = []
        chunks = 0
        for c in client.models.generate_content_stream(model=model, contents=contents, config=config):
            chunks += 1
            if c.text:
                parts.append(c.text)
        print(json.dumps({"content": "".join(parts), "chunks": chunks}))
    else:
        sys.exit(f"unknown mode {mode}")
except errors.APIError as e:
    print(json.dumps({"status": e.code, "error": e.message}))
