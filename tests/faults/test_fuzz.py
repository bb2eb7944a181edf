"""Promises 2 and 6: scope isolation over random operations, and hostile input at every
public entry point ends in success or a LamarError, never another exception or a broken store."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lamar import Experience, Lamar, LamarError, Scope, Signal, Status

KEYS = ["project", "language", "task"]
VALUES = ["a", "b", "c"]
scope_strategy = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
context_strategy = st.dictionaries(st.sampled_from(KEYS + ["extra"]), st.sampled_from(VALUES), max_size=4)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

operation = st.one_of(
    st.tuples(st.just("add"), scope_strategy),
    st.tuples(st.just("recall"), context_strategy, st.integers(0, 4)),
    st.tuples(st.just("report"), st.integers(0, 50), st.sampled_from(list(Signal))),
    st.tuples(st.just("retire"), st.integers(0, 50)),
    st.tuples(st.just("revive"), st.integers(0, 50)),
    st.tuples(st.just("sleep_apply")),
)


@FUZZ
@given(ops=st.lists(operation, max_size=60), seed=st.integers(0, 2**16))
def test_a_lesson_is_never_injected_outside_its_scope(ops: list[tuple], seed: int) -> None:
    lam = Lamar(":memory:", k=3, seed=seed)
    ids: list[str] = []
    open_episodes: list[str] = []
    for op in ops:
        kind = op[0]
        if kind == "add":
            ids.append(lam.add(Experience("p", f"a{len(ids)}", scope=Scope(op[1]))))
        elif kind == "recall":
            rec = lam.recall(op[1], k=op[2])
            assert len(rec.ids) <= op[2]
            for exp in rec.experiences + [lam.get(i) for i in rec.held_out]:
                assert exp.scope.matches(op[1]), "injected outside its scope"
                assert exp.status is not Status.RETIRED
            expected = {i for i in ids if lam.get(i).status is not Status.RETIRED
                        and lam.get(i).scope.matches(op[1])}
            assert set(rec.eligible) == expected
            open_episodes.append(rec.episode_id)
        elif kind == "report" and open_episodes:
            lam.report(open_episodes.pop(op[1] % len(open_episodes)), op[2])
        elif kind in ("retire", "revive") and ids:
            getattr(lam, kind)(ids[op[1] % len(ids)])
        elif kind == "sleep_apply":
            lam.apply(lam.sleep())
    stats = lam.stats()
    assert stats["reports"] + stats["unreported"] == stats["episodes"]


anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@FUZZ
@given(context=anything)
def test_recall_with_any_context(context: object) -> None:
    lam = Lamar(":memory:", seed=1)
    lam.add(Experience("p", "a"))
    try:
        lam.recall(context)  # type: ignore[arg-type]
    except LamarError:
        assert lam.stats()["episodes"] == 0


@FUZZ
@given(pre=anything, act=anything, rationale=anything, scope=anything, status=anything)
def test_experiences_from_anything(pre: object, act: object, rationale: object, scope: object,
                                   status: object) -> None:
    lam = Lamar(":memory:")
    try:
        exp = Experience(pre, act, rationale, scope, status)  # type: ignore[arg-type]
    except LamarError:
        return
    exp_id = lam.add(exp)
    assert lam.get(exp_id).precondition == pre


@FUZZ
@given(reward=anything | st.sampled_from(list(Signal)), episode=anything | st.just("real"))
def test_report_with_anything(reward: object, episode: object) -> None:
    lam = Lamar(":memory:")
    rec = lam.recall({})
    target = rec.episode_id if episode == "real" else episode
    try:
        lam.report(target, reward)  # type: ignore[arg-type]
    except LamarError:
        assert lam.stats()["reports"] == 0
    else:
        assert lam.stats()["reports"] == 1


def _valid_store(path: Path) -> bytes:
    lam = Lamar(str(path), seed=0)
    lam.add(Experience("p", "a"))
    lam.report(lam.recall({}).episode_id, Signal.SHIPPED)
    lam.close()
    return path.read_bytes()


@FUZZ
@given(data=st.data())
def test_json_store_files_mangled_anyhow(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.json"
        good = _valid_store(path)
        how = data.draw(st.sampled_from(["truncate", "flip", "splice", "json"]))
        # positions as fractions: the file's length varies with the random ids and times
        at = int(data.draw(st.floats(0, 1, exclude_max=True)) * len(good))
        if how == "truncate":
            bad = good[:at]
        elif how == "flip":
            i = at
            bad = good[:i] + bytes([good[i] ^ data.draw(st.integers(1, 255))]) + good[i + 1:]
        elif how == "splice":
            bad = good + data.draw(st.binary(min_size=1, max_size=40))
        else:
            bad = json.dumps(data.draw(anything)).encode()
        path.write_bytes(bad)
        try:
            lam = Lamar(str(path))
            lam.stats()
        except LamarError:
            assert path.read_bytes() == bad  # never overwritten
