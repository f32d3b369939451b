"""A real HTTP server on 127.0.0.1 that speaks the chat-completions protocol, driven by scripts.

Each POST to `/v1/chat/completions` takes the next step of the current script and answers it:
a tool-calling reply, a text reply, an HTTP error status (e.g. 429 with Retry-After), or no
answer at all (the connection stays open until the server closes). A step may be a function of
the request body, so a script can react to what the client sent. Usage counts are derived from
the sizes of the request and the reply, so token accounting can be checked. Every request body
is recorded.

Faults below the protocol: `Raw` answers any status, content type and bytes (a body that is not
JSON, an HTML error page, truncated JSON, JSON that is no chat completion); `Reset` sends the
headers and part of the body, then resets the connection; `Drip` sends a valid reply a few
bytes at a time, so the whole answer takes longer than a request may. `Forever(step)` answers
every request with `step` (and never runs out), for a model that is always broken.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Call",
    "Drip",
    "FakeOpenAIServer",
    "Forever",
    "Hang",
    "Raw",
    "Reset",
    "Status",
    "Text",
    "ToolCalls",
]


@dataclass(frozen=True)
class Call:
    """One tool call; `arguments` is sent verbatim (so it may be malformed on purpose)."""

    name: str
    arguments: str | dict[str, Any] = "{}"

    def wire(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class ToolCalls:
    calls: tuple[Call, ...]
    content: str | None = None


@dataclass(frozen=True)
class Text:
    content: str


@dataclass(frozen=True)
class Status:
    code: int
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hang:
    """Never answer (until the server shuts down)."""


@dataclass(frozen=True)
class Raw:
    """Answer exactly these bytes with this status and content type (a correct Content-Length)."""

    body: bytes | str
    code: int = 200
    content_type: str = "application/json"

    def data(self) -> bytes:
        return self.body.encode() if isinstance(self.body, str) else self.body


@dataclass(frozen=True)
class Reset:
    """Send the headers of a complete reply and `sent` bytes of its body, then reset the
    connection (RST, not a clean close)."""

    sent: int = 40


@dataclass(frozen=True)
class Drip:
    """Send a valid reply (`step`) `chunk` bytes at a time, `interval` seconds apart."""

    step: ToolCalls | Text
    chunk: int = 8
    interval: float = 0.25


@dataclass(frozen=True)
class Forever:
    """Answer every request with `step`: a script of this one step never runs out."""

    step: Step


Reply = ToolCalls | Text | Status | Hang | Raw | Reset | Drip
Step = Reply | Forever | Callable[[dict[str, Any]], "ToolCalls | Text | Status | Raw"]


class FakeOpenAIServer:
    """Serve scripted chat completions on an ephemeral loopback port; use as a context manager."""

    def __init__(self, model_id: str = "fake-coder-1") -> None:
        self.model_id = model_id
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._script: list[Step] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._calls = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                step = server._next(body, {k.lower(): v for k, v in self.headers.items()})
                if isinstance(step, Hang):
                    server._closing.wait(60)
                    return
                if isinstance(step, Status):
                    err = {"error": {"message": step.message, "type": "fake", "code": step.code}}
                    self._send(step.code, err, step.headers)
                    return
                if isinstance(step, Raw):
                    self._send_bytes(step.code, step.data(), step.content_type)
                    return
                if isinstance(step, Reset):
                    self._reset(json.dumps(server._reply(body, Text("x" * 400))).encode(), step)
                    return
                if isinstance(step, Drip):
                    self._drip(json.dumps(server._reply(body, step.step)).encode(), step)
                    return
                self._send(200, server._reply(body, step))

            def _send(self, code: int, payload: Any, headers: dict[str, str] | None = None):
                self._send_bytes(code, json.dumps(payload).encode(), "application/json", headers)

            def _send_bytes(
                self,
                code: int,
                data: bytes,
                content_type: str,
                headers: dict[str, str] | None = None,
            ) -> None:
                self._head(code, len(data), content_type, headers)
                self.wfile.write(data)

            def _head(
                self,
                code: int,
                length: int,
                content_type: str = "application/json",
                headers: dict[str, str] | None = None,
            ) -> None:
                self.send_response(code)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(length))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()

            def _reset(self, data: bytes, step: Reset) -> None:
                self._head(200, len(data))
                self.wfile.write(data[: step.sent])
                self.wfile.flush()
                # SO_LINGER with a zero timeout: close() sends RST instead of FIN
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                self.close_connection = True

            def _drip(self, data: bytes, step: Drip) -> None:
                self._head(200, len(data))
                self.wfile.flush()
                try:
                    for i in range(0, len(data), step.chunk):
                        if server._closing.wait(step.interval):
                            break
                        self.wfile.write(data[i : i + step.chunk])
                        self.wfile.flush()
                except OSError:  # the client gave up: that is the point
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, steps: list[Step]) -> None:
        """Replace the script; requests past its end get a 500 saying so."""
        with self._lock:
            self._script = list(steps)
            self.requests.clear()
            self.headers.clear()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply | Raw:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self._script:
                return Status(500, "the fake server's script is exhausted")
            step = self._script[0]
            if isinstance(step, Forever):
                step = step.step
            else:
                self._script.pop(0)
        if callable(step) and not isinstance(step, Reply | Forever):
            return step(body)
        assert not isinstance(step, Forever), "Forever(Forever(...))"
        return step

    def _reply(self, body: dict[str, Any], step: ToolCalls | Text) -> dict[str, Any]:
        with self._lock:
            self._calls += 1
            n = self._calls
        if isinstance(step, ToolCalls):
            message: dict[str, Any] = {
                "role": "assistant",
                "content": step.content,
                "tool_calls": [
                    {
                        "id": f"call_{n}_{i}",
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.wire()},
                    }
                    for i, c in enumerate(step.calls)
                ],
            }
            finish = "tool_calls"
            produced = sum(len(c.name) + len(c.wire()) for c in step.calls)
        else:
            message = {"role": "assistant", "content": step.content}
            finish = "stop"
            produced = len(step.content)
        prompt = len(json.dumps(body.get("messages", []))) // 4
        completion = max(1, produced // 4)
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": self.model_id,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)
