"""The app's Run sleep says what mining could not read of a reply it mined, as `lamar sleep` does."""

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
from tests.fake_ollama import FakeOllama

REPLY = json.dumps([{"precondition": "a module map is missing after a bump", "action": "reset the package caches",
                     "scope": {"project": "trace"}, "trace_ids": ["t0", "t1"]},
                    {"precondition": "the build broke", "action": "rebuild"}])


def test_run_sleep_says_what_it_could_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               ollama_host: str) -> None:
    monkeypatch.setenv("OLLAMA_HOST", ollama_host)
    FakeOllama.reply, FakeOllama.prompts = REPLY, []  # one lesson it can read and one it cannot
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


def test_run_sleep_records_its_run_once_as_the_last_sleep_lamar_stats_shows(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar import atomic
    from lamar.cli.last_sleep import last_sleep

    written: list[str] = []
    replace = atomic.replace_file

    def counting(path, data, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path).endswith(".last-sleep.json"):
            written.append(json.loads(data)["report"])
        return replace(path, data, *args, **kwargs)

    monkeypatch.setattr(atomic, "replace_file", counting)
    store = tmp_path / "lessons.json"
    with Lamar(str(store)) as lam:
        ui = UI(lam, report_path=tmp_path / "report.json")
        with TestClient(create_app(ui), base_url="http://127.0.0.1") as client:
            client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
            client.post("/sleep/run", data={"token": ui.token})
    assert written == [str(tmp_path / "report.json")]  # once, naming its report
    last = last_sleep(str(store))
    assert last is not None and last["report"] == str(tmp_path / "report.json") and last["proposals"] == 0
