"""A stand-in for the Hugging Face Hub's file endpoint on 127.0.0.1, for huggingface_hub clients.

It answers ``HEAD``/``GET /{owner}/{name}/resolve/{revision}/{path}`` as the hub does for a
small file: 200 with ``X-Repo-Commit``, ``ETag`` and ``Content-Length``; 404 with
``X-Error-Code: RepoNotFound`` for an unknown repo and ``EntryNotFound`` (plus the commit) for
a file the repo lacks. It records every request, so a test can tell a cache hit from a fetch.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"


class FakeHub:
    """Serves ``repos`` ({'owner/name': {'path/in/repo': local file}}) until stopped."""

    def __init__(self, repos: dict[str, dict[str, Path]]) -> None:
        self.repos = repos
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802 - the http.server API
                hub._answer(self, body=False)

            def do_GET(self) -> None:  # noqa: N802
                hub._answer(self, body=True)

            def log_message(self, *args: object) -> None:
                pass  # quiet test output

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Shut the server down and free its port: the hub is unreachable from now on."""
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        self.requests.append((h.command, h.path))
        parts = h.path.split("?")[0].strip("/").split("/")
        repo, rest = "/".join(parts[:2]), parts[2:]
        if len(rest) < 3 or rest[0] != "resolve" or repo not in self.repos:
            return self._error(h, "RepoNotFound", "Repository not found")
        file = self.repos[repo].get("/".join(rest[2:]))
        if file is None:
            return self._error(h, "EntryNotFound", "Entry not found", commit=True)
        data = file.read_bytes()
        h.send_response(200)
        h.send_header("X-Repo-Commit", COMMIT)
        h.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Content-Type", "application/octet-stream")
        h.end_headers()
        if body:
            h.wfile.write(data)

    @staticmethod
    def _error(h: BaseHTTPRequestHandler, code: str, text: str, commit: bool = False) -> None:
        payload = f'{{"error": "{text}"}}'.encode()
        h.send_response(404)
        h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", text)
        if commit:
            h.send_header("X-Repo-Commit", COMMIT)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if h.command == "GET":
            h.wfile.write(payload)
