"""Context beyond the scope: selection by slice, per-slice verdicts, and narrowing a lesson's scope."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Verdict
from lamar.policy import LessonState, Policy
from lamar.policy.features import MAX_SLICES
from lamar.state.saved import STATE_VERSION
from lamar.store import Event, open_store

SWIFT = {"project": "app", "task": "build", "language": "swift"}
PYTHON = {"project": "app", "task": "build", "language": "python"}


def _reward(rng: random.Random, success: float) -> float:
    return 1.0 if rng.random() < success else -0.6


def test_a_lesson_that_helps_in_swift_and_hurts_in_python_is_injected_where_it_helps() -> None:
    rng = random.Random(7)
    lam = Lamar(":memory:", k=2, seed=7)
    ids = [lam.add(Experience("the build fails", f"try remedy {i}", scope=Scope(task="build"))) for i in range(6)]
    split = ids[2]
    effects = {ids[0]: (0.2, 0.2), ids[1]: (-0.2, -0.2), split: (0.2, -0.2)}  # (swift, python)
    injected = {"swift": [0, 0], "python": [0, 0]}
    for t in range(2000):
        language = "swift" if rng.random() < 0.5 else "python"
        rec = lam.recall(SWIFT if language == "swift" else PYTHON)
        chosen = set(rec.ids)
        side = 0 if language == "swift" else 1
        success = 0.4 + sum(effects.get(i, (0.0, 0.0))[side] for i in chosen)
        lam.report(rec.episode_id, _reward(rng, success))
        if t >= 1000:
            injected[language][0] += 1
            injected[language][1] += split in chosen
    swift = injected["swift"][1] / injected["swift"][0]
    python = injected["python"][1] / injected["python"][0]
    assert swift > 0.6
    assert swift >= 3 * python + 0.05
    slices = lam.evidence(split).slices
    # The selection's slice is in the evidence too. Its coins are few (a verdict at this size is out
    # of reach), so its lift is noise; what must hold is that it is never judged to harm there.
    swift_slice = slices["language=swift"]
    assert swift_slice.randomized > 0 and swift_slice.upper > 0.0
    assert "project=app" not in slices  # one value only: that slice is the lesson itself


def _folded_split_lesson(seed: int, n: int, p: float = 0.5) -> tuple[LessonState, Policy]:
    """A task-wide lesson whose inclusion is a fair coin, +0.3 success in Swift and -0.3 in Python."""
    rng = random.Random(seed)
    state = LessonState(Experience("the build fails", "clear the module cache", scope=Scope(task="build")))
    policy = Policy()
    for _ in range(n):
        context = SWIFT if rng.random() < 0.5 else PYTHON
        injected = rng.random() < p
        effect = (0.3 if context is SWIFT else -0.3) if injected else 0.0
        state.observe(_reward(rng, 0.45 + effect), injected, p, 0.8, policy, 1, context)
    return state, policy


def test_each_slice_gets_its_own_verdict_while_the_lesson_as_a_whole_nets_out() -> None:
    state, policy = _folded_split_lesson(seed=3, n=1600)
    ev = state.evidence(policy, 1)
    assert ev.verdict is Verdict.UNKNOWN
    assert abs(ev.lift) < 0.15
    swift, python = ev.slices["language=swift"], ev.slices["language=python"]
    assert swift.verdict is Verdict.HELPS and swift.lower > 0.0 and swift.lift == pytest.approx(0.3 * 1.6, abs=0.15)
    assert python.verdict is Verdict.HARMS and python.upper < 0.0
    assert swift.randomized + python.randomized == ev.randomized == 1600
    # the slice family is split two ways: each slice's bound is wider than an unsplit one would be
    data = json.loads(json.dumps(ev.to_dict()))
    assert data["slices"]["language=swift"]["verdict"] == "helps"


def test_slices_of_an_inert_lesson_stay_unknown_across_seeds() -> None:
    wrong = 0
    for seed in range(30):
        rng = random.Random(1000 + seed)
        state = LessonState(Experience("x", "y", scope=Scope(task="build")))
        policy = Policy()
        for _ in range(400):
            context = SWIFT if rng.random() < 0.5 else PYTHON
            state.observe(_reward(rng, 0.5), rng.random() < 0.5, 0.5, 0.8, policy, 1, context)
        wrong += sum(s.verdict is not Verdict.UNKNOWN for s in state.evidence(policy, 1).slices.values())
    assert wrong == 0


def test_state_with_slices_round_trips_exactly_and_old_state_still_reads() -> None:
    state, policy = _folded_split_lesson(seed=5, n=300)
    data = json.loads(json.dumps(state.to_dict()))
    again = LessonState.from_dict(data)
    assert again.to_dict() == state.to_dict()
    assert again.evidence(policy, 1) == state.evidence(policy, 1)
    del data["slices"]  # a lesson saved before STATE_VERSION 2
    old = LessonState.from_dict(data)
    assert old.slices.slices == {} and old.evidence(policy, 1).lift == state.evidence(policy, 1).lift
    assert STATE_VERSION >= 2  # 3 since core-verdicts changed the ledger and detector


def test_a_copy_is_equal_and_independent() -> None:
    """The fold mode folds copies of the rows it parsed for reads: a copy equals its original in
    everything saved, and folding into it leaves the original exactly as it was."""
    state, policy = _folded_split_lesson(seed=5, n=300)
    before = json.dumps(state.to_dict())
    copy = state.copy()
    assert copy.to_dict() == state.to_dict()
    assert copy.evidence(policy, 1) == state.evidence(policy, 1)
    rng = random.Random(1)
    for _ in range(50):
        copy.observe(_reward(rng, 0.5), rng.random() < 0.5, 0.5, 0.8, policy, 1, SWIFT | {"os": "mac"})
    assert json.dumps(state.to_dict()) == before
    assert copy.to_dict() != state.to_dict()


def test_a_lessons_evidence_does_not_depend_on_the_order_of_its_contexts_keys() -> None:
    """SQLite and PostgreSQL store a context with its keys in an order of their own, the JSON store
    as the caller gave them: each slice's share of alpha (fixed by the order slices are first seen),
    and the bound a narrowed lesson inherits from its slice, must not change with a copy."""
    def folded(order: Callable[[dict[str, str]], dict[str, str]]) -> tuple[LessonState, Policy]:
        rng = random.Random(11)
        state = LessonState(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
        policy = Policy()
        for _ in range(1200):
            context = SWIFT if rng.random() < 0.5 else PYTHON
            injected = rng.random() < 0.5
            effect = (0.3 if context is SWIFT else -0.3) if injected else 0.0
            state.observe(_reward(rng, 0.45 + effect), injected, 0.5, 0.8, policy, 1, order(context))
        return state, policy

    given, policy = folded(dict)
    backwards, _ = folded(lambda context: dict(reversed(context.items())))
    assert given.evidence(policy, 1).slices["language=swift"].verdict is Verdict.HELPS
    assert backwards.evidence(policy, 1) == given.evidence(policy, 1)
    for state in (given, backwards):
        state.narrow("language", "swift")
    assert backwards.evidence(policy, 1) == given.evidence(policy, 1)


def test_a_free_key_with_endless_values_is_capped() -> None:
    state = LessonState(Experience("x", "y", scope=Scope(task="build")))
    policy = Policy()
    for i in range(200):
        state.observe(0.5, i % 2 == 0, 0.5, 0.8, policy, 1, {"task": "build", "session": f"s{i}"})
    assert len(state.slices.slices) == MAX_SLICES


def _logged_store(path: Path, seed: int, n: int, swift: float = 0.5, effects: tuple[float, float] = (0.3, -0.3),
                  ) -> tuple[str, str]:
    """A store whose episodes randomized one task-wide lesson with p = 0.5 in both languages
    (as an engine with exposure coins logs them), with the outcomes a split world gives:
    `effects` in Swift and in Python, Swift in a share `swift` of episodes."""
    rng = random.Random(seed)
    lesson = Experience("the build fails", "clear the module cache", scope=Scope(task="build")).with_identity()
    other = Experience("the build fails", "read the first error", scope=Scope(task="build")).with_identity()
    events = [Event("experience", e.to_dict(), key=f"experience:{e.id}") for e in (lesson, other)]
    for j in range(n):
        context = SWIFT if rng.random() < swift else PYTHON
        injected = rng.random() < 0.5
        effect = (effects[0] if context is SWIFT else effects[1]) if injected else 0.0
        ep = f"ep{j}"
        events.append(Event("episode", {"id": ep, "context": context, "eligible": [lesson.id, other.id],
                                        "injected": [lesson.id] if injected else [],
                                        "held_out": [] if injected else [lesson.id],
                                        "p": {lesson.id: 0.5, other.id: 0.0}}, key=f"episode:{ep}"))
        events.append(Event("outcome", {"episode": ep, "reward": _reward(rng, 0.45 + effect), "signal": None,
                                        "replace": False}, key=f"outcome:{ep}"))
    store = open_store(path)
    store.append(events)
    store.close()
    return lesson.id, other.id


def test_sleep_proposes_narrowing_a_split_lesson_and_applying_it_narrows_the_scope(tmp_path: Path) -> None:
    path = tmp_path / "split.db"
    lesson, _ = _logged_store(path, seed=11, n=1600)
    lam = Lamar(path, k=2, seed=1)
    report = lam.sleep()
    narrow = report.of_kind("narrow")
    assert [p.experience_ids for p in narrow] == [(lesson,)]
    proposal = narrow[0]
    assert proposal.payload["scope"] == {"task": "build", "language": "swift"}
    assert "language=python: harms" in proposal.reason and "language=swift: helps" in proposal.reason
    assert set(proposal.evidence[lesson]["slices"]) == {"language=python", "language=swift"}
    assert not report.of_kind("retire")  # not harmful overall, and narrowing is the remedy anyway
    slice_before = lam.evidence(lesson).slices["language=swift"]
    result = lam.apply(report, only=[proposal.id])
    assert result.applied == [proposal.id]
    exp = lam.get(lesson)
    assert dict(exp.scope) == {"task": "build", "language": "swift"}
    assert exp.provenance["narrowed_from"] == {"task": "build"}
    after = lam.evidence(lesson)
    assert after.lift == pytest.approx(slice_before.lift) and after.randomized == slice_before.randomized
    assert after.verdict is Verdict.HELPS
    assert lesson not in lam.recall(PYTHON).eligible
    assert lesson in lam.recall(SWIFT).eligible
    events = [e for e in lam.store.read(0) if e.kind == "scope"]
    assert [(e.data["id"], e.data["key"], e.data["value"]) for e in events] == [(lesson, "language", "swift")]
    # a fresh process folds the same log to the same lesson, and a second apply does nothing
    lam.close()
    again = Lamar(path, k=2, seed=1)
    assert dict(again.get(lesson).scope) == {"task": "build", "language": "swift"}
    assert again.evidence(lesson).lift == pytest.approx(after.lift)
    assert again.apply(report).skipped[0][1].startswith("already applied")
    assert not again.sleep().of_kind("narrow")
    again.checkpoint()
    assert again.evidence(lesson) == Lamar(path, k=2, seed=1).evidence(lesson)
    again.close()


def test_no_narrowing_without_a_proven_split(tmp_path: Path) -> None:
    path = tmp_path / "short.db"
    lesson, _ = _logged_store(path, seed=12, n=120)  # too little evidence to prove either side
    lam = Lamar(path, k=2, seed=1)
    assert not lam.sleep().of_kind("narrow")
    assert lam.get(lesson).scope == Scope(task="build")


def test_the_review_shows_a_narrow_proposal_with_its_slices_and_new_scope(tmp_path: Path) -> None:
    from lamar.cli.review import _describe

    path = tmp_path / "split.db"
    _logged_store(path, seed=11, n=1600)
    lam = Lamar(path, k=2, seed=1)
    (proposal,) = lam.sleep().of_kind("narrow")
    text = "\n".join(_describe(proposal, lam))
    exp_id = proposal.experience_ids[0]
    assert f"narrow the scope of lesson '{exp_id}': add language=swift (it stays eligible only there" in text
    assert "where language=swift: helps" in text and "where language=python: harms" in text
    lam.close()


def test_a_lesson_harmful_overall_but_helpful_in_one_slice_is_narrowed_not_retired(tmp_path: Path) -> None:
    path = tmp_path / "mostly_python.db"
    lesson, _ = _logged_store(path, seed=13, n=3000, swift=0.3, effects=(0.3, -0.35))
    lam = Lamar(path, k=2, seed=1)
    ev = lam.evidence(lesson)
    assert ev.verdict is Verdict.HARMS  # on the whole it hurts: most episodes are Python
    assert ev.slices["language=swift"].verdict is Verdict.HELPS
    report = lam.sleep()
    assert [p.experience_ids for p in report.of_kind("narrow")] == [(lesson,)]
    assert not [p for p in report.of_kind("retire") if lesson in p.experience_ids]
    lam.close()


def test_apply_refuses_a_hand_edited_narrow_proposal(tmp_path: Path) -> None:
    from lamar.sleep import Proposal, SleepReport

    path = tmp_path / "split.db"
    lesson, _ = _logged_store(path, seed=11, n=1600)
    lam = Lamar(path, k=2, seed=1)
    (proposal,) = lam.sleep().of_kind("narrow")
    data = proposal.to_dict()
    data["payload"] = {"key": "language"}  # the value was deleted by hand
    edited = Proposal.from_dict(data)
    result = lam.apply(SleepReport([edited], made_at=lam.stats()["events"]))
    assert result.applied == [] and "refused" in result.skipped[0][1]
    assert lam.get(lesson).scope == Scope(task="build")
    lam.close()
