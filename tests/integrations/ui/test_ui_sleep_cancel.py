"""`lamar ui`'s Run sleep, against the real server, stops when the server stops or the client that asked for it
drops its connection: the model call it awaits ends, and no report is saved once the model answers."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("selenium")  # test_ui_trial's server helpers live beside its browser tests

from tests.fake_ollama import FakeOllama
from tests.integrations.ui.test_ui_trial import _start, _stop


@pytest.fixture
def slow_model(monkeypatch: pytest.MonkeyPatch, ollama_host: str) -> Iterator[threading.Event]:
    """A model that answers only once the event is set (or after a minute); the `lamar ui` started next uses it."""
    monkeypatch.setenv("OLLAMA_HOST", ollama_host)
    answer = threading.Event()
    FakeOllama.reply, FakeOllama.prompts, FakeOllama.during = "[]", [], lambda: answer.wait(60)
    try:
        yield answer
    finally:
        answer.set()
        FakeOllama.during = None


def _store(tmp_path: Path) -> tuple[Path, Path]:
    store, traces = tmp_path / "lessons.db", tmp_path / "traces.jsonl"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    traces.write_text("".join(json.dumps({"id": f"t{i}", "context": {"project": "trace"}, "input": "bump",
                                          "outcome": "reverted"}) + "\n" for i in range(2)))
    return store, traces


def _until(check, what: str, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"waited {timeout:g} s for {what}"
        time.sleep(0.05)


def _lines(stream) -> list[str]:  # type: ignore[no-untyped-def]
    """The lines `stream` gives from now on, gathered by a thread as they come."""
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(stream.readline, "")), daemon=True).start()
    return lines


def test_stopping_the_server_stops_its_sleep(tmp_path: Path, slow_model: threading.Event) -> None:
    store, traces = _store(tmp_path)
    report = tmp_path / "report.json"
    proc, url = _start(store, "--traces", str(traces), "--model", "ollama:fake-model", "--report", str(report))
    base, token = url.split("/?token=")
    request = urllib.request.Request(base + "/sleep/run", data=urllib.parse.urlencode({"token": token}).encode(),
                                     headers={"Cookie": f"lamar_ui_token_{urllib.parse.urlsplit(base).port}={token}"})
    asked = threading.Thread(target=lambda: _answered(request), daemon=True)
    asked.start()
    try:
        _until(lambda: FakeOllama.prompts, "the model call")
        proc.terminate()  # as `kill` or a closed terminal does, while the model is still thinking
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError("lamar ui waited for a sleep nobody can stop before it stopped") from None
        assert not report.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _answered(request: urllib.request.Request) -> None:
    try:
        urllib.request.urlopen(request, timeout=60).read()
    except OSError:  # the server stopped under it
        print("the request ended with the server", file=sys.stderr)


def test_a_client_that_drops_its_connection_stops_its_sleep(tmp_path: Path, slow_model: threading.Event) -> None:
    import socket

    store, traces = _store(tmp_path)
    report = tmp_path / "report.json"
    proc, url = _start(store, "--traces", str(traces), "--model", "ollama:fake-model", "--report", str(report))
    said = _lines(proc.stderr)
    base, token = url.split("/?token=")
    port = urllib.parse.urlsplit(base).port
    body = urllib.parse.urlencode({"token": token}).encode()
    try:
        with socket.create_connection(("127.0.0.1", port)) as client:  # a script's request, given up
            client.sendall(f"POST /sleep/run HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: lamar_ui_token_{port}="
                           f"{token}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: "
                           f"{len(body)}\r\n\r\n".encode() + body)
            _until(lambda: FakeOllama.prompts, "the model call")
        _until(lambda: any("Run sleep stopped: the connection that asked for it closed" in line for line in said),
               "the server to say the sleep stopped")
        slow_model.set()
        time.sleep(1)
        assert not report.exists() and len(FakeOllama.prompts) == 1
    finally:
        _stop(proc)
