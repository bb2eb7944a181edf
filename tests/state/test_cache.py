"""`FoldCache`: every event kind folded, an unknown one refused, the scope index matches by brute force."""

from __future__ import annotations

import random

import pytest

from lamar import CorruptStore, Experience, Scope, Status
from lamar.policy.config import Policy
from lamar.state.cache import FoldCache
from lamar.state.snapshot import snapshot_of
from lamar.store.base import EVENT_KINDS, Event


def _lesson(n: int, **scope: str) -> Event:
    exp = Experience(f"case {n}", f"do {n}", scope=Scope(**scope)).with_identity()
    return Event("experience", exp.to_dict(), key=f"experience:{exp.id}")


def _numbered(events: list[Event]) -> list[Event]:
    return [e.numbered(seq) for seq, e in enumerate(events, 1)]


def _episode(eid: str, ids: list[str], injected: list[str]) -> Event:
    data = {"id": eid, "context": {"task": "t", "lang": "py"}, "eligible": ids, "injected": injected,
            "held_out": [], "p": dict.fromkeys(ids, 0.5)}
    return Event("episode", data, key=f"episode:{eid}")


def _outcome(eid: str, reward: float, *, replace: bool = False) -> Event:
    return Event("outcome", {"episode": eid, "reward": reward, "signal": None, "replace": replace})


def test_every_event_kind_is_folded_into_the_cache() -> None:
    a, b, c, d = (_lesson(n, task="t") for n in range(4))
    ids = [e.data["id"] for e in (a, b, c, d)]
    source = FoldCache(Policy(), "test")
    source.fold_log(_numbered([a, _episode("ep0", ids[:1], ids[:1]), _outcome("ep0", 1.0)]))
    log = _numbered([
        Event("snapshot", snapshot_of(source)), b, c, d,
        Event("status", {"id": ids[1], "status": "retired", "reason": "by hand"}),
        Event("scope", {"id": ids[2], "key": "lang", "value": "py"}),
        Event("merge", {"into": ids[0], "from": [ids[3]]}),
        Event("edit", {"id": ids[2], "version": 2, "precondition": "case 2", "action": "do 2 again", "rationale": "",
                       "scope": {"lang": "py"}, "changed": ["action", "scope"], "evidence": "restart"}),
        _episode("ep1", [ids[0], ids[2]], [ids[2]]), _outcome("ep1", -1.0),
        Event("applied", {"proposal": "pr1", "kind": "merge"}),
        Event("compact", {"episodes": ["ep0"]}),
    ])
    erase = Event("erase", {"id": ids[2], "by": "ops", "reason": "a name", "contexts": True, "episodes": ["ep1"]})
    assert {e.kind for e in [*log, erase]} == EVENT_KINDS  # a kind added later must be added here too
    cache = FoldCache(Policy(), "test")
    cache.fold_log(log)
    status = {i: s.experience.status for i, s in cache.lessons.items()}
    assert status == {ids[0]: Status.ACTIVE, ids[1]: Status.RETIRED, ids[2]: Status.ACTIVE, ids[3]: Status.RETIRED}
    edited = cache.lessons[ids[2]]
    assert (edited.experience.scope, edited.experience.action, edited.restarts) == (Scope(lang="py"), "do 2 again", 1)
    assert [s.experience.id for s in cache.eligible({"lang": "py"})] == [ids[2]]
    assert [s.experience.id for s in cache.eligible({"task": "t", "lang": "py"})] == [ids[0], ids[2]]
    assert [s.experience.id for s in cache.eligible({"task": "t", "lang": "go"})] == [ids[0]]
    assert (cache.n_active, cache.reports, cache.applied, list(cache.episodes)) == (2, 2, {"pr1"}, ["ep1"])
    evidence = cache.lessons[ids[2]].evidence(Policy(), 2)
    cache.fold(erase.numbered(len(log) + 1))  # the text goes, the lesson retires, its evidence stays
    erased = cache.lessons[ids[2]].experience
    assert (erased.precondition, erased.action, erased.status, erased.provenance["erased"]["by"]) == (
        "[erased]", "[erased]", Status.RETIRED, "ops")
    assert cache.lessons[ids[2]].evidence(Policy(), 2) == evidence
    assert [s.experience.id for s in cache.eligible({"task": "t", "lang": "py"})] == [ids[0]]
    assert (cache.n_active, cache.episodes["ep1"].context) == (1, {})
    assert cache.lessons[ids[2]].history.to_dict()["trail"][-1][1] == "erased by ops: a name"
    assert cache.compacted["episodes"] == 1 and cache.compacted["reports"] == 1
    assert cache.seq == len(log) + 1 and cache.last.kind == "erase"


def test_an_unknown_or_malformed_event_is_a_corrupt_store_naming_it() -> None:
    cache = FoldCache(Policy(), "the-store")
    with pytest.raises(CorruptStore, match=r"the-store: event 1 \(whatever\).*unknown event kind"):
        cache.fold(Event("whatever", {}).numbered(1))
    with pytest.raises(CorruptStore, match=r"event 2 \(status\) is malformed"):
        cache.fold(Event("status", {"status": "retired"}).numbered(2))


def test_the_outcome_that_counts_is_the_last_replacement_else_the_first_report() -> None:
    lesson = _lesson(0, task="t")
    ids = [lesson.data["id"]]
    cache = FoldCache(Policy(), "test")
    cache.fold_log(_numbered([lesson, _episode("ep", ids, ids), _outcome("ep", 1.0), _outcome("ep", -1.0),
                              _outcome("ep", 0.5, replace=True)]))
    record = cache.episodes["ep"]
    # the duplicate not counted
    assert (record.reward, record.reports, cache.reports, cache.ignored) == (0.5, 2, 1, {4})
    again = FoldCache(Policy(), "test")  # the same events folded one by one: the plain duplicate is refused
    for event in _numbered([lesson, _episode("ep", ids, ids), _outcome("ep", 1.0), _outcome("ep", -1.0)]):
        again.fold(event)
    assert (again.episodes["ep"].reward, again.ignored) == (1.0, {4})


@pytest.mark.parametrize("shapes", [3, 40])  # few scope shapes: walk them; many: walk the context's subsets
def test_eligible_lessons_are_those_whose_scope_the_context_contains(shapes: int) -> None:
    rng = random.Random(shapes)
    keys, values = ["task", "lang", "repo", "os"], ["a", "b"]
    scopes = [{k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))} for _ in range(shapes)]
    events = [_lesson(n, **scope) for n, scope in enumerate(scopes * 2)]
    cache = FoldCache(Policy(), "test")
    cache.fold_log(_numbered(events))
    assert (len(cache.index) > 1 << 2) is (shapes == 40)
    for _ in range(50):
        ctx = {k: rng.choice(values) for k in rng.sample(keys, 2)}
        brute = {s.experience.id for s in cache.lessons.values()
                 if all(ctx.get(k) == v for k, v in s.experience.scope.items())}
        assert {s.experience.id for s in cache.eligible(ctx)} == brute
        allowed = set(list(brute)[:1])
        assert {s.experience.id for s in cache.eligible(ctx, allowed)} == allowed
