"""A model that fails mid-sleep (through the real anthropic SDK, HTTP mocked at the transport)
costs the mined lessons only: the proposals that need no model are still made."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable

import httpx2
import pytest

from lamar import Experience, Lamar, Scope, SleepReport, Trace, Verdict

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from lamar.models.anthropic import AnthropicModel

PROJECT = {"project": "trace"}
TRACES = [Trace(f"t{i}", PROJECT, time=1000.0 + i, input="fix the build", attempted=["swift build"],
                tool_errors=["error: module map is stale"], output="", outcome="reverted") for i in range(3)]
LESSON = [{"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
           "rationale": "the stale map survives a resolve", "scope": PROJECT, "trace_ids": ["t0", "t2"]}]


def harmful_store() -> tuple[Lamar, str]:
    """A proven-harmful lesson (retire), two duplicates (merge) and a contradiction."""
    lam = Lamar(":memory:", k=3, seed=7, holdout=0.5, explore=4.0)
    bad = lam.add(Experience("the build fails", "delete the repository and clone it again", scope=Scope(PROJECT)))
    lam.add(Experience("the build fails after a bump", "reinstall Xcode", scope=Scope(PROJECT)))
    docs = Scope(project="docs")
    lam.add(Experience("tests are flaky", "rerun the failing test once", scope=docs))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=docs))
    lam.add(Experience("formatting Swift code", "indent with tabs", scope=docs))
    lam.add(Experience("formatting swift code", "indent with four spaces", scope=docs))
    rng = random.Random(3)
    for n in range(1, 3001):
        rec = lam.recall(PROJECT)
        reward = 0.1 + rng.gauss(0.0, 0.3) - (0.6 if bad in rec.ids else 0.0)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
        if n % 20 == 0 and lam.evidence(bad).verdict is Verdict.HARMS:
            break
    assert lam.evidence(bad).verdict is Verdict.HARMS
    return lam, bad


@pytest.fixture(scope="module")
def world() -> tuple[Lamar, str]:
    return harmful_store()


def anthropic(handler: Callable[[httpx2.Request], httpx2.Response]) -> AnthropicModel:
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0)


def answer(text: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3}})


def server_error(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "overloaded"}})


def timeout(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out", request=request)


def not_the_api(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, text="<html>log in to the proxy</html>")


@pytest.mark.parametrize(("handler", "said"), [(server_error, "HTTP 500"), (timeout, "anthropic"),
                                               (not_the_api, "not a reply of the")])
def test_a_failing_model_keeps_the_proposals_that_need_no_model(world: tuple[Lamar, str], handler, said,  # type: ignore[no-untyped-def]
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    lam, bad = world
    without = lam.sleep()
    with caplog.at_level(logging.WARNING, logger="lamar.sleep.mining"):
        report = lam.sleep(traces=TRACES, model=anthropic(handler))
    # A caller reading only the proposals hears of it too.
    assert [r.getMessage() for r in caplog.records if "mining failed" in r.getMessage() and said in r.getMessage()]
    assert sorted(p.kind for p in report) == sorted(p.kind for p in without)
    assert {"retire", "merge", "contradiction"} <= {p.kind for p in report}
    assert bad in report.of_kind("retire")[0].experience_ids
    assert said in report.mining_error
    assert report.summary["mining"]["candidates"] == 0 and report.summary["mining"]["model_calls"] == 1
    again = SleepReport.from_dict(json.loads(json.dumps(report.to_dict())))  # the saved report says so too
    assert again.mining_error == report.mining_error


def test_a_working_model_reports_no_mining_error(world: tuple[Lamar, str]) -> None:
    lam, _ = world
    report = lam.sleep(traces=TRACES, model=anthropic(lambda request: answer(json.dumps(LESSON))))
    assert report.mining_error == "" and len(report.of_kind("candidate")) == 1

