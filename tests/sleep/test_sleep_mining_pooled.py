"""Mining pools near-copies: the same lesson proposed in other words by two batches (or twice in one reply) is
one candidate citing every trace cited for it, as sleep's merge would make of the two."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lamar import Lamar, Trace

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from tests.sleep.test_sleep_mining_request import recording, shown_ids

DEMO = {"project": "demo"}
TRACES = [Trace(f"r{i:02d}", DEMO, time=float(i), input="the build broke " + "x" * 600,
                tool_errors=["error: module map is stale"], outcome="reverted") for i in range(24)]
FIRST = {"precondition": "swift build fails with a stale module map", "action": "delete DerivedData before rebuilding"}
AGAIN = {"precondition": "the swift build fails with a stale module map",
         "action": "delete the DerivedData folder before rebuilding"}


def mined(wordings: list[dict[str, str] | None], cited: int) -> tuple[Any, list[list[str]]]:
    """Sleep over TRACES in batches, batch n's reply proposing `wordings[n]` (None: nothing), citing the
    first `cited` traces it was shown; the report and the ids each prompt showed."""
    prompts: list[str] = []

    def reply(prompt: str) -> str:
        wording = wordings[len(prompts) - 1] if len(prompts) <= len(wordings) else None
        if wording is None:
            return "[]"
        return json.dumps([{**wording, "rationale": "a stale map survives a clean build", "scope": DEMO,
                            "trace_ids": shown_ids(prompt)[:cited]}])

    report = Lamar(":memory:", seed=1).sleep(traces=TRACES, model=recording(reply, prompts), max_prompt_tokens=2000)
    assert len(prompts) >= 3
    return report, [shown_ids(p) for p in prompts]


def test_near_copies_from_two_batches_are_one_candidate_citing_both_batches() -> None:
    report, shown = mined([FIRST, None, AGAIN], cited=2)
    (candidate,) = report.of_kind("candidate")
    exp = candidate.payload["experience"]
    assert (exp["precondition"], exp["action"]) == (FIRST["precondition"], FIRST["action"])  # the first wording
    assert exp["provenance"]["traces"] == sorted(shown[0][:2] + shown[2][:2])
    assert candidate.evidence[exp["id"]]["traces"] == 4
    assert report.dropped == []


def test_near_copies_each_cited_once_reach_the_support_together() -> None:
    # Alone, each batch's lesson cites one session, too few; together they cite two.
    report, shown = mined([FIRST, None, AGAIN], cited=1)
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["provenance"]["traces"] == sorted([shown[0][0], shown[2][0]])
    assert report.dropped == []


def test_two_lessons_from_two_batches_stay_two() -> None:
    other = {**AGAIN, "action": "never delete DerivedData before rebuilding"}
    report, _ = mined([FIRST, None, other], cited=2)
    assert len(report.of_kind("candidate")) == 2
