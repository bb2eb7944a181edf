"""No request leaves a model call that sleep gave up on: the real anthropic and openai SDKs
against a real HTTP server on 127.0.0.1, which notes when each request arrives."""

from __future__ import annotations

import http.server
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lamar import Lamar, ModelError, Trace
from lamar.models.protocol import call_model

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
pytest.importorskip("openai", reason="the openai extra is not installed")
from lamar.models.anthropic import AnthropicModel
from lamar.models.openai import OpenAIModel

PROJECT = {"project": "deadline"}
TRACES = [Trace(f"t{i}", PROJECT, time=1000.0 + i, input="fix the build", attempted=["swift build"],
                tool_errors=["error: module map is stale"], output="", outcome="reverted") for i in range(3)]
RATE_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
ANSWER = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
          "content": [{"type": "text", "text": "[]"}], "stop_reason": "end_turn", "stop_sequence": None,
          "usage": {"input_tokens": 5, "output_tokens": 3}}
# Each reply: (status, headers, body, seconds to wait before answering).
Reply = tuple[int, dict[str, str], dict[str, Any], float]


class Server:
    """Answers every POST with `reply(n)` for the n-th request, and notes when each arrived."""

    def __init__(self, reply: Callable[[int], Reply], trickle: float = 0.0) -> None:
        self.arrivals: list[float] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.arrivals.append(time.monotonic())
                status, headers, body, delay = reply(len(outer.arrivals) - 1)
                time.sleep(delay)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    for name, value in {"content-type": "application/json", **headers}.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    step = 4 if trickle else max(len(data), 1)  # a trickle: a few bytes at a time
                    for at in range(0, len(data), step):
                        self.wfile.write(data[at:at + step])
                        self.wfile.flush()
                        time.sleep(trickle)
                except OSError:  # the client gave up on this request first
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def after(self, moment: float) -> int:
        return sum(1 for arrived in self.arrivals if arrived > moment)


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(reply: Callable[[int], Reply], trickle: float = 0.0) -> Server:
        server = Server(reply, trickle)
        threading.Thread(target=server.http.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.http.shutdown()
        server.http.server_close()


def model_at(provider: str, url: str, **options: Any) -> Any:
    if provider == "anthropic":
        return AnthropicModel("claude-test", api_key="sk-ant-test", base_url=url, **options)
    return OpenAIModel("gpt-test", api="chat", api_key="sk-test", base_url=url + "/v1", **options)


def abandoned_calls_end(within: float = 10.0) -> None:
    """Wait until every model call thread has ended, so that what it would send has arrived."""
    stop = time.monotonic() + within
    for worker in [t for t in threading.enumerate() if t.name == "lamar-model-call"]:
        worker.join(max(0.0, stop - time.monotonic()))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_rate_limited_call_sends_nothing_after_sleep_gave_up(serve, provider: str) -> None:  # type: ignore[no-untyped-def]
    # The server asks for a wait of 1 s; sleep gives up after 0.5 s. The SDK's own retries
    # (two by default) would send the prompt again after sleep returned.
    server = serve(lambda n: (429, {"retry-after": "1"}, RATE_LIMITED, 0.0))
    lam = Lamar(":memory:", seed=3)
    report = lam.sleep(traces=TRACES, model=model_at(provider, server.url), model_timeout=0.5)
    returned = time.monotonic()
    abandoned_calls_end()
    assert server.after(returned) == 0
    assert len(server.arrivals) == 1
    # A wait that cannot fit is not waited out: the call fails at once, saying why.
    assert report.summary["mining"]["model_calls"] == 1 and "rate limiting" in report.mining_error


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_hung_server_gets_no_attempt_after_the_deadline(serve, provider: str) -> None:  # type: ignore[no-untyped-def]
    # Each attempt times out at the client's 0.3 s; the retries that fit in model_timeout are made.
    server = serve(lambda n: (200, {}, ANSWER, 3.0))
    model = model_at(provider, server.url, timeout=0.3)
    # The last attempt's timeout ends at the deadline: either failure may be the one reported.
    with pytest.raises(ModelError, match="did not answer within 1.5 s|timed out"):
        call_model(model, "hello", max_tokens=16, timeout=1.5)
    returned = time.monotonic()
    abandoned_calls_end()
    assert len(server.arrivals) >= 2
    assert server.after(returned) == 0


def test_a_retry_that_fits_in_the_deadline_is_made(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda n: (429, {"retry-after-ms": "200"}, RATE_LIMITED, 0.0) if n == 0 else
                   (200, {}, ANSWER, 0.0))
    assert call_model(model_at("anthropic", server.url), "hello", max_tokens=16, timeout=5.0) == "[]"
    assert len(server.arrivals) == 2
    assert server.arrivals[1] - server.arrivals[0] >= 0.2


def test_max_retries_bounds_the_attempts(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda n: (529, {"retry-after-ms": "10"}, RATE_LIMITED, 0.0))
    with pytest.raises(ModelError, match="529"):
        call_model(model_at("anthropic", server.url, max_retries=1), "hello", max_tokens=16, timeout=5.0)
    assert len(server.arrivals) == 2


def test_a_model_called_directly_keeps_its_retries(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(lambda n: (500, {"retry-after-ms": "10"}, RATE_LIMITED, 0.0) if n < 2 else
                   (200, {}, ANSWER, 0.0))
    assert model_at("anthropic", server.url).complete("hello", max_tokens=16) == "[]"
    assert len(server.arrivals) == 3


def test_the_backoff_is_jittered_as_the_sdks_jitter_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Processes rate limited together must not retry in lock-step: each wait is the backoff less up
    # to a quarter, drawn from the seeded generator, so a seed gives the same waits again.
    import anthropic
    import httpx2

    from lamar.models import attempts

    failed = anthropic.APIConnectionError(request=httpx2.Request("POST", "http://127.0.0.1/v1/messages"))
    client = AnthropicModel("claude-test", api_key="sk-ant-test").client

    def waits(seed: int) -> list[list[float]]:
        monkeypatch.setattr(attempts, "_JITTER", random.Random(seed))
        return [[attempts._retry_wait(failed, anthropic, client, attempt) or 0.0 for attempt in range(6)]
                for _ in range(50)]

    drawn = waits(11)
    assert drawn == waits(11)
    for attempt, backoff in enumerate([0.5, 1.0, 2.0, 4.0, 8.0, 8.0]):
        column = [row[attempt] for row in drawn]
        assert all(0.75 * backoff <= wait <= backoff for wait in column)
        assert len(set(column)) == len(column) and max(column) - min(column) > 0.15 * backoff


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_structured_timeout_keeps_its_parts_within_the_deadline(serve, provider: str) -> None:  # type: ignore[no-untyped-def]
    # A client built with a short read timeout gives up on a stalled server at that timeout, not
    # at the time left in the call (which the server's late answer would fit in).
    import httpx2

    server = serve(lambda n: (200, {}, ANSWER, 2.0))
    model = model_at(provider, server.url, timeout=httpx2.Timeout(60.0, connect=2.0, read=0.3), max_retries=0)
    started = time.monotonic()
    with pytest.raises(ModelError, match="timed out"):
        call_model(model, "hello", max_tokens=16, timeout=5.0)
    assert time.monotonic() - started < 1.5
    assert len(server.arrivals) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_retry_after_past_two_minutes_is_not_waited_out(serve, provider: str) -> None:  # type: ignore[no-untyped-def]
    # openai-python's `_should_retry` gives up on a retry-after over MAX_RETRY_AFTER_DELAY (120 s);
    # Lamar slept it out within a long model_timeout, then sent the prompt again.
    server = serve(lambda n: (429, {"retry-after": "121"}, RATE_LIMITED, 0.0) if n == 0 else (200, {}, ANSWER, 0.0))
    started = time.monotonic()
    with pytest.raises(ModelError,
                       match=r"asks for a wait of 121 s: run sleep again after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"):
        call_model(model_at(provider, server.url), "hello", max_tokens=16, timeout=600.0)
    assert time.monotonic() - started < 30.0
    assert len(server.arrivals) == 1


@pytest.mark.parametrize(("headers", "retried"), [
    ({"retry-after": "120"}, True),
    ({"retry-after": "121"}, False),
    ({"retry-after-ms": "121000"}, False),
    ({"retry-after": "1e999"}, False),  # past a float's range: longer than any wait, not malformed
    ({"retry-after": "inf"}, True),  # no length at all: the backoff, as openai-python reads it
    ({"retry-after": "300", "x-should-retry": "true"}, False),
])
def test_which_retry_after_is_too_long_to_wait(headers: dict[str, str], retried: bool) -> None:
    import anthropic
    import httpx2

    from lamar.models import attempts

    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    failed = anthropic.RateLimitError("slow down", response=httpx2.Response(429, headers=headers, request=request),
                                      body=None)
    client = AnthropicModel("claude-test", api_key="sk-ant-test").client
    wait = attempts._retry_wait(failed, anthropic, client, 0)
    assert (wait is not None) is retried
    assert wait is None or wait <= attempts.LONGEST_RETRY_AFTER


def test_an_ollama_request_times_out_at_the_calls_deadline(serve) -> None:  # type: ignore[no-untyped-def]
    # generate() takes no timeout, and the client's (300 s by default) outlived the call: a slow
    # answer arrived long after sleep had given up, on a connection held all that while.
    pytest.importorskip("ollama", reason="the ollama extra is not installed")
    from lamar.models.attempts import deadline
    from lamar.models.ollama import OllamaModel

    answer = {"model": "llama-test", "response": "[]", "done": True, "done_reason": "stop"}
    server = serve(lambda n: (200, {}, answer, 1.5))
    model = OllamaModel("llama-test", host=server.url)
    started = time.monotonic()
    with deadline(started + 0.3), pytest.raises(ModelError, match="timed out"):
        model.complete("hello", max_tokens=16)
    assert time.monotonic() - started < 1.2
    # Outside a bounded call the client's own timeout holds, and the hook is added once per client.
    assert OllamaModel("llama-test", client=model.client).complete("hello", max_tokens=16) == "[]"
    assert model.client._client.event_hooks["request"].count(model.client._client.event_hooks["request"][0]) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_an_answer_trickling_in_is_not_read_past_the_deadline(serve, provider: str) -> None:  # type: ignore[no-untyped-def]
    # A read timeout bounds each read, not the whole body: a server sending a few bytes at a time
    # kept a call that sleep gave up on reading to the end, its connection open all that while.
    answer = ({"model": "llama-test", "response": "[]", "done": True, "done_reason": "stop"}
              if provider == "ollama" else ANSWER)
    server = serve(lambda n: (200, {}, answer, 0.0), trickle=0.1)
    if provider == "ollama":
        pytest.importorskip("ollama", reason="the ollama extra is not installed")
        from lamar.models.ollama import OllamaModel

        model: Any = OllamaModel("llama-test", host=server.url)
    else:
        model = model_at(provider, server.url)
    started = time.monotonic()
    with pytest.raises(ModelError, match="did not answer within 1 s|deadline passed"):
        call_model(model, "hello", max_tokens=16, timeout=1.0)
    abandoned_calls_end(within=1.5)  # the whole body takes 5 s and more
    assert not [t for t in threading.enumerate() if t.name == "lamar-model-call"]
    assert time.monotonic() - started < 3.0


def test_a_retry_after_past_any_clock_is_not_said_as_a_moment() -> None:
    from lamar.models.protocol import status_failure

    assert "inf" not in str(status_failure("OpenAI", "m", 429, "slow down", wait=float("inf")))
    assert "run sleep again after that" in str(status_failure("OpenAI", "m", 503, "", wait=1e300))


_INTERRUPTED = """
import os, signal, sys, threading, time
sys.path[:0] = {paths!r}
from lamar import Lamar, Trace
from lamar.models.anthropic import AnthropicModel

arrived = []
first = threading.Event()
import http.server

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        arrived.append(time.monotonic())
        first.set()
        body = b'{{"type": "error", "error": {{"type": "overloaded_error", "message": "Overloaded"}}}}'
        self.send_response(529)
        self.send_header("content-type", "application/json")
        self.send_header("retry-after", "0.3")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
model = AnthropicModel("claude-test", api_key="sk-ant-test", base_url=f"http://127.0.0.1:{{server.server_address[1]}}",
                       max_retries=50)
threading.Thread(target=lambda: first.wait() and os.kill(os.getpid(), signal.SIGINT), daemon=True).start()
traces = [Trace(f"t{{i}}", {{"project": "p"}}, input="fix the build", outcome="reverted") for i in range(3)]
try:
    Lamar(":memory:").sleep(traces=traces, model=model, model_timeout=60)
except KeyboardInterrupt:
    interrupted = time.monotonic()
time.sleep(1.5)  # five retry waits: what an abandoned call would send meanwhile
print(len(arrived), sum(1 for at in arrived if at > interrupted))
"""


def test_an_interrupted_sleep_sends_no_more_requests() -> None:
    # A notebook's "interrupt the kernel" (SIGINT) ends sleep, and the process lives on: the call's
    # thread, still inside its deadline, went on retrying the overloaded server with the traces.
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = _INTERRUPTED.format(paths=[str(root), str(root / "integrations")])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    sent, after = map(int, done.stdout.split())
    assert sent >= 1
    assert after == 0


def test_a_failure_that_ends_a_call_past_its_deadline_is_told_as_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # On a busy machine the call's thread can end, failing on its cut timeout, before the waiting thread
    # wakes at the deadline: the message must name model_timeout, not the request's timeout=.
    from lamar.models import protocol

    class Late:
        def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
            time.sleep(0.2)
            raise TimeoutError("the model call's deadline passed while its answer was arriving")

    # The waiting thread woken only once the call's thread ended, as a loaded scheduler may wake it.
    monkeypatch.setattr(protocol, "wait_for", lambda worker, timeout, call: worker.join())
    with pytest.raises(ModelError, match=r"did not answer within 0\.1 s.*raise model_timeout"):
        call_model(Late(), "hello", max_tokens=16, timeout=0.1)


def test_a_failure_before_the_deadline_is_told_as_itself_however_late_the_wait_wakes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A key the provider refuses at once is the user's to fix: a waiting thread that a loaded scheduler wakes
    # past the deadline must not report it as a slow model.
    from lamar.models import protocol

    class Refused:
        def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
            raise ModelError("model 'm' refused the key: check ANTHROPIC_API_KEY")

    def woken_late(worker: threading.Thread, timeout: float | None, call: object) -> None:
        worker.join()
        time.sleep(0.2)

    monkeypatch.setattr(protocol, "wait_for", woken_late)
    with pytest.raises(ModelError, match="refused the key"):
        call_model(Refused(), "hello", max_tokens=16, timeout=0.1)
