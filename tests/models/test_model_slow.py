"""A model that is reached but answers slower than the client's timeout: the error says to raise the
timeout, not to check the network (the real SDKs against a slow HTTP server on 127.0.0.1)."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from lamar import Lamar, Trace

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
pytest.importorskip("openai", reason="the openai extra is not installed")

TRACES = [Trace(f"t{i}", {"project": "slow"}, input="fix the build", outcome="reverted") for i in range(3)]


@pytest.fixture
def slow_url() -> Iterator[str]:
    """A server that reads each request, then takes 3 s to answer."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            time.sleep(3.0)
            try:
                self.send_response(500)
                self.end_headers()
            except OSError:  # the client gave up first
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _model(provider: str, url: str) -> Any:
    if provider == "anthropic":
        from lamar.models.anthropic import AnthropicModel

        return AnthropicModel("claude-test", api_key="sk-ant-test", base_url=url, timeout=0.5, max_retries=0)
    if provider == "openai":
        from lamar.models.openai import OpenAIModel

        return OpenAIModel("gpt-test", api="chat", api_key="sk-test", base_url=url + "/v1", timeout=0.5,
                           max_retries=0)
    pytest.importorskip("ollama", reason="the ollama extra is not installed")
    from lamar.models.ollama import OllamaModel

    return OllamaModel("llama-test", host=url, timeout=0.5)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_a_slow_answer_says_to_raise_the_timeout(slow_url: str, provider: str) -> None:
    report = Lamar(":memory:").sleep(traces=TRACES, model=_model(provider, slow_url), model_timeout=30)
    error = report.mining_error
    assert "timeout=" in error and "max_prompt_tokens" in error
    assert "check the network" not in error and "could not reach" not in error


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_a_server_not_reached_still_says_so(provider: str) -> None:
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}"
    error = Lamar(":memory:").sleep(traces=TRACES, model=_model(provider, url), model_timeout=30).mining_error
    assert "could not reach" in error and "timeout=" not in error
