#!/usr/bin/env python3
"""A stand-in for an OpenAI-compatible model provider (issue 42), on loopback.

No provider is reachable from the test machine, so this speaks the documented
wire formats itself: OpenAI's `POST /v1/chat/completions` (a `chat.completion`
object, or with `"stream": true` server-sent `chat.completion.chunk` events
ending in `data: [DONE]`), Anthropic's `POST /v1/messages` (a `message`
object, or its named stream events from `message_start` to `message_stop`)
and Gemini's `POST /v1beta/models/{model}:generateContent` (a
`GenerateContentResponse`) and `:streamGenerateContent?alt=sse` (one
server-sent `GenerateContentResponse` a piece). Every request it receives is appended to the file named by
its first argument (method, path, the Authorization header, the body), so a
test can check what reached the provider and what never did. It prints
`listening on PORT` when ready. Standard library only.

A request whose texts contain `LEAK-PLEASE` is answered with an AWS access
key split across two pieces (two stream events), for the answer scan.

Two models misbehave as providers do: `standin-busy` answers HTTP 500 in
OpenAI's error shape; `standin-stall` streams its first event, then sends
nothing more for 600 s.

Models named `judge…` play the gateway's judge (its verdict format, issue 42):
- `judge` answers `{"verdict": "unsafe", ...}` when the texts it is shown
  contain `UNSAFE-CANARY`, and `safe` otherwise;
- `judge-slow` answers `safe` after 3 s;
- `judge-500` answers HTTP 500, until a file named like the log plus
  `.healthy` exists (then it answers `safe`);
- `judge-rambling` answers prose instead of the verdict format.
"""

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]


class Provider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # As a real provider's server does: each small write of a stream goes at
    # once (with Nagle's algorithm a kept-alive connection waited ~40 ms for
    # the gateway's delayed ACK between two chunks).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _json(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        with open(LOG, "a") as f:
            f.write(
                json.dumps(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("Authorization"),
                        "x_api_key": self.headers.get("x-api-key"),
                        "anthropic_version": self.headers.get("anthropic-version"),
                        "x_goog_api_key": self.headers.get("x-goog-api-key"),
                        "body": raw.decode(),
                    }
                )
                + "\n"
            )
        if self.path == "/v1/messages":
            return self._messages(json.loads(raw))
        if self.path.startswith("/v1beta/models/"):
            return self._gemini(self.path[len("/v1beta/models/"):], json.loads(raw))
        if self.path != "/v1/chat/completions":
            return self._json(404, {"error": {"message": "no such route", "type": "invalid_request_error"}})
        req = json.loads(raw)
        model = req["model"]
        if model.startswith("judge"):
            return self._judge(model, req)
        if model == "standin-busy":
            return self._json(500, {"error": {"message": "the standin is overloaded", "type": "server_error", "code": None}})
        words = answer_words(model, req)
        if not req.get("stream"):
            return self._json(
                200,
                {
                    "id": "chatcmpl-standin",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "".join(words)},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9},
                },
            )
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(data):
            b = data.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
            self.wfile.flush()

        for i, w in enumerate(words):
            event = {
                "id": "chatcmpl-standin",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "delta": ({"role": "assistant"} if i == 0 else {}) | {"content": w},
                        "finish_reason": None,
                    }
                ],
            }
            chunk("data: " + json.dumps(event) + "\n\n")
            if model == "standin-stall":
                time.sleep(600)
                return
        done = {
            "id": "chatcmpl-standin",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        chunk("data: " + json.dumps(done) + "\n\n")
        chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


    def _stream_start(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data):
        b = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def _messages(self, req):
        model = req["model"]
        words = answer_words(model, req)
        message = {
            "id": "msg_standin",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 0},
        }
        if not req.get("stream"):
            message["content"] = [{"type": "text", "text": "".join(words)}]
            message["stop_reason"] = "end_turn"
            message["usage"]["output_tokens"] = 4
            return self._json(200, message)
        self._stream_start()

        def event(name, data):
            self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n")

        event("message_start", {"type": "message_start", "message": message})
        event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        for w in words:
            event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": w}})
        event("content_block_stop", {"type": "content_block_stop", "index": 0})
        event(
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 4}},
        )
        event("message_stop", {"type": "message_stop"})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _gemini(self, rest, req):
        target, _, query = rest.partition("?")
        model, _, action = target.partition(":")
        words = answer_words(model, {"messages": req.get("contents", [])})

        def response(text, finish):
            r = {
                "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}],
                "modelVersion": model,
            }
            if finish:
                r["candidates"][0]["finishReason"] = "STOP"
                r["usageMetadata"] = {"promptTokenCount": 5, "candidatesTokenCount": 4, "totalTokenCount": 9}
            return r

        if action == "generateContent":
            return self._json(200, response("".join(words), True))
        if action != "streamGenerateContent" or "alt=sse" not in query:
            return self._json(404, {"error": {"code": 404, "message": "no such route", "status": "NOT_FOUND"}})
        self._stream_start()
        for i, w in enumerate(words):
            self._chunk("data: " + json.dumps(response(w, i == len(words) - 1)) + "\r\n\r\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _judge(self, model, req):
        shown = json.dumps(req["messages"])
        if model == "judge-slow":
            time.sleep(3)
        if model == "judge-500" and not os.path.exists(LOG + ".healthy"):
            return self._json(500, {"error": {"message": "judge overloaded", "type": "server_error"}})
        if model == "judge-rambling":
            content = "I looked at it and I think it is probably fine."
        elif "UNSAFE-CANARY" in shown:
            content = json.dumps(
                {"verdict": "unsafe", "category": "injection", "reason": "the canary asks to override instructions"}
            )
        else:
            content = json.dumps({"verdict": "safe", "category": "none", "reason": "an ordinary request"})
        return self._json(
            200,
            {
                "id": "chatcmpl-judge",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            },
        )


def answer_words(model, req):
    if "LEAK-PLEASE" in json.dumps(req["messages"]):
        return ["Here it is: aws_access_key_id=AKIAIOSF", "ODNN7EXAMPLE", " — keep it safe."]
    return ["Hello", " from", " " + model, "."]


server = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
