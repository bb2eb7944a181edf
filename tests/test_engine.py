"""The public API as a user meets it: add, recall, report, evidence, stores, bad input."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from pathlib import Path

import pytest

import lamar
from lamar import (
    DuplicateReport,
    Experience,
    ExperienceStore,
    InvalidArgument,
    InvalidContext,
    InvalidExperience,
    InvalidReward,
    Lamar,
    LamarError,
    Scope,
    Signal,
    Status,
    StoreError,
    UnknownEpisode,
    UnknownExperience,
    Verdict,
)

PUBLIC = sorted([
    "ApplyResult", "CorruptStore", "DuplicateReport", "EventConflict", "Evidence", "Experience",
    "ExperienceStore", "InvalidContext", "InvalidExperience", "InvalidReward", "Lamar", "LamarError",
    "ModelError", "Policy", "Proposal", "Recall", "Scope", "Signal", "SleepReport", "StaleProposal",
    "Status", "StoreError", "UnknownEpisode", "UnknownExperience", "UnknownProposal", "Verdict",
])


def test_the_public_names_are_frozen_and_sorted() -> None:
    assert lamar.__all__ == sorted(lamar.__all__)
    assert set(PUBLIC) <= set(lamar.__all__)
    for name in lamar.__all__:
        assert getattr(lamar, name) is not None


def test_the_core_imports_only_the_standard_library() -> None:
    import ast
    import sys

    root = Path(lamar.__file__).parent
    allowed = set(sys.stdlib_module_names) | {"lamar"}
    for path in root.rglob("*.py"):
        if path.parent.name == "models" and path.name not in {"__init__.py", "base.py", "scripted.py"}:
            continue  # adapters import their SDK lazily, inside functions
        for node in ast.parse(path.read_text()).body:
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{path} imports {name} at module level"


def test_design_example_runs_as_written(tmp_path: Path) -> None:
    store = ExperienceStore(str(tmp_path / "x" / "experience.json"))
    lam = Lamar(store, k=3, seed=None)
    exp_id = lam.add(Experience(
        precondition="the Xcode build fails after a dependency bump",
        action="clear DerivedData before rebuilding",
        rationale="stale module maps survive a clean build",
        scope=Scope(project="trace", language="swift"),
    ))
    rec = lam.recall({"project": "trace", "language": "swift", "task": "build_fails"})
    assert isinstance(rec.episode_id, str) and rec.episode_id
    assert all(e.id for e in rec.experiences)
    if rec.experiences:
        assert "When the Xcode build fails after a dependency bump, clear DerivedData" in rec.as_prompt()
    else:
        assert rec.as_prompt() == "" and rec.held_out == (exp_id,)
    lam.report(rec.episode_id, Signal.REVERTED)
    ev = lam.evidence(exp_id)
    assert ev.verdict in (Verdict.HELPS, Verdict.HARMS, Verdict.UNKNOWN) and ev.verdict == "unknown"
    assert ev.lower <= ev.lift <= ev.upper
    report = lam.sleep(traces=None, model=None)
    lam.apply(report)
    assert lam.get(exp_id).id == exp_id
    assert [e.id for e in lam.experiences()] == [exp_id]
    assert lam.experiences(status="retired") == []
    stats = lam.stats()
    assert (stats["experiences"], stats["episodes"], stats["reports"]) == (1, 1, 1)
    # a header line, then one event a line
    assert json.loads(Path(store.location).read_text().splitlines()[0])["format"] == "lamar"


@pytest.mark.parametrize("suffix", [".json", ".db", ".sqlite", ".sqlite3"])
def test_the_backend_follows_the_path_and_folders_are_created(tmp_path: Path, suffix: str, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = ExperienceStore(f"~/deep/er/store{suffix}")
    assert Path(store.location) == tmp_path / "deep" / "er" / f"store{suffix}"
    assert isinstance(store, ExperienceStore)
    Lamar(store).add(Experience("a", "b"))
    assert Path(store.location).exists()


def test_an_unknown_store_form_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="backend"):
        ExperienceStore(str(tmp_path / "store.txt"))


def test_listing_filters_by_status_verdict_and_scope() -> None:
    lam = Lamar(":memory:", seed=0)
    a = lam.add(Experience("p", "a", scope=Scope(project="x", lang="py")))
    b = lam.add(Experience("p", "b", scope=Scope(project="y"), status=Status.CANDIDATE))
    lam.retire(a, "obsolete")
    assert [e.id for e in lam.experiences(status="retired")] == [a]
    assert [e.id for e in lam.experiences(status=Status.CANDIDATE)] == [b]
    assert [e.id for e in lam.experiences(scope={"project": "x"})] == [a]
    assert {e.id for e in lam.experiences(verdict="unknown")} == {a, b}
    lam.revive(a)
    assert lam.get(a).status is Status.ACTIVE


@pytest.mark.parametrize(("status", "verdict"),
                         [("Retired", "UNKNOWN"), ("RETIRED", "Unknown"), (" retired ", "unknown")])
def test_the_status_and_verdict_filters_take_any_case_as_report_does(status: str, verdict: str) -> None:
    lam = Lamar(":memory:", seed=0)
    a = lam.add(Experience("p", "a"))
    lam.retire(a, "obsolete")
    assert [e.id for e in lam.experiences(status=status)] == [a]
    assert [e.id for e in lam.experiences(verdict=verdict)] == [a]
    with pytest.raises(InvalidArgument, match="status must be one of"):
        lam.experiences(status="proven")


def test_recall_can_be_restricted_to_candidates() -> None:
    lam = Lamar(":memory:", k=3, seed=1)
    ids = [lam.add(Experience("p", f"a{i}")) for i in range(5)]
    rec = lam.recall({}, candidates=[ids[1], ids[3], "not-a-lesson"])
    assert set(rec.eligible) == {ids[1], ids[3]}
    assert lam.recall({}, k=0).ids == []


def test_async_twins() -> None:
    lam = Lamar(":memory:", k=1, seed=2)
    lam.add(Experience("p", "a"))

    async def go() -> None:
        rec = await lam.arecall({"task": "x"})
        await lam.areport(rec.episode_id, 0.5)

    asyncio.run(go())
    assert lam.stats()["reports"] == 1


def test_a_float_reward_and_signal_names_are_accepted() -> None:
    lam = Lamar(":memory:", seed=3)
    for signal in (1.0, -1, 0, "Shipped", Signal.REASKED):
        lam.report(lam.recall({}).episode_id, signal)
    assert lam.stats()["reports"] == 5


@pytest.mark.parametrize("context", [None, "project=x", ["a"], {"a": 1}, {1: "a"}, {"": "a"}, {"a": None}])
def test_a_malformed_context_is_rejected(context: object) -> None:
    lam = Lamar(":memory:")
    with pytest.raises(InvalidContext) as info:
        lam.recall(context)  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError) and isinstance(info.value, LamarError)
    assert lam.stats()["episodes"] == 0


@pytest.mark.parametrize("fields", [{"precondition": "", "action": "a"}, {"precondition": "p", "action": "  "},
                                    {"precondition": 3, "action": "a"}, {"precondition": "p", "action": "a",
                                                                        "status": "wild"}])
def test_an_incomplete_experience_is_rejected(fields: dict) -> None:
    with pytest.raises(InvalidExperience) as info:
        Experience(**fields)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("reward", [1.5, -1.01, math.nan, math.inf, "great", None, True, [1]])
def test_a_bad_reward_is_rejected_and_nothing_is_stored(reward: object) -> None:
    lam = Lamar(":memory:")
    rec = lam.recall({})
    with pytest.raises(InvalidReward):
        lam.report(rec.episode_id, reward)  # type: ignore[arg-type]
    assert lam.stats()["reports"] == 0
    lam.report(rec.episode_id, Signal.ACCEPTED)  # the episode is still open


def test_unknown_and_repeated_episodes() -> None:
    lam = Lamar(":memory:", seed=4)
    lam.add(Experience("p", "a"))
    with pytest.raises(UnknownEpisode) as info:
        lam.report("ep_nope", Signal.SHIPPED)
    assert isinstance(info.value, KeyError) and "recall()" in str(info.value)
    rec = lam.recall({})
    lam.report(rec.episode_id, Signal.SHIPPED)
    with pytest.raises(DuplicateReport, match="replace=True"):
        lam.report(rec.episode_id, Signal.REVERTED)
    assert lam.episode(rec.episode_id).reward == 1.0
    lam.report(rec.episode_id, Signal.REVERTED, replace=True)
    assert lam.episode(rec.episode_id).reward == -1.0
    assert lam.stats()["reports"] == 1



@pytest.mark.parametrize("name", [":memory:", "lessons.json", "lessons.db"])
def test_a_lesson_id_reported_as_an_episode_is_named_as_such(tmp_path: Path, name: str) -> None:
    # A recall hands over an episode id and lesson ids: the engine says which kind was passed, with
    # the lesson known to it, not each caller from the words of its message.
    lam = Lamar(name if name == ":memory:" else str(tmp_path / name))
    lesson = lam.add(Experience("a lint error", "run the formatter first"))
    written = lam.stats()["events"]
    with pytest.raises(UnknownEpisode) as info:
        lam.report(lesson, Signal.SHIPPED)
    assert str(info.value).startswith(f"no episode '{lesson}' in store {lam.store.location} (that is a lesson id, "
                                      "not an episode id): report the episode_id that recall() returned"), info.value
    with pytest.raises(UnknownEpisode) as info:
        lam.report("exp_0000000000000000", Signal.SHIPPED)  # the form of a lesson id, but no lesson
    assert "that is a lesson id" not in str(info.value)
    assert lam.stats()["events"] == written
    lam.close()


@pytest.mark.parametrize("name", [":memory:", "lessons.json", "lessons.db"])
def test_an_episode_id_given_as_a_lesson_id_is_named_as_such_by_the_store(tmp_path: Path, name: str) -> None:
    # The other way round: judged from the store, not from the id's form, and carried as fields
    # (held_as, note, advice) for a caller that words its own advice.
    lam = Lamar(name if name == ":memory:" else str(tmp_path / name))
    lam.add(Experience("a lint error", "run the formatter first"))
    episode = lam.recall({}).episode_id
    for call in (lam.get, lam.evidence, lambda i: lam.edit(i, action="rerun it"), lambda i: lam.retire(i, "x")):
        with pytest.raises(UnknownExperience) as info:
            call(episode)
        assert str(info.value) == (f"no experience '{episode}' in store {lam.store.location} (that is an episode id, "
                                   "not a lesson id); Lamar.experiences() lists the lesson ids")
        assert info.value.held_as == "episode" and str(info.value).endswith(info.value.note + info.value.advice)
    with pytest.raises(UnknownExperience) as info:
        lam.get("ep_0000000000000000")  # the form of an episode id, but no episode
    assert "that is" not in str(info.value) and info.value.held_as is None and info.value.note == ""
    with pytest.raises(UnknownEpisode) as report:
        lam.report(lam.add(Experience("a flaky test", "rerun it once")), Signal.SHIPPED)
    assert report.value.held_as == "lesson" and report.value.advice.startswith(": report the episode_id")
    lam.close()


def test_unknown_experience_ids() -> None:
    lam = Lamar(":memory:")
    for call in (lam.get, lam.evidence, lam.retire):
        # The message says where the ids are, as the CLI's and the MCP server's do.
        with pytest.raises(UnknownExperience, match=r"^no experience 'exp_missing' in store :memory:; "
                                                      r"Lamar\.experiences\(\) lists the lesson ids$"):
            call("exp_missing")


def test_two_engines_on_one_store_see_each_other(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    one, two = Lamar(path, seed=1), Lamar(path, seed=2)
    exp_id = one.add(Experience("p", "a"))
    rec = two.recall({})
    assert exp_id in rec.eligible
    one.report(rec.episode_id, Signal.SHIPPED)
    with pytest.raises(DuplicateReport):
        two.report(rec.episode_id, Signal.SHIPPED)
    assert one.stats()["reports"] == two.stats()["reports"] == 1


def test_sleep_retires_proven_harm_and_merges_duplicates() -> None:
    lam = Lamar(":memory:", k=2, seed=5, explore=6.0, holdout=0.5)
    bad = lam.add(Experience("working on t", "force push", scope=Scope(task="t")))
    dup_a = lam.add(Experience("deploys fail", "Check the VPN!", scope=Scope(task="d")))
    dup_b = lam.add(Experience("Deploys  fail.", "check the vpn", scope=Scope(task="d")))
    from tests.worlds import play

    play(lam, "t", {bad: -0.3}, 800, seed=6)
    play(lam, "d", {}, 50, seed=7)
    assert lam.evidence(bad).verdict is Verdict.HARMS
    report = lam.sleep()
    kinds = {p.kind: p for p in report}
    assert set(kinds) == {"retire", "merge"}
    assert kinds["retire"].experience_ids == (bad,)
    assert lam.get(bad).status is Status.ACTIVE  # sleep changed nothing
    before = lam.evidence(dup_a).eligible + lam.evidence(dup_b).eligible
    result = lam.apply(report)
    assert sorted(result.applied) == sorted(p.id for p in report)
    assert lam.get(bad).status is Status.RETIRED
    # the duplicate with more randomized evidence is kept (sleep's keeper rule)
    keep = kinds["merge"].payload["into"]
    (gone,) = {dup_a, dup_b} - {keep}
    assert lam.get(gone).status is Status.RETIRED and lam.get(gone).provenance["merged_into"] == keep
    assert lam.evidence(keep).eligible == before
    again = lam.apply(report)
    assert again.applied == [] and len(again.skipped) == 2
    assert lam.sleep().proposals == []


def test_retire_and_revive_in_the_state_asked_write_nothing() -> None:
    lam = Lamar(":memory:")
    exp_id = lam.add(Experience("the build fails", "clear the cache"))
    lam.retire(exp_id, "first")
    events = len(lam.store.read(0))
    lam.retire(exp_id, "again")
    assert len(lam.store.read(0)) == events  # no second audit entry
    lam.revive(exp_id, "back")
    lam.revive(exp_id, "back again")
    assert len(lam.store.read(0)) == events + 1
    assert lam.get(exp_id).status is Status.ACTIVE


def test_the_typed_tuning_keywords_are_policys_fields_with_their_types() -> None:
    # Lamar(**tuning) is typed by Tuning; a knob added to or cut from Policy must change both.
    import dataclasses
    import typing

    from lamar.policy.config import Policy, Tuning

    assert list(Tuning.__annotations__) == [f.name for f in dataclasses.fields(Policy)]
    assert typing.get_type_hints(Tuning) == typing.get_type_hints(Policy)
    assert Tuning.__total__ is False


def test_the_typed_sleep_options_are_run_sleeps_keywords_with_their_types() -> None:
    import inspect

    from lamar.sleep import run_sleep
    from lamar.sleep.options import SLEEP_OPTIONS, SleepOptions

    keywords = {p.name: p.annotation for p in inspect.signature(run_sleep).parameters.values()
                if p.kind is p.KEYWORD_ONLY and p.name not in ("traces", "model")}
    assert list(SleepOptions.__annotations__) == list(keywords) == list(SLEEP_OPTIONS)
    # Both modules postpone annotations, so each reads as the text written in its source.
    assert keywords == {name: ref.__forward_arg__ for name, ref in SleepOptions.__annotations__.items()}


def test_unknown_tuning_and_sleep_keywords_are_clear_errors_at_run_time() -> None:
    from lamar import InvalidArgument

    with pytest.raises(InvalidArgument, match="unknown tuning keyword 'explor'"):
        Lamar(":memory:", explor=0.5)  # type: ignore[call-arg]
    with pytest.raises(InvalidArgument, match="explore must be a finite number"):
        Lamar(":memory:", explore="wide")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="unknown sleep option 'keep'"):
        Lamar(":memory:").sleep(keep=3)  # type: ignore[call-arg]


@pytest.mark.parametrize("suffix", [":memory:", ".json", ".db"])
def test_changing_a_recall_leaves_the_logged_episode_as_it_was(tmp_path: Path, suffix: str) -> None:
    # A caller that reuses `rec.context` for the next turn must not rewrite what the episode
    # logged: its propensities are what the evidence weighs the outcome by.
    lam = Lamar(suffix if suffix == ":memory:" else tmp_path / f"s{suffix}", seed=1, holdout=0.0)
    eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    rec = lam.recall({"project": "x"})
    rec.context["project"] = "y"  # type: ignore[index]
    rec.propensities[eid] = 0.5  # type: ignore[index]
    logged = lam.episode(rec.episode_id)
    assert logged.context == {"project": "x"}
    assert logged.p == {eid: 1.0}


@pytest.mark.parametrize("suffix", [":memory:", ".json", ".db"])
def test_changing_a_returned_episode_leaves_the_logged_one_as_it_was(tmp_path: Path, suffix: str) -> None:
    lam = Lamar(suffix if suffix == ":memory:" else tmp_path / f"s{suffix}", seed=1, holdout=0.0)
    eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    rec = lam.recall({"project": "x"})
    shown = lam.episode(rec.episode_id)
    shown.context["project"] = "y"
    shown.injected.clear()
    shown.p[eid] = 0.5
    lam.report(rec.episode_id, Signal.SHIPPED)
    logged = lam.episode(rec.episode_id)
    assert (logged.context, logged.injected, logged.p, logged.reward) == ({"project": "x"}, [eid], {eid: 1.0}, 1.0)
    assert lam.evidence(eid).injected == 1


def test_a_reward_of_any_real_number_type_is_a_reward() -> None:
    from fractions import Fraction

    import numpy as np  # the test extra brings it (llama-index-core needs it): never skipped
    lam = Lamar(":memory:", seed=0)
    lam.add(Experience("the build fails", "clear the cache"))
    for reward, stored in [(Fraction(1, 2), 0.5), (np.float32(0.5), 0.5), (np.int64(-1), -1.0)]:
        rec = lam.recall({})
        lam.report(rec.episode_id, reward)
        logged = lam.episode(rec.episode_id).reward
        assert logged == stored and type(logged) is float
    rec = lam.recall({})
    for bad in (np.float32("nan"), np.float64(1.5), np.int64(2), np.bool_(True)):
        with pytest.raises(InvalidReward):
            lam.report(rec.episode_id, bad)
    assert lam.stats()["reports"] == 3


@pytest.mark.parametrize("replace", ["false", "no", 0, 1, None])
def test_replace_is_true_or_false_and_a_refusal_keeps_the_first_outcome(replace: object) -> None:
    from lamar import InvalidArgument

    lam = Lamar(":memory:", seed=0)
    lam.add(Experience("the build fails", "clear the cache"))
    rec = lam.recall({})
    lam.report(rec.episode_id, Signal.SHIPPED)
    with pytest.raises(InvalidArgument, match="replace is True or False"):
        lam.report(rec.episode_id, Signal.REVERTED, replace=replace)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="replace is True or False"):
        asyncio.run(lam.areport(rec.episode_id, Signal.REVERTED, replace=replace))  # type: ignore[arg-type]
    assert lam.episode(rec.episode_id).signal == "shipped"


def test_lessons_of_several_recalls_go_in_a_set() -> None:
    lam = Lamar(":memory:", k=2, seed=0, holdout=0.0)
    ids = {lam.add(Experience("the build fails", f"fix {i}")) for i in range(2)}
    seen = {e for _ in range(3) for e in lam.recall({}).experiences}
    assert {e.id for e in seen} == ids and len(seen) == 2
    assert set(lam.experiences()) == seen


def test_passing_the_recall_or_the_lesson_for_its_id_names_the_id_to_pass() -> None:
    lam = Lamar(":memory:", seed=0, holdout=0.0)
    eid = lam.add(Experience("the build fails", "clear the cache"))
    rec = lam.recall({})
    lesson = rec.experiences[0]
    for call in (lambda: lam.report(rec, Signal.SHIPPED), lambda: lam.episode(rec),  # type: ignore[arg-type]
                 lambda: asyncio.run(lam.areport(rec, Signal.SHIPPED))):  # type: ignore[arg-type]
        with pytest.raises(UnknownEpisode, match=f"pass the Recall's episode_id \\('{rec.episode_id}'\\)"):
            call()
    for call in (lambda: lam.evidence(lesson), lambda: lam.get(lesson), lambda: lam.retire(lesson),  # type: ignore[arg-type]
                 lambda: lam.history(lesson)):  # type: ignore[arg-type]
        with pytest.raises(UnknownExperience, match=f"pass the lesson's id \\('{eid}'\\)"):
            call()
    (pending,) = lam.pending()  # what a script settling its pending episodes holds
    for call in (lambda: lam.report(pending, Signal.SHIPPED), lambda: lam.episode(pending)):  # type: ignore[arg-type]
        with pytest.raises(UnknownEpisode, match=f"pass the PendingEpisode's episode_id \\('{rec.episode_id}'\\)"):
            call()
    lam.report(rec.episode_id, Signal.SHIPPED)
    assert lam.get(eid).status is Status.ACTIVE and lam.stats()["reports"] == 1


@pytest.mark.parametrize("suffix", [":memory:", ".json", ".db"])
def test_changing_an_added_lessons_provenance_leaves_the_stored_one(tmp_path: Path, suffix: str) -> None:
    location = suffix if suffix == ":memory:" else str(tmp_path / f"s{suffix}")
    lam = Lamar(location, seed=0)
    lesson = Experience("the build fails", "clear the cache", provenance={"source": "mined", "traces": ["t1", "t2"]})
    eid = lam.add(lesson)
    lesson.provenance["traces"].append("t3")
    assert lam.get(eid).provenance["traces"] == ["t1", "t2"]
    assert lam.experiences()[0].provenance["traces"] == ["t1", "t2"]
    if suffix != ":memory:":
        assert Lamar(location).get(eid).provenance["traces"] == ["t1", "t2"]


@pytest.mark.parametrize("suffix", [":memory:", ".json", ".db"])
def test_changing_a_returned_lessons_provenance_leaves_the_engines(tmp_path: Path, suffix: str) -> None:
    location = suffix if suffix == ":memory:" else str(tmp_path / f"s{suffix}")
    lam = Lamar(location, seed=0, holdout=0.0)
    eid = lam.add(Experience("the build fails", "clear the cache", provenance={"source": "mined", "traces": ["t1"]}))
    returned = [lam.get(eid), lam.experiences()[0], lam.recall({}).experiences[0],
                lam.preview({}).lessons[0].experience, lam.edit(eid, rationale="stale caches")]
    for n, lesson in enumerate(returned):
        lesson.provenance["traces"].append(f"x{n}")  # type: ignore[attr-defined]
        lesson.provenance["source"] = "forged"  # type: ignore[index]
    assert lam.get(eid).provenance["traces"] == ["t1"] and lam.get(eid).provenance["source"] == "mined"
    assert lam.get(eid).rationale == "stale caches" and lam.get(eid).version == 2


def test_a_decimal_reward_is_a_reward_and_a_nan_or_infinite_one_is_refused() -> None:
    from decimal import Decimal

    lam = Lamar(":memory:", seed=0)
    lam.add(Experience("the build fails", "clear the cache"))
    rec = lam.recall({})
    for bad in (Decimal("NaN"), Decimal("sNaN"), Decimal("Infinity"), Decimal("-1.5"), Decimal("1e400")):
        with pytest.raises(InvalidReward, match="is outside \\[-1, 1\\]; scale it or use a Signal"):
            lam.report(rec.episode_id, bad)
    lam.report(rec.episode_id, Decimal("0.25"))
    logged = lam.episode(rec.episode_id).reward
    assert logged == 0.25 and type(logged) is float


@pytest.mark.parametrize("suffix", [":memory:", ".json", ".db"])
def test_adding_the_same_lesson_again_returns_the_stored_one(tmp_path: Path, suffix: str) -> None:
    location = suffix if suffix == ":memory:" else str(tmp_path / f"s{suffix}")
    lesson = Experience("the build fails", "clear the cache", rationale="stale", scope=Scope(project="x"))
    lam = Lamar(location, seed=0)
    eid = lam.add(lesson)
    lam.retire(eid)
    if suffix != ":memory:":
        lam.close()
    again = lam if suffix == ":memory:" else Lamar(location, seed=0)  # a script that adds at every start
    assert again.add(lesson) == eid and len(again.experiences()) == 1
    assert again.get(eid).status is Status.RETIRED  # kept as the store holds it: revive it to use it
    others = [Experience("the build fails", "clear the cache", rationale="stale", scope=Scope(project="y")),
              Experience("the build fails", "clear the cache", scope=Scope(project="x")),
              Experience("the build fails", "Clear the cache", rationale="stale", scope=Scope(project="x"))]
    assert eid not in {again.add(other) for other in others} and len(again.experiences()) == 4
    with pytest.raises(InvalidExperience, match="already stored"):
        again.add(dataclasses.replace(lesson, id=eid))


@pytest.mark.parametrize("context", [{"task": "build", "message": "x" * 4_000}, {"k" * 4_001: ""},
                                     {f"k{n}": "" for n in range(10_000)}])
def test_a_context_longer_than_a_scope_may_be_is_refused_before_anything_is_logged(context: dict) -> None:
    lam = Lamar(":memory:")
    lam.add(Experience("the build fails", "read the first error", scope=Scope(task="build")))
    for call in (lam.recall, lam.preview):
        with pytest.raises(InvalidContext, match="at most 4,000"):
            call(context)
    assert lam.stats()["episodes"] == 0


def test_a_context_of_4000_characters_is_recalled_and_logged_whole() -> None:
    lam = Lamar(":memory:")
    context = {"task": "build", "message": "x" * (lamar.experience.MAX_CONTEXT_CHARS - 16)}
    assert lam.recall(context).context == context


def test_a_log_written_before_the_context_limit_still_opens_and_copies() -> None:
    from lamar.store.base import Event
    from lamar.store.memory import MemoryStore
    from lamar.store.transfer import transfer

    store = MemoryStore()
    Lamar(store).recall({"task": "build"})
    (logged,) = [e for e in store.read(0) if e.kind == "episode"]
    # An episode as a version without the limit wrote it.
    data = {**logged.data, "id": "ep_old", "context": {"task": "build", "message": "x" * 100_000}}
    store.append([Event("episode", data, key="episode:ep_old")])
    assert len(Lamar(store).episode("ep_old").context["message"]) == 100_000
    assert transfer(store, MemoryStore()).copied == 2


def test_fit_context_leaves_out_the_longest_entries_while_recall_refuses_and_a_wrong_type_still_raises() -> None:
    from lamar.experience import fit_context

    context = {"task": "build", "log": "x" * 3_000, "diff": "y" * 2_000, "error": "z" * 900}
    said: list[str] = []
    fitted = fit_context(context, where="the test's context", warn=said.append)
    assert fitted == {"task": "build", "diff": "y" * 2_000, "error": "z" * 900}
    (message,) = said
    assert message.startswith("the test's context is over a context's 4,000 characters: left out 'log' "
                              "(3,000 characters) and kept the rest")
    with pytest.warns(UserWarning, match=r"left out 'log' \(3,000 characters\)"):
        assert fit_context(context, where="the test's context") == fitted
    assert fit_context({"task": "build"}, where="unused", warn=said.append) == {"task": "build"} and len(said) == 1
    for wrong in ({"task": 3}, ["task"], {"": "build"}):
        with pytest.raises(InvalidContext):
            fit_context(wrong, where="the test's context")
    with pytest.raises(InvalidContext, match="at most 4,000"):
        Lamar(":memory:").recall(context)
