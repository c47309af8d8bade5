"""A scripted local HTTP server: each path answers a queue of recorded responses, and logs requests."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """One scripted response."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[dict[str, list[str]]], Reply]


class LocalServer:
    """A threaded HTTP server on a free loopback port, run as a context manager."""

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeServer(LocalServer):
    """Serves ``routes[path]``: a list of replies used in order (the last one repeats) or a function."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Reply] | Responder] = {}
        self.requests: list[tuple[str, dict[str, list[str]]]] = []
        self._served: dict[str, int] = defaultdict(int)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server API
                parts = urlsplit(self.path)
                query = parse_qs(parts.query)
                server.requests.append((parts.path, query))
                reply = server._reply(parts.path, query)
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self._serve(Handler)

    def _reply(self, path: str, query: dict[str, list[str]]) -> Reply:
        route = self.routes.get(path)
        if route is None:
            return Reply(404, b"not found")
        if callable(route):
            return route(query)
        i = min(self._served[path], len(route) - 1)
        self._served[path] += 1
        return route[i]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"
