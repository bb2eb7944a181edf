"""Odd bodies under a success status, from a real HTTP server on 127.0.0.1, through each adapter
and its real SDK: each failure says what came back, not a guess that the server was unreachable."""

from __future__ import annotations

import gzip
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from lamar import ModelError

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
pytest.importorskip("openai", reason="the openai extra is not installed")
pytest.importorskip("ollama", reason="the ollama extra is not installed")

ADAPTERS = ["anthropic", "responses", "chat", "ollama"]
_REPLY: dict[str, tuple[dict[str, str], bytes]] = {}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        headers, body = _REPLY["now"]
        self.send_response(200)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _answer(url: str, adapter: str, headers: dict[str, str], body: bytes) -> str:
    from lamar.models import from_spec

    _REPLY["now"] = headers, body
    if adapter == "ollama":
        return from_spec("ollama:llama-test", host=url).complete("hi", max_tokens=16)
    provider = {"anthropic": "anthropic", "responses": "openai", "chat": "openai-chat"}[adapter]
    where = url if adapter == "anthropic" else url + "/v1"
    model = from_spec(f"{provider}:m", api_key="sk-test-key", base_url=where, max_retries=0)
    return model.complete("hi", max_tokens=16)


_JSON = {"content-type": "application/json"}
_PROSE = '["caf\u00e9"]'
_BODIES = {
    "anthropic": {"id": "m", "type": "message", "role": "assistant", "model": "m", "stop_reason": "end_turn",
                  "content": [{"type": "text", "text": _PROSE}], "stop_sequence": None,
                  "usage": {"input_tokens": 1, "output_tokens": 1}},
    "responses": {"id": "r", "object": "response", "created_at": 1, "model": "m", "status": "completed",
                  "output": [{"type": "message", "id": "o", "role": "assistant", "status": "completed",
                              "content": [{"type": "output_text", "text": _PROSE, "annotations": []}]}],
                  "parallel_tool_calls": False, "tool_choice": "auto", "tools": []},
    "chat": {"id": "c", "object": "chat.completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": _PROSE}}]},
    "ollama": {"model": "llama-test", "response": _PROSE, "done": True, "done_reason": "stop"},
}


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_body_that_does_not_decode_as_its_header_says_is_not_an_unreachable_server(url: str, adapter: str) -> None:
    # Content-Encoding: gzip on a plain body read "could not reach ... check that the service is running".
    raw = json.dumps(_BODIES[adapter]).encode()
    with pytest.raises(ModelError, match="does not decode as its Content-Encoding header says"):
        _answer(url, adapter, {**_JSON, "content-encoding": "gzip"}, raw)
    assert _answer(url, adapter, {**_JSON, "content-encoding": "gzip"}, gzip.compress(raw)) == _PROSE
    with pytest.raises(ModelError, match="a gzip-compressed body without the Content-Encoding: gzip header"):
        _answer(url, adapter, _JSON, gzip.compress(raw))


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_body_not_in_utf8_is_said_to_be_so(url: str, adapter: str) -> None:
    # The SDKs read JSON as UTF-8 whatever charset is declared; the message quoted a codec error
    # and guessed at a login page.
    latin = json.dumps(_BODIES[adapter], ensure_ascii=False).encode("latin-1")
    with pytest.raises(ModelError, match="a body that is not UTF-8, as JSON over HTTP must be"):
        _answer(url, adapter, {"content-type": "application/json; charset=iso-8859-1"}, latin)


@pytest.mark.parametrize(("adapter", "headers", "body"), [
    ("chat", {"content-type": "text/event-stream"},
     b'data: {"object": "chat.completion.chunk", "choices": [{"delta": {"content": "[]"}}]}\n\ndata: [DONE]\n\n'),
    ("chat", _JSON, b'data: {"object": "chat.completion.chunk", "choices": []}\n\ndata: [DONE]\n\n'),
    ("anthropic", {"content-type": "text/event-stream"}, b'event: message_start\ndata: {"type": "message_start"}\n\n'),
    ("responses", {"content-type": "text/event-stream"}, b'event: response.created\ndata: {}\n\n'),
    ("ollama", {"content-type": "application/x-ndjson"},
     b'{"response": "[", "done": false}\n{"response": "]", "done": false}\n{"response": "", "done": true}\n'),
], ids=["chat-sse", "chat-sse-as-json", "anthropic-sse", "responses-sse", "ollama-lines"])
def test_a_streamed_answer_is_said_to_be_a_stream(url: str, adapter: str, headers: dict[str, str],
                                                   body: bytes) -> None:
    with pytest.raises(ModelError, match="is a stream .*though the request asked for one whole answer"):
        _answer(url, adapter, headers, body)
