"""Sleep mining through a real SDK (anthropic, HTTP mocked at the transport): the request body
holds no secret, wherever in a trace it was, and an answer with prose around its list is mined."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest

from lamar import Experience, InvalidArgument, Lamar, Scope, Trace
from lamar.safety.secrets import scrub

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from lamar.models.anthropic import AnthropicModel

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLQ"


def recording(reply: Callable[[str], str], prompts: list[str]) -> AnthropicModel:
    """A model whose every request body is kept, answering `reply(prompt)`."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        prompts.append(prompt)
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": reply(prompt)}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3}})

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0)


def shown_ids(prompt: str) -> list[str]:
    body = prompt.split("<traces>\n", 1)[1].rsplit("</traces>", 1)[0]
    return [json.loads(line)["id"] for line in body.splitlines()]


def test_a_secret_in_a_trace_id_or_a_context_key_never_reaches_the_model() -> None:
    traces = [Trace(f"run-{TOKEN}-{i}", {"project": "demo", f"key_{AWS_KEY}": "on"}, time=float(i),
                    input="the build broke", tool_errors=["module map is stale"], outcome="reverted")
              for i in range(3)] + [Trace("plain-1", {"project": "demo"}, input="lint", outcome="shipped")]
    prompts: list[str] = []

    def cite_all(prompt: str) -> str:
        return json.dumps([{"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
                 "rationale": "the map survives a resolve", "scope": {"project": "demo"},
                 "trace_ids": [i for i in shown_ids(prompt) if i != "plain-1"]}])

    lam = Lamar(":memory:")
    report = lam.sleep(traces=traces, model=recording(cite_all, prompts))
    (prompt,) = prompts
    assert TOKEN not in prompt and AWS_KEY not in prompt
    assert scrub(prompt)[1] == []
    # Each trace is still told apart, and the ordinary id is shown as it is.
    ids = shown_ids(prompt)
    assert len(set(ids)) == 4 and "plain-1" in ids
    # The model cites what it was shown; the candidate cites the traces themselves, by their ids scrubbed.
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["provenance"]["traces"] == [
        f"run-[REDACTED:github-token]-{i}" for i in range(3)]
    assert report.summary["mining"]["secrets_scrubbed"] >= 6


def test_a_context_value_that_is_a_secret_by_its_key_never_reaches_the_model() -> None:
    # "hunter2x" is no secret by its look; under "password" it is, as scrub_trace has it.
    traces = [Trace(f"t{i}", {"project": "demo", "password": "hunter2x", "DB_TOKEN": "opensesame9"}, time=float(i),
                    input="the build broke", outcome="reverted") for i in range(2)]
    prompts: list[str] = []
    Lamar(":memory:").sleep(traces=traces, model=recording(lambda prompt: "[]", prompts))
    (prompt,) = prompts
    assert "hunter2x" not in prompt and "opensesame9" not in prompt
    assert '"password": "[REDACTED:password]"' in prompt and '"project": "demo"' in prompt


SECRET_ID = f"run-{TOKEN}-{AWS_KEY}"
SHOWN_ID = "run-[REDACTED:github-token]-[REDACTED:aws-access-key]"
ORDINARY = ["3f2a7c1e-9b4d-4e8a-b1c2-0d9e8f7a6b5c", "run-0193"]


def mined_reply(prompt: str) -> str:
    """Lessons citing the traces as the prompt shows them (found by their input): one candidate
    from the traces with a secret in their ids, one from the ordinary ids, and two refused."""
    shown = {json.loads(line)["input"]: json.loads(line)["id"]
             for line in prompt.split("<traces>\n", 1)[1].rsplit("</traces>", 1)[0].splitlines()}

    def lesson(action: str, inputs: list[str], project: str = "demo") -> dict[str, object]:
        return {"precondition": "a module map is stale", "action": action, "rationale": "it survives a resolve",
                "scope": {"project": project}, "trace_ids": [shown[i] for i in inputs]}

    return json.dumps([lesson("delete DerivedData, then rebuild", ["secret 0", "secret 1", "secret 2"]),
                       lesson("reset the package caches first", ORDINARY),
                       lesson("pin the toolchain version", ["secret 0"]),
                       lesson("clean the module cache folder", ["secret 0", "secret web"])])


@pytest.mark.parametrize("name", ["lamar.json", "lamar.db"])
def test_a_secret_in_a_trace_id_reaches_neither_the_report_nor_review_nor_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str) -> None:
    import lamar.models
    from lamar.cli import main

    def row(trace_id: str, text: str, project: str = "demo", **more: object) -> dict[str, object]:
        return {"id": trace_id, "context": {"project": project}, "input": text,
                "tool_errors": ["module map is stale"], "outcome": "reverted", **more}

    rows = [row(f"{SECRET_ID}-{i}", f"secret {i}") for i in range(3)] + [row(i, i) for i in ORDINARY]
    rows += [row(f"{SECRET_ID}-web", "secret web", project=f"web-{TOKEN}"),
             row(f"{SECRET_ID}-huge", "huge", attempted=["step " + "y" * 400] * 40,
                 tool_errors=["error " + "z" * 700] * 40)]  # fits no prompt, even clipped
    traces, report, store = tmp_path / "traces.jsonl", tmp_path / "report.json", tmp_path / "store" / name
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
    store.parent.mkdir()
    with Lamar(str(store)) as lam:  # the store a person keeps, with one lesson of its own
        lam.add(Experience("a test fails only in CI", "compare the CI locale", scope=Scope(project="web")))
    prompts: list[str] = []
    monkeypatch.setattr(lamar.models, "from_spec", lambda spec: recording(mined_reply, prompts))
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n" * 5))

    assert main(["sleep", "--store", str(store), "--traces", str(traces), "--model", "anthropic:claude-test",
                 "--out", str(report)]) == 0
    assert main(["review", str(report), "--store", str(store)]) == 0
    assert main(["apply", str(report), "--store", str(store)]) == 0
    said = capsys.readouterr()
    assert len(prompts) == 1 and TOKEN not in prompts[0]

    saved = json.loads(report.read_text())
    files = [f.read_bytes().decode("utf-8", "replace") for f in store.parent.iterdir()]
    for where in [report.read_text(), said.out, said.err, *files]:
        assert TOKEN not in where and AWS_KEY not in where
    # Every trace is still named: a secret in its id scrubbed, an ordinary id as it is.
    mined = {tuple(p["payload"]["experience"]["provenance"]["traces"]) for p in saved["proposals"]
             if p["kind"] == "candidate"}
    assert mined == {tuple(f"{SHOWN_ID}-{i}" for i in range(3)), tuple(sorted(ORDINARY))}
    reasons = [d["reason"] for d in saved["dropped"]]
    assert any(f"({SHOWN_ID}-0); a lesson needs at least 2" in r for r in reasons)
    assert any(f"does not fit trace {SHOWN_ID}-web" in r for r in reasons)
    assert {"trace": f"{SHOWN_ID}-huge"} in [d["item"] for d in saved["dropped"]]
    assert f"Traces: {SHOWN_ID}-0, {SHOWN_ID}-1, {SHOWN_ID}-2." in said.out
    stored = {tuple(e.provenance["traces"]) for e in Lamar(str(store)).experiences(status="candidate")}
    assert stored == mined


LESSON = {"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
          "rationale": "the map survives a resolve", "scope": {"project": "demo"}, "trace_ids": ["t0", "t1"]}
LISTED = json.dumps([LESSON], indent=2)


@pytest.mark.parametrize("reply", [
    f"Here are the lessons I found:\n\n```json\n{LISTED}\n```\n\nLet me know if you need more.",
    f"Here are the lessons I found:\n{LISTED}\nEach cites two traces.",
    f"```\n{LISTED}\n```\nNothing else recurred.",
])
def test_a_list_with_a_line_of_prose_around_it_is_mined(reply: str) -> None:
    traces = [Trace(f"t{i}", {"project": "demo"}, time=float(i), input="the build broke",
                    tool_errors=["module map is stale"], outcome="reverted") for i in range(2)]
    report = Lamar(":memory:").sleep(traces=traces, model=recording(lambda prompt: reply, []))
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["action"] == LESSON["action"]
    assert report.dropped == [] and report.mining_error == ""


def test_traces_that_need_more_calls_than_max_model_calls_make_none() -> None:
    traces = [Trace(f"t{i:03d}", {"project": "demo"}, time=float(i), input="the build broke " + "x" * 1_400,
                    tool_errors=["module map is stale"], outcome="reverted") for i in range(60)]
    prompts: list[str] = []
    model = recording(lambda prompt: "[]", prompts)
    lam = Lamar(":memory:")
    lam.add(Experience("tests are flaky", "rerun the failing test once", scope=Scope(project="demo")))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=Scope(project="demo")))
    before = len(lam.store.read())
    report = lam.sleep(traces=traces, model=model, max_model_calls=3)
    assert prompts == []  # refused before the first call, so nothing was paid for
    assert "takes 4 model calls" in report.mining_error and "max_model_calls=3" in report.mining_error
    assert [p.kind for p in report] == ["merge"]  # what needs no model is proposed all the same
    assert len(lam.store.read()) == before
    lam.sleep(traces=traces, model=model, max_model_calls=4)
    assert len(prompts) == 4


@pytest.mark.parametrize("value", [0, -1, 2.5, "10", True])
def test_a_bad_max_model_calls_is_refused(value: object) -> None:
    with pytest.raises(InvalidArgument, match="max_model_calls must be a whole number >= 1 or None"):
        Lamar(":memory:").sleep(max_model_calls=value)  # type: ignore[arg-type]
