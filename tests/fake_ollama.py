"""A local HTTP server that answers /api/generate as an Ollama server would: mining through the real Ollama
SDK with only the model's HTTP boundary played. Tests get its address from the `ollama_host` fixture."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar


class FakeOllama(BaseHTTPRequestHandler):
    """Answers /api/generate like an Ollama server whose model replies `reply`."""

    reply = "[]"
    prompts: ClassVar[list[str]] = []
    during: ClassVar[Callable[[], object] | None] = None  # what else happens while the model answers

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert self.path == "/api/generate"
        FakeOllama.prompts.append(body["prompt"])
        if FakeOllama.during is not None:
            FakeOllama.during()
        payload = json.dumps({"model": body["model"], "created_at": "2025-01-01T00:00:00Z", "response": self.reply,
                              "done": True, "done_reason": "stop"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving() -> Iterator[str]:
    """The server's address while it runs; it starts with nothing else happening while the model answers."""
    FakeOllama.during = None
    server = HTTPServer(("127.0.0.1", 0), FakeOllama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
