"""`lamar ui --traces` takes several files, as `lamar sleep --traces` does: Run sleep mines the traces
of each, through the real Ollama SDK against a local HTTP server that plays the model."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar

pytest.importorskip("starlette")
pytest.importorskip("httpx")
pytest.importorskip("ollama")

from starlette.testclient import TestClient

from lamar_ui.app import UI, create_app
from tests.fake_ollama import FakeOllama


def _pending(tmp_path: Path, night: str, *ids: str) -> str:
    path = tmp_path / f"traces-pending-{night}.jsonl"
    path.write_text("".join(json.dumps({"id": i, "context": {"project": "trace"}, "input": f"task {i}"}) + "\n"
                            for i in ids))
    return str(path)


def test_run_sleep_mines_every_traces_file_lamar_ui_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str],
                                                              ollama_host: str) -> None:
    import lamar_ui
    from lamar.cli import main

    monkeypatch.setenv("OLLAMA_HOST", ollama_host)
    FakeOllama.reply, FakeOllama.prompts = "[]", []
    messages: list[str] = []

    def serve(lam: Lamar, **options: Any) -> None:  # the app `lamar ui` would serve, clicked once
        ui = UI(lam, report_path=tmp_path / "report.json", model=options["model"], traces=options["traces"],
                max_model_calls=options["max_model_calls"])
        with TestClient(create_app(ui), base_url="http://127.0.0.1") as client:
            client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
            page = html.unescape(client.post("/sleep/run", data={"token": ui.token}).text)
        found = re.search(r'<p class="message">([^<]*)</p>', page)
        messages.append(found.group(1) if found else page[-600:])

    monkeypatch.setattr(lamar_ui, "serve", serve)
    store = str(tmp_path / "lessons.db")
    Lamar(store).close()
    # Two nights' pending files, as the nightly script leaves them when a night's mining failed.
    files = [_pending(tmp_path, "2026-01-01", "a0", "a1"), _pending(tmp_path, "2026-01-02", "b0")]
    code = main(["ui", "--store", store, "--no-browser", "--traces", *files, "--model", "ollama:fake-model"])
    assert code == 0 and len(messages) == 1 and messages[0].startswith("sleep made"), messages
    prompts = "".join(FakeOllama.prompts)
    assert all(f'"id": "{i}"' in prompts for i in ("a0", "a1", "b0")), prompts[-600:]
    # Each file is checked at launch, with `lamar sleep`'s message, not when Run sleep is clicked.
    missing = str(tmp_path / "traces-pending-2026-01-03.jsonl")
    capsys.readouterr()
    code = main(["ui", "--store", store, "--no-browser", "--traces", files[0], missing, "--model", "ollama:fake-model"])
    assert code == 1 and len(messages) == 1
    assert capsys.readouterr().err == f"lamar: error: no trace file {missing}: pass a JSON Lines file of traces\n"
