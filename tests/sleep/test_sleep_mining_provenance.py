"""A lesson mined from hundreds of traces: its provenance cites the first of them and counts them all, within the
limit apply holds a provenance to, so the candidate review shows is the lesson apply writes."""

from __future__ import annotations

import json
from collections.abc import Callable

from lamar import Lamar, Trace
from lamar.models import ScriptedModel
from lamar.safety.boundary import MAX_PROVENANCE_CHARS
from lamar.sleep.mining import CITED_TRACES

DEMO = {"project": "demo"}


def uuid_like(i: int) -> str:
    return f"{i:08x}-7e1c-4a2b-9f3d-{i * 7919:012x}"


def mined_from(count: int, name: Callable[[int], str] = uuid_like) -> tuple[Lamar, object]:
    """A store, and its sleep over `count` traces of as many sessions, each batch's reply citing all it was shown."""
    traces = [Trace(name(i), DEMO, time=float(i), input="the build broke", tool_errors=["module map is stale"],
                    outcome="reverted") for i in range(count)]

    def reply(prompt: str) -> str:
        body = prompt.split("<traces>\n", 1)[1].rsplit("</traces>", 1)[0]
        return json.dumps([{"precondition": "swift build fails with a stale module map",
                            "action": "delete DerivedData before rebuilding", "rationale": "the map survives",
                            "scope": DEMO, "trace_ids": [json.loads(line)["id"] for line in body.splitlines()]}])

    lam = Lamar(":memory:", seed=1)
    return lam, lam.sleep(traces=traces, model=ScriptedModel(reply))


def test_a_lesson_of_600_traces_cites_the_first_and_counts_all_and_applies_as_reviewed() -> None:
    lam, report = mined_from(600)
    (candidate,) = report.of_kind("candidate")  # type: ignore[attr-defined]
    exp = candidate.payload["experience"]
    provenance = exp["provenance"]
    assert provenance["traces"] == sorted(uuid_like(i) for i in range(600))[:CITED_TRACES]
    assert provenance["trace_count"] == 600 and candidate.evidence[exp["id"]]["traces"] == 600
    assert len(json.dumps(provenance, ensure_ascii=False)) <= MAX_PROVENANCE_CHARS
    assert f"more sessions (the lesson's provenance cites the first {CITED_TRACES} by id and counts all 600)." \
        in candidate.reason
    result = lam.apply(report)  # type: ignore[arg-type]
    assert result.applied == [candidate.id] and result.skipped == []
    assert lam.get(exp["id"]).provenance == provenance


def test_long_trace_ids_are_cited_within_the_limit() -> None:
    lam, report = mined_from(12, lambda i: f"{i:03d}-" + "run" * 500)
    (candidate,) = report.of_kind("candidate")  # type: ignore[attr-defined]
    provenance = candidate.payload["experience"]["provenance"]
    assert 0 < len(provenance["traces"]) < 12 and provenance["trace_count"] == 12
    assert len(json.dumps(provenance, ensure_ascii=False)) <= MAX_PROVENANCE_CHARS
    assert lam.apply(report).applied == [candidate.id]  # type: ignore[arg-type]


def test_a_few_traces_are_all_cited_with_no_count() -> None:
    _, report = mined_from(CITED_TRACES)
    (candidate,) = report.of_kind("candidate")  # type: ignore[attr-defined]
    provenance = candidate.payload["experience"]["provenance"]
    assert len(provenance["traces"]) == CITED_TRACES and "trace_count" not in provenance
