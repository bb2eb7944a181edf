"""The app's Run sleep says what mining could not read of a reply it mined, as `lamar sleep` does."""

from __future__ import annotations

import html
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from lamar import Lamar

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient

from lamar_ui.app import UI, create_app

REPLY = json.dumps([{"precondition": "a module map is missing after a bump", "action": "reset the package caches",
                     "scope": {"project": "trace"}, "trace_ids": ["t0", "t1"]},
                    {"precondition": "the build broke", "action": "rebuild"}])


class Ollama(BaseHTTPRequestHandler):
    """An Ollama server whose model writes one lesson it can read and one it cannot."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        payload = json.dumps({"model": body["model"], "created_at": "2025-01-01T00:00:00Z", "response": REPLY,
                              "done": True, "done_reason": "stop"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def ollama_host() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), Ollama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_run_sleep_says_what_it_could_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               ollama_host: str) -> None:
    monkeypatch.setenv("OLLAMA_HOST", ollama_host)
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps({"id": f"t{i}", "context": {"project": "trace"}, "input": "bump",
                                          "outcome": "reverted"}) + "\n" for i in range(2)))
    with Lamar(seed=1) as lam:
        ui = UI(lam, report_path=tmp_path / "report.json", model="ollama:fake-model", traces=str(traces))
        with TestClient(create_app(ui), base_url="http://127.0.0.1") as client:
            client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
            page = html.unescape(client.post("/sleep/run", data={"token": ui.token}).text)
    message = re.search(r'<p class="message">([^<]*)</p>', page)
    assert message, page[-600:]
    assert "mining read only part of the model's output: 1 of the 2 lessons the model wrote could not be read" \
        in message.group(1)
    assert "no lesson was mined" not in message.group(1)
    saved = json.loads((tmp_path / "report.json").read_text())
    assert [p["kind"] for p in saved["proposals"]] == ["candidate"]
