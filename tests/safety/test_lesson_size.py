"""Issue 38 item 8: one 480 KB lesson switched the Claude Code hook off for its scope (scrubbing it took
longer than the hook's budget on every prompt). A lesson's size is capped where it comes in, with a
`LamarError` that says what to do, and the prompt shows one stored before the cap cut to it."""

from __future__ import annotations

import json

import pytest

from lamar import Experience, InvalidExperience, Lamar, LamarError, Scope
from lamar.models import ScriptedModel
from lamar.recall import Recall
from lamar.sleep.traces import Trace

HUGE = "clear the cache and rebuild " * 17_800  # about 480 KB


def test_add_refuses_a_480_kb_lesson_and_stores_nothing() -> None:
    lam = Lamar(":memory:", seed=1)
    with pytest.raises(InvalidExperience, match="characters") as refused:
        lam.add(Experience("the build fails", HUGE))
    assert "6000" in str(refused.value).replace(" ", "").replace(",", "")
    assert lam.store.read(0) == []


def test_add_refuses_a_scope_too_long_to_screen() -> None:
    lam = Lamar(":memory:", seed=1)
    with pytest.raises(InvalidExperience, match="scope"):
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(note="x" * 5_000)))
    assert lam.store.read(0) == []


def test_a_lesson_just_under_the_cap_is_kept_whole() -> None:
    lam = Lamar(":memory:", seed=1)
    action = ("clear the cache and rebuild " * 300)[:5_900].strip()
    assert lam.get(lam.add(Experience("the build fails", action))).action == action


def test_a_mined_lesson_over_the_cap_is_dropped_with_its_reason() -> None:
    traces = [Trace(f"t{i}", {}, time=1000.0 + i, input="build", attempted=["build"], tool_errors=["stale"],
                    outcome="reverted") for i in (1, 2)]
    reply = json.dumps([{"precondition": "the build fails", "action": HUGE[:20_000], "rationale": "",
                         "scope": {}, "trace_ids": ["t1", "t2"]}])
    report = Lamar(":memory:", seed=1).sleep(traces=traces, model=ScriptedModel([reply]))
    assert report.of_kind("candidate") == [] and "characters" in report.dropped[0].reason


def test_a_huge_lesson_stored_before_the_cap_is_cut_to_it_in_the_prompt() -> None:
    huge = Experience("the build fails", HUGE, id="exp_huge")
    plain = Experience("the tests fail", "run them alone", id="exp_plain")
    prompt = Recall("ep", [huge, plain], {}).as_prompt()
    first, second = prompt.split("\n")[2:4]
    assert first.startswith("1. > When the build fails, clear the cache") and first.endswith(" ...")
    assert len(first) <= 6_000 + 10 and second == "2. > When the tests fail, run them alone."


def test_import_refuses_a_file_holding_a_huge_lesson(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from lamar.store import Event, open_store
    from lamar.store.transfer import transfer

    source = open_store(tmp_path / "source.json")
    source.append([Event("experience", {"id": "exp_huge", "precondition": "p", "action": HUGE},
                         key="experience:exp_huge")])
    target = open_store(tmp_path / "target.db")
    with pytest.raises(LamarError, match="characters"):
        transfer(source, target)
    assert target.read(0) == []
    source.close()
    target.close()
