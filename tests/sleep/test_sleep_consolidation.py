"""Sleep without a model: proposals from evidence and text alone, nothing changed until apply."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from lamar import Experience, Lamar, Proposal, Scope, SleepReport, Status, UnknownProposal, Verdict
from tests.sleep.test_sleep_apply_edited import _two_merges

BUILD = {"project": "trace", "task": "build"}


def run_world(lam: Lamar, effects: dict[str, float], *, seed: int, until: str | None = None,
              verdict: Verdict | None = None, episodes: int = 3000) -> int:
    """Recall and report in a seeded world where each injected lesson shifts the reward; returns episodes run."""
    rng = random.Random(seed)
    for n in range(1, episodes + 1):
        rec = lam.recall(BUILD)
        reward = 0.1 + rng.gauss(0.0, 0.3) + sum(effects.get(i, 0.0) for i in rec.ids)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
        if until is not None and n % 20 == 0 and lam.evidence(until).verdict is verdict:
            return n
    return episodes


@pytest.fixture(scope="module")
def world() -> tuple[Lamar, dict[str, str]]:
    """A store with a proven-harmful lesson, a proven-helpful candidate, duplicates and a contradiction."""
    # explore=4 keeps a losing lesson in play long enough for its harm to be proven.
    lam = Lamar(":memory:", k=3, seed=7, holdout=0.5, explore=4.0)
    ids = {
        "bad": lam.add(Experience("the build fails", "delete the repository and clone it again",
                                  scope=Scope(project="trace"))),
        "good": lam.add(Experience("the build fails after a bump", "clear DerivedData", scope=Scope(project="trace"),
                                   status=Status.CANDIDATE)),
        "rival": lam.add(Experience("The build fails after a bump!", "reinstall Xcode", scope=Scope(project="trace"))),
    }
    docs = Scope(project="docs")  # lessons out of the loop's scope: never in play, no evidence
    ids["dup"] = lam.add(Experience("tests are flaky", "rerun the failing test once", scope=docs))
    ids["dup_exact"] = lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=docs))
    ids["dup_near"] = lam.add(Experience("flaky tests", "rerun each failing test once", scope=docs))
    ids["elsewhere"] = lam.add(Experience("tests are flaky", "rerun the failing test once", scope=Scope(project="web")))
    ids["tabs"] = lam.add(Experience("formatting Swift code", "indent with tabs", scope=docs))
    ids["spaces"] = lam.add(Experience("formatting swift code", "indent with four spaces", scope=docs))
    effects = {ids["bad"]: -0.6, ids["good"]: 0.3}
    ran = run_world(lam, effects, seed=3, until=ids["bad"], verdict=Verdict.HARMS)
    assert lam.evidence(ids["bad"]).verdict is Verdict.HARMS, f"harm not proven in {ran} episodes"
    ran = run_world(lam, effects, seed=4, until=ids["good"], verdict=Verdict.HELPS)
    assert lam.evidence(ids["good"]).verdict is Verdict.HELPS, f"help not proven in {ran} more episodes"
    assert lam.evidence(ids["bad"]).verdict is Verdict.HARMS
    return lam, ids


def fresh_copy(world: tuple[Lamar, dict[str, str]]) -> Lamar:
    """The fixture's store, replayed into a new engine so each test may change it."""
    lam, _ = world
    from lamar.store import MemoryStore

    store = MemoryStore()
    store.append(lam.store.read(0))
    return Lamar(store, k=3, seed=7, holdout=0.5, explore=4.0)


def by_kind(report: SleepReport) -> dict[str, list[Proposal]]:
    out: dict[str, list[Proposal]] = {}
    for proposal in report:
        out.setdefault(proposal.kind, []).append(proposal)
    return out


def test_the_right_proposals(world: tuple[Lamar, dict[str, str]]) -> None:
    lam, ids = world
    kinds = by_kind(lam.sleep())
    assert sorted(kinds) == ["contradiction", "merge", "promote", "retire"]

    (retire,) = kinds["retire"]
    assert retire.experience_ids == (ids["bad"],)
    assert retire.evidence[ids["bad"]]["verdict"] == "harms"
    assert retire.evidence[ids["bad"]]["upper"] < 0
    assert "proven harmful" in retire.reason

    (promote,) = kinds["promote"]
    assert promote.experience_ids == (ids["good"],)
    assert promote.evidence[ids["good"]]["lower"] > 0

    (merge,) = kinds["merge"]  # the same words in another scope are a different lesson
    assert merge.payload == {"into": ids["dup"], "from": [ids["dup_exact"], ids["dup_near"]]}
    assert "nearly the same" in merge.reason

    (contradiction,) = kinds["contradiction"]
    assert set(contradiction.experience_ids) == {ids["tabs"], ids["spaces"]}
    assert "indent with tabs" in contradiction.reason and "indent with four spaces" in contradiction.reason
    assert set(contradiction.evidence) == {ids["tabs"], ids["spaces"]}


def test_sleep_changes_nothing(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    before_events = len(lam.store.read(0))
    before = {e.id: e.status for e in lam.experiences()}
    evidence = {i: lam.evidence(i).to_dict() for i in before}
    lam.sleep()
    lam.sleep()
    assert len(lam.store.read(0)) == before_events
    assert {e.id: e.status for e in lam.experiences()} == before
    assert {i: lam.evidence(i).to_dict() for i in before} == evidence


def test_apply_all_gives_the_right_state(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    dup_evidence = sum(lam.evidence(ids[k]).eligible for k in ("dup", "dup_exact", "dup_near"))
    report = lam.sleep()
    result = lam.apply(report)
    assert result.skipped == []
    assert result.applied == [p.id for p in report]

    assert lam.get(ids["bad"]).status is Status.RETIRED
    assert lam.get(ids["good"]).status is Status.ACTIVE
    assert lam.get(ids["dup"]).status is Status.ACTIVE
    for gone in ("dup_exact", "dup_near"):
        assert lam.get(ids[gone]).status is Status.RETIRED
        assert lam.get(ids[gone]).provenance["merged_into"] == ids["dup"]
    assert lam.evidence(ids["dup"]).eligible == dup_evidence
    assert lam.get(ids["elsewhere"]).status is Status.ACTIVE
    # a contradiction is only acknowledged: both sides stay in play
    assert lam.get(ids["tabs"]).status is Status.ACTIVE and lam.get(ids["spaces"]).status is Status.ACTIVE
    # the retired lesson is never recalled again
    assert all(ids["bad"] not in lam.recall(BUILD).eligible for _ in range(5))

    again = lam.sleep()
    assert again.of_kind("retire") == [] and again.of_kind("merge") == [] and again.of_kind("promote") == []


def test_apply_a_chosen_subset(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    report = lam.sleep()
    retire = report.of_kind("retire")[0]
    result = lam.apply(report, only=[retire.id])
    assert result.applied == [retire.id] and result.skipped == []
    assert lam.get(ids["bad"]).status is Status.RETIRED
    assert lam.get(ids["dup_exact"]).status is Status.ACTIVE  # the merge was not chosen
    assert lam.get(ids["good"]).status is Status.CANDIDATE

    events = len(lam.store.read(0))
    assert lam.would_skip(report) == {retire.id: "already applied"}  # what apply says next, writing nothing
    assert len(lam.store.read(0)) == events
    rest = lam.apply(report)
    assert rest.skipped == [(retire.id, "already applied")]
    assert lam.would_skip(report) == {p.id: "already applied" for p in report}
    assert len(rest.applied) == len(report) - 1
    with pytest.raises(UnknownProposal, match="no proposal 'retire_nope'"):
        lam.apply(report, only=["retire_nope"])


def test_applying_twice_is_harmless(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    report = lam.sleep()
    lam.apply(report)
    events = len(lam.store.read(0))
    second = lam.apply(report)
    assert second.applied == []
    assert [why for _, why in second.skipped] == ["already applied"] * len(report)
    assert len(lam.store.read(0)) == events


def test_a_report_survives_json_and_another_engine(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    report = lam.sleep()
    text = json.dumps(report.to_dict())
    restored = SleepReport.from_dict(json.loads(text))
    assert [p.to_dict() for p in restored] == [p.to_dict() for p in report]
    other = Lamar(lam.store, k=3, seed=1)  # another process with the same store
    assert other.apply(restored).applied == [p.id for p in report]
    assert lam.apply(report).applied == []


def test_a_lesson_retired_since_the_report_is_not_touched(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    report = lam.sleep()
    merge = report.of_kind("merge")[0]
    lam.retire(ids["dup_near"], "by hand")
    result = lam.apply(report, only=[merge.id])
    assert result.applied == []
    ((pid, why),) = result.skipped
    assert pid == merge.id and ids["dup_near"] in why and "retired" in why
    assert lam.get(ids["dup_exact"]).status is Status.ACTIVE  # nothing was half-done


def test_retired_and_revived_since_still_counts_as_changed(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    report = lam.sleep()
    contradiction = report.of_kind("contradiction")[0]
    lam.retire(ids["tabs"], "by hand")
    lam.revive(ids["tabs"], "changed my mind")
    result = lam.apply(report, only=[contradiction.id])
    assert result.applied == []
    assert "was retired after the report was made" in result.skipped[0][1]


def test_a_lesson_merged_since_the_report_is_not_touched(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    old = lam.sleep()
    extra = lam.add(Experience("tests are flaky", "rerun the failing test once more", scope=Scope(project="docs")))
    new = lam.sleep()
    new_merge = new.of_kind("merge")[0]
    assert extra in new_merge.payload["from"] and new_merge.id != old.of_kind("merge")[0].id
    assert lam.apply(new, only=[new_merge.id]).applied == [new_merge.id]

    result = lam.apply(old, only=[old.of_kind("merge")[0].id])
    assert result.applied == []
    assert f"merged into {ids['dup']}" in result.skipped[0][1]


def test_retirement_is_rechecked_against_current_evidence(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    assert lam.evidence(ids["tabs"]).verdict is Verdict.UNKNOWN
    forged = Proposal(id="retire_forged", kind="retire", experience_ids=(ids["tabs"],), reason="stale evidence",
                      expect={ids["tabs"]: "active"})
    result = lam.apply(SleepReport([forged], made_at=lam.stats()["events"]))
    assert result.skipped == [
        ("retire_forged", f"lesson {ids['tabs']} is no longer proven to harm (verdict now unknown)")]
    assert lam.get(ids["tabs"]).status is Status.ACTIVE


def test_exact_only_merging_with_similarity_one(world: tuple[Lamar, dict[str, str]]) -> None:
    lam, ids = world
    (merge,) = lam.sleep(similarity=1.0).of_kind("merge")
    assert merge.payload == {"into": ids["dup"], "from": [ids["dup_exact"]]}
    assert "say the same thing" in merge.reason
    with pytest.raises(ValueError, match="similarity"):
        lam.sleep(similarity=0.0)


def test_unknown_sleep_option_is_a_type_error(world: tuple[Lamar, dict[str, str]]) -> None:
    lam, _ = world
    with pytest.raises(TypeError, match="keep_lst"):
        lam.sleep(keep_lst=3)


def test_opposite_actions_are_a_contradiction_not_a_merge() -> None:
    lam = Lamar(":memory:", seed=1)
    a = lam.add(Experience("the build fails after a bump", "clear the DerivedData folder"))
    b = lam.add(Experience("the build fails after a bump", "do not clear the DerivedData folder"))
    kinds = by_kind(lam.sleep())
    assert "merge" not in kinds
    assert set(kinds["contradiction"][0].experience_ids) == {a, b}


def test_one_side_proven_to_help_settles_a_contradiction(world: tuple[Lamar, dict[str, str]]) -> None:
    lam = fresh_copy(world)
    _, ids = world
    assert lam.evidence(ids["good"]).verdict is Verdict.HELPS
    assert lam.evidence(ids["rival"]).verdict is Verdict.UNKNOWN
    assert [p for p in lam.sleep().of_kind("contradiction") if ids["rival"] in p.experience_ids] == []



def test_a_store_failing_part_way_through_apply_keeps_each_proposal_whole(tmp_path) -> None:
    # Each proposal is one batch with its "applied" record: one that failed is not half there,
    # and applying the same report again carries out the rest.
    from lamar import StoreError
    from lamar.store import SqliteStore

    class FailsOnce(SqliteStore):
        appends = 0

        def append(self, events):
            if any(e.kind == "applied" for e in events):
                self.appends += 1
                if self.appends == 2:
                    raise StoreError(f"{self.location}: disk I/O error")
            return super().append(events)

    store = FailsOnce(tmp_path / "s.db")
    lam = Lamar(store, seed=1)
    report, first, second = _two_merges(lam)
    with pytest.raises(StoreError, match="disk I/O error"):
        lam.apply(report)
    assert lam.stats()["by_status"]["retired"] == 1  # the first merge, whole; nothing of the second
    again = lam.apply(report)
    assert again.applied == [second] and again.skipped == [(first, "already applied")]
    lam.close()
    reopened = Lamar(str(tmp_path / "s.db"))
    assert reopened.stats()["by_status"] == {"candidate": 0, "active": 2, "retired": 2}
    reopened.close()


def test_rules_of_one_file_are_not_a_contradiction_of_each_other(tmp_path) -> None:
    """Every rule of a CLAUDE.md section shares the precondition "working on shop" (a "Rules" heading
    adds nothing); sleep flagged them all as one contradiction and asked the user to retire one of their rules."""
    from lamar.rules import import_rules

    (tmp_path / "CLAUDE.md").write_text("## Rules\n- Always run `pytest -x` before committing.\n"
                                        "- Use ruff for formatting, not black.\n- Never edit migrations by hand.\n")
    lam = Lamar(":memory:", seed=1)
    import_rules(lam, tmp_path, project="shop", apply=True)
    assert len(lam.experiences()) == 3
    assert lam.sleep().of_kind("contradiction") == []
    # A hand-written lesson for that situation still meets the rule it contradicts, and only that one.
    ruff = next(e.id for e in lam.experiences() if "ruff" in e.action)
    mine = lam.add(Experience("working on shop", "format with black", scope=Scope(project="shop")))
    (flagged,) = lam.sleep().of_kind("contradiction")
    assert flagged.experience_ids == (mine, ruff)


def test_an_unknown_proposal_id_is_shortened_in_the_message() -> None:
    # A huge id, or a report of many proposals, gives a short message that still names the id
    # and the report's ids.
    lam = Lamar(":memory:")
    docs = Scope(project="docs")
    for i in range(8):
        lam.add(Experience(f"tests of suite {i} are flaky", f"rerun suite {i} once", scope=docs))
        lam.add(Experience(f"Tests of suite {i} are flaky.", f"Rerun suite {i} once!", scope=docs))
    report = lam.sleep()
    assert len(report) == 8
    with pytest.raises(UnknownProposal) as refused:
        lam.apply(report, only=["merge_" + "x" * 100_000])
    said = str(refused.value)
    assert len(said) < 600 and "(100006 characters)" in said and "(8 in all)" in said, said[:300]
    assert lam.store.read(16) == []  # nothing applied


def test_a_contradiction_of_three_lessons_is_not_described_as_two_sides() -> None:
    # The review's line for a contradiction said "both sides" of three flaky-test remedies.
    from lamar.sleep.kinds import describe

    lam = Lamar(":memory:", k=2, seed=1)
    for action in ("pin the seeds", "mock the clock", "retry the network"):
        lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
    (contradiction,) = lam.sleep().of_kind("contradiction")
    assert len(contradiction.experience_ids) == 3
    said = " ".join(describe(contradiction))
    assert "both" not in said and "each of the 3 lessons" in said, said


def test_a_merge_of_one_lesson_into_another_says_it_not_they() -> None:
    # The review read "merge 'exp_b' into 'exp_a' (they are retired, their evidence moves to ...)" for one lesson.
    from lamar.sleep.kinds import describe

    lam = Lamar(":memory:", k=2, seed=1)
    lam.add(Experience("the build step fails with error 0", "try remedy 0 for build", scope=Scope(task="build")))
    lam.add(Experience("the build step fails with the error 0", "try the remedy 0 for build",
                       scope=Scope(task="build")))
    (merge,) = lam.sleep().of_kind("merge")
    said = " ".join(describe(merge))
    assert "(it is retired, its evidence moves to" in said and "they" not in said, said


def test_an_acknowledged_contradiction_keeps_its_id_as_its_lessons_evidence_moves() -> None:
    # A team acknowledged a contradiction, then was asked about it again under a new id once the second
    # lesson had more randomized episodes than the first: the id followed the keepers' evidence ranking.
    lam = Lamar(":memory:", k=1, seed=2, holdout=0.3)
    first = lam.add(Experience("the deploy fails", "roll back the release", scope=Scope(project="api")))
    second = lam.add(Experience("the deploy fails", "restart the workers", scope=Scope(project="api")))
    report = lam.sleep()
    (acknowledged,) = report.of_kind("contradiction")
    assert lam.apply(report).applied == [acknowledged.id]
    rng = random.Random(0)
    for _ in range(400):
        rec = lam.recall({"project": "api"})
        lam.report(rec.episode_id, 0.3 if second in rec.ids or rng.random() < 0.5 else -0.3)
        if lam.evidence(second).randomized > lam.evidence(first).randomized + 3:
            break
    assert lam.evidence(second).randomized > lam.evidence(first).randomized + 3
    again = lam.sleep(include_applied=True)  # what the default leaves out, by that id
    assert [p.id for p in again.of_kind("contradiction")] == [acknowledged.id]
    assert lam.would_skip(again) == {acknowledged.id: "already applied"}


def test_a_contradiction_acknowledged_with_its_lessons_in_another_order_is_not_asked_again() -> None:
    # A store's acknowledgement names the contradiction by an id that listed its lessons by evidence, the
    # later-added one first; sleep lists them in the order they were added, and must still see it answered.
    lam = Lamar(":memory:", k=1, seed=2, holdout=0.3)
    first = lam.add(Experience("the deploy fails", "roll back the release", scope=Scope(project="api")))
    second = lam.add(Experience("the deploy fails", "restart the workers", scope=Scope(project="api")))
    report = lam.sleep()
    (proposal,) = report.of_kind("contradiction")
    assert list(proposal.experience_ids) == [first, second]
    reordered = dataclasses.replace(proposal, id=Proposal.make_id("contradiction", [second, first]),
                                    experience_ids=(second, first))
    answered = dataclasses.replace(report, proposals=[reordered])
    assert lam.apply(answered).applied == [reordered.id]
    again = lam.sleep(include_applied=True)
    assert [p.id for p in again.of_kind("contradiction")] == [reordered.id]
    assert lam.would_skip(again) == {reordered.id: "already applied"}
