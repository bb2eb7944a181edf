"""`lamar ui --max-model-calls N`: Run sleep's mining makes no more model calls than the cap, as
`lamar sleep --max-model-calls` makes none when the traces need more."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from lamar import Lamar

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient

from lamar_ui.app import UI, create_app


def test_run_sleep_mines_within_the_cap_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing answers at this address: a call made would fail with "could not reach".
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    traces = tmp_path / "traces.jsonl"
    rows = [{"id": f"t{i}", "context": {"project": "trace"}, "input": f"task {i} " + "word " * 2_000}
            for i in range(30)]
    traces.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with Lamar(seed=1) as lam:
        ui = UI(lam, report_path=tmp_path / "report.json", model="ollama:fake-model", traces=str(traces),
                max_model_calls=1)
        with TestClient(create_app(ui), base_url="http://127.0.0.1") as client:
            client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
            page = html.unescape(client.post("/sleep/run", data={"token": ui.token}).text)
    message = re.search(r'<p class="message">([^<]*)</p>', page)
    assert message, page[-600:]
    assert "mining failed, no lesson was mined" in message.group(1)
    assert "more than max_model_calls=1; no call was made" in message.group(1)
    assert "could not reach" not in message.group(1)


def test_lamar_ui_hands_its_cap_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lamar_ui
    from lamar.cli import main

    served: dict[str, object] = {}
    monkeypatch.setattr(lamar_ui, "serve", lambda lam, **options: served.update(options))
    traces = tmp_path / "traces.jsonl"
    traces.write_text("")
    Lamar(str(tmp_path / "lessons.db")).close()
    code = main(["ui", "--store", str(tmp_path / "lessons.db"), "--no-browser", "--traces", str(traces),
                 "--model", "ollama:fake-model", "--max-model-calls", "2"])
    assert code == 0 and served["max_model_calls"] == 2
