"""Mock model servers for the end-to-end tests: Anthropic Messages, OpenAI Responses and Gemini, each streaming SSE.

Each server listens on 127.0.0.1 (port 0) in a thread, logs every request (path and parsed body) in `requests` and in
a JSONL file, and answers from a script: a function of the request that returns a `Reply` (text, a tool call, or a
summary), with the token usage to report (large to force an automatic compaction).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    """What the model answers: text, or one tool call (name and arguments), and the input tokens it reports."""

    text: str = ""
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    input_tokens: int = 100
    custom: bool = False  # OpenAI Responses: a custom tool call (apply_patch's freeform input in args["input"])


Script = Callable[[dict[str, Any]], Reply]


class Turns:
    """The model's script: each request gets the next reply, then "done". Where a harness asks its model for a
    compaction's summary, `compaction` tells such a request and `summary` is the text it gets."""

    def __init__(
        self, *replies: Reply, compaction: Callable[[dict[str, Any]], bool] | None = None, summary: str = ""
    ) -> None:
        self.replies = list(replies)
        self.compaction = compaction
        self.summary = summary

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.compaction is not None and self.compaction(body):
            return Reply(text=self.summary)
        return self.replies.pop(0) if self.replies else Reply(text="done")


@dataclass
class Request:
    path: str
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """The whole body as text, for searching what the model was sent."""
        return json.dumps(self.body, ensure_ascii=False)


class MockModel:
    """One API's mock. `api` is "anthropic", "openai" (Responses), "chat" (OpenAI Chat Completions) or "gemini"."""

    def __init__(self, api: str, script: Script, log: Path) -> None:
        self.api = api
        self.script = script
        self.log = log
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._calls = 0
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # model lists and health checks: an empty, valid answer
                body = b'{"data":[],"models":[]}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) if size else b""
                if self.headers.get("content-encoding") == "zstd":  # pragma: no cover - not seen so far
                    raise ValueError("zstd request bodies are not supported by the mock")
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                mock._record(self.path, body)
                if mock.api == "anthropic" and "count_tokens" in self.path:
                    self._json({"input_tokens": 100})
                    return
                if mock.api == "gemini" and ":countTokens" in self.path:
                    self._json({"totalTokens": 100})
                    return
                reply = mock.script(body)
                events = mock._events(reply, body)
                if mock.api == "gemini" and ":generateContent" in self.path:  # not streamed: the one chunk, as JSON
                    self._json(events[0][1])
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for name, data in events:
                    text = data if isinstance(data, str) else json.dumps(data)  # "[DONE]" goes as it is
                    line = (f"event: {name}\n" if name else "") + "data: " + text + "\n\n"
                    self.wfile.write(line.encode())
                self.wfile.flush()
                self.close_connection = True

            def _json(self, data: dict[str, Any]) -> None:
                out = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> MockModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(Request(path, body))
            with self.log.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"path": path, "body": body}, ensure_ascii=False) + "\n")
            self._arrived.notify_all()

    def wait_for(self, test: Callable[[list[Request]], bool], timeout: float = 60) -> list[Request]:
        """The requests so far, as soon as test(requests) holds (checked at each arrival); AssertionError with them
        if it does not within timeout seconds."""
        with self._lock:
            if not self._arrived.wait_for(lambda: test(self.requests), timeout):
                paths = [r.path for r in self.requests]
                raise AssertionError(f"{len(self.requests)} requests, not the ones awaited: {paths}")
            return list(self.requests)

    def _next_id(self) -> int:
        with self._lock:
            self._calls += 1
            return self._calls

    def _events(self, reply: Reply, body: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
        n = self._next_id()
        if self.api == "anthropic":
            return _anthropic(reply, n, str(body.get("model", "claude")))
        if self.api == "openai":
            return _openai(reply, n, str(body.get("model", "gpt")))
        if self.api == "chat":
            return _chat(reply, n, str(body.get("model", "gpt")))
        return _gemini(reply)


def _anthropic(reply: Reply, n: int, model: str) -> list[tuple[str | None, dict[str, Any]]]:
    usage = {"input_tokens": reply.input_tokens, "output_tokens": 1, "cache_read_input_tokens": 0}
    usage["cache_creation_input_tokens"] = 0
    ev: list[tuple[str | None, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        )
    ]
    if reply.tool:
        block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": reply.tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.args)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text or "ok"}
        stop = "end_turn"
    ev += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {**usage, "output_tokens": 10},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return ev


def _openai(reply: Reply, n: int, model: str) -> list[tuple[str | None, dict[str, Any]]]:
    rid = f"resp_{n}"
    if reply.tool and reply.custom:
        item: dict[str, Any] = {
            "type": "custom_tool_call",
            "id": f"ctc_{n}",
            "call_id": f"call_{n}",
            "name": reply.tool,
            "input": reply.args.get("input", ""),
            "status": "completed",
        }
    elif reply.tool:
        item = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": reply.tool,
            "arguments": json.dumps(reply.args),
            "status": "completed",
        }
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.text or "ok", "annotations": []}],
        }
    usage = {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + 10,
    }
    base = {"id": rid, "object": "response", "model": model, "status": "in_progress", "output": []}
    ev: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": base}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
    ]
    if item["type"] == "message":
        ev.append(
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": reply.text or "ok",
                },
            )
        )
    ev += [
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": [item], "usage": usage},
            },
        ),
    ]
    return ev


def _chat(reply: Reply, n: int, model: str) -> list[tuple[str | None, Any]]:
    """OpenAI Chat Completions, streamed: chat.completion.chunk deltas, a usage chunk, then [DONE]."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [choice],
        }

    if reply.tool:
        call = {"index": 0, "id": f"call_{n}", "type": "function", "function": {"name": reply.tool, "arguments": ""}}
        args = {"index": 0, "function": {"arguments": json.dumps(reply.args)}}
        chunks = [chunk({"role": "assistant", "content": None, "tool_calls": [call]}), chunk({"tool_calls": [args]})]
        chunks.append(chunk({}, "tool_calls"))
    else:
        chunks = [chunk({"role": "assistant", "content": reply.text or "ok"}), chunk({}, "stop")]
    usage = {"prompt_tokens": reply.input_tokens, "completion_tokens": 10, "total_tokens": reply.input_tokens + 10}
    last = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []}
    out: list[tuple[str | None, Any]] = [(None, c) for c in chunks]
    return [*out, (None, {**last, "usage": usage}), (None, "[DONE]")]


def _gemini(reply: Reply) -> list[tuple[str | None, dict[str, Any]]]:
    call = {"name": reply.tool, "args": reply.args}
    part: dict[str, Any] = {"functionCall": call} if reply.tool else {"text": reply.text or "ok"}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": 10,
            "totalTokenCount": reply.input_tokens + 10,
        },
        "modelVersion": "gemini-2.5-flash",
    }
    return [(None, chunk)]
