"""Traces showing the same failure -> a mined candidate -> applied -> tried, then kept or dropped by outcomes."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal, Status, Trace, Verdict
from lamar.models import ScriptedModel
from lamar.sleep.traces import TraceWriter

SWIFT = {"project": "trace", "language": "swift"}
BUILD = {**SWIFT, "task": "build_fails"}


def write_sessions(path: Path, lam: Lamar) -> None:
    """A week of sessions: the stale-module-map failure keeps coming back; other work goes fine."""
    writer = TraceWriter(path)
    for day in range(5):
        rec = lam.recall(BUILD)
        lam.report(rec.episode_id, Signal.REVERTED)
        writer.write(Trace(f"build-{day}", SWIFT, time=1_700_000_000.0 + day * 86_400,
                           input="the build broke after bumping swift-collections",
                           attempted=["swift build", "swift package resolve", "swift build"],
                           tool_errors=["error: module map file '.../Collections.modulemap' is stale"],
                           output="I could not fix the build.", outcome="reverted", episode_id=rec.episode_id))
        writer.write(Trace(f"docs-{day}", {**SWIFT, "task": "docs"}, time=1_700_000_100.0 + day * 86_400,
                           input="document the parser", attempted=["edit Parser.swift"], outcome="shipped"))


def noticing_model() -> ScriptedModel:
    """Plays an LLM that spots the recurring tool error in the traces it is shown."""

    def read(prompt: str) -> str:
        block = prompt.split("<traces>\n", 1)[1].split("\n</traces>", 1)[0]
        traces = [json.loads(line) for line in block.splitlines()]
        stale = [t["id"] for t in traces if any(re.search(r"module map .* is stale", e) for e in t["tool_errors"])]
        if len(stale) < 2:
            return "[]"
        return json.dumps([{
            "precondition": "swift build fails because a module map is stale after a dependency bump",
            "action": "delete DerivedData and the .build folder, then rebuild",
            "rationale": "a stale module map survives swift package resolve",
            "scope": {"project": "trace", "language": "swift"},
            "trace_ids": stale,
        }])

    return ScriptedModel(read, model="noticing-fake")


def play(lam: Lamar, lesson: str, effect: float, episodes: int, rng: random.Random) -> list[bool]:
    """The gym: reward 0 +- noise, shifted by `effect` when the mined lesson is injected."""
    injected = []
    for _ in range(episodes):
        rec = lam.recall(BUILD)
        used = lesson in rec.ids
        injected.append(used)
        reward = rng.gauss(0.0, 0.35) + (effect if used else 0.0)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
    return injected


def mine_and_apply(tmp_path: Path, seed: int) -> tuple[Lamar, str]:
    lam = Lamar(tmp_path / "experience.db", k=2, seed=seed, holdout=0.5)
    lam.add(Experience("a test fails", "read the whole log first", scope=Scope(project="trace")))
    write_sessions(tmp_path / "traces.jsonl", lam)
    report = lam.sleep(traces=tmp_path / "traces.jsonl", model=noticing_model())
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["provenance"]["traces"] == [f"build-{d}" for d in range(5)]
    assert report.dropped == []
    lesson = candidate.experience_ids[0]
    assert lam.apply(report).applied == [p.id for p in report]
    assert lam.get(lesson).status is Status.CANDIDATE
    return lam, lesson


@pytest.mark.parametrize("seed", [1, 2])
def test_a_mined_lesson_that_helps_is_proven_and_kept(tmp_path: Path, seed: int) -> None:
    lam, lesson = mine_and_apply(tmp_path, seed)
    rng = random.Random(seed)
    first = play(lam, lesson, +0.4, 40, rng)
    assert sum(first) >= 5  # the cold arm is tried
    played = 40
    while lam.evidence(lesson).verdict is Verdict.UNKNOWN and played < 1500:
        play(lam, lesson, +0.4, 20, rng)
        played += 20
    evidence = lam.evidence(lesson)
    assert evidence.verdict is Verdict.HELPS, f"not proven after {played} episodes: {evidence}"
    assert evidence.lower > 0 and 0.2 < evidence.lift < 0.6

    (promote,) = lam.sleep().of_kind("promote")
    assert promote.experience_ids == (lesson,)
    lam.apply(lam.sleep(), only=[promote.id])
    assert lam.get(lesson).status is Status.ACTIVE
    # wanted every time: injected unless this engine's evidence coin (holdout=0.5) holds it out
    assert sum(play(lam, lesson, +0.4, 100, rng)) >= 35


@pytest.mark.parametrize("seed", [1, 2])
def test_a_mined_lesson_that_hurts_is_not_injected_in_the_end(tmp_path: Path, seed: int) -> None:
    lam, lesson = mine_and_apply(tmp_path, seed)
    rng = random.Random(seed)
    first = play(lam, lesson, -0.5, 40, rng)
    assert sum(first) >= 3  # it is tried like any cold arm
    play(lam, lesson, -0.5, 600, rng)
    last = play(lam, lesson, -0.5, 100, rng)
    assert sum(last) <= 8, f"still injected {sum(last)} times in the last 100 episodes"
    evidence = lam.evidence(lesson)
    assert evidence.verdict is not Verdict.HELPS and evidence.lift < 0
    report = lam.sleep()
    assert report.of_kind("promote") == []
    for retire in report.of_kind("retire"):  # if its harm is proven, sleep retires it for good
        assert retire.experience_ids == (lesson,)
        lam.apply(report, only=[retire.id])
        assert lesson not in lam.recall(BUILD).eligible


def test_every_sleep_option_is_in_the_docs_table() -> None:
    """docs/sleep.md lists the options of `lam.sleep(...)`; a model's timeout message sends the
    reader there to raise `model_timeout`, so none may be missing."""
    from lamar.sleep.options import SLEEP_OPTIONS

    page = (Path(__file__).parents[2] / "docs" / "sleep.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(\w+)` \|", page, flags=re.MULTILINE))
    assert [name for name in SLEEP_OPTIONS if name not in rows] == []
