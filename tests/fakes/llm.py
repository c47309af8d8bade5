"""A local OpenAI-compatible chat-completions endpoint for TL;DR tests: strict like the real one.

It refuses what OpenAI's API refuses, with the same status codes and ``{"error": {...}}`` shape:
a missing or wrong bearer key (401), a body that is not JSON or lacks ``model`` or ``messages``
(400), a model it does not serve (404), input over its context (400 context_length_exceeded),
another path or method (404/405). It records every request that arrived (headers included), and
can be made slow (``delay``, for timeouts) or broken (``status``, e.g. 500).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.fakes.http import LocalServer

PATH = "/v1/chat/completions"


@dataclass
class Arrived:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]
    body: dict | None


def default_answer(body: dict) -> str:
    """A recognisable line naming the start of the abstract it was asked about."""
    user = body["messages"][-1]["content"]
    words = user.split("Abstract:", 1)[-1].split()[:4]
    return f"TL;DR: The authors study {' '.join(words)} and find that it works."


class FakeLlm(LocalServer):
    """Serves ``POST /v1/chat/completions`` on a free loopback port."""

    def __init__(
        self,
        key: str = "sk-test-secret-key",
        models: tuple[str, ...] = ("tiny-tldr",),
        context_chars: int = 8000,
        answer: Callable[[dict], str] = default_answer,
    ) -> None:
        self.key, self.models, self.context_chars, self.answer = key, models, context_chars, answer
        self.delay = 0.0
        self.status: int | None = None  # answer every request with this error status
        self.arrived: list[Arrived] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server._lock:
                    server.arrived.append(Arrived(self.path, dict(self.headers), body))
                status, payload = server._reply(self.path, self.headers.get("Authorization"), body)
                if server.delay:
                    time.sleep(server.delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout): nothing to answer
                    pass

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                server.arrived.append(Arrived(self.path, dict(self.headers), None))
                data = json.dumps(_error("Method not allowed", "invalid_request_error")).encode()
                self.send_response(405)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL an admin would configure (DIGESTBOT_LLM_URL)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> list[Arrived]:
        """Requests to the chat-completions path."""
        return [a for a in self.arrived if a.path == PATH]

    def _reply(self, path: str, auth: str | None, body: dict | None) -> tuple[int, dict]:
        if path != PATH:
            return 404, _error(f"Invalid URL (POST {path})", "invalid_request_error")
        if auth != f"Bearer {self.key}":
            return 401, _error(
                "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
            )
        if not isinstance(body, dict):
            return 400, _error(
                "We could not parse the JSON body of your request.", "invalid_request_error"
            )
        if not body.get("model"):
            return 400, _error("you must provide a model parameter", "invalid_request_error")
        if body["model"] not in self.models:
            return 404, _error(
                f"The model `{body['model']}` does not exist.",
                "invalid_request_error",
                "model_not_found",
            )
        messages = body.get("messages")
        if (
            not isinstance(messages, list)
            or not messages
            or not all(
                isinstance(m, dict)
                and m.get("role") in ("system", "user", "assistant")
                and isinstance(m.get("content"), str)
                for m in messages
            )
        ):
            return 400, _error(
                "'messages' must be a non-empty list of messages", "invalid_request_error"
            )
        if sum(len(m["content"]) for m in messages) > self.context_chars:
            return 400, _error(
                "This model's maximum context length was exceeded.",
                "invalid_request_error",
                "context_length_exceeded",
            )
        if self.status is not None:
            return self.status, _error("The server had an error.", "server_error")
        return 200, {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.answer(body)},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


def _error(message: str, kind: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
