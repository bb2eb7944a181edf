"""Snapshots and the saved state: a cache restored from either equals the one it came from; a
damaged one is refused rather than trusted."""

from __future__ import annotations

import json
import math
import random

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.policy.config import Policy
from lamar.state import saved
from lamar.state.cache import FoldCache
from lamar.state.snapshot import FORMAT, restore, snapshot_of
from tests.state.seam import folded


def _engine() -> Lamar:
    lam = Lamar(":memory:", k=2, seed=3)
    for i in range(4):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
    rng = random.Random(3)
    for n in range(120):
        rec = lam.recall({"task": f"t{n % 2}", "lang": rng.choice(["py", "go"])})
        if n % 9:
            lam.report(rec.episode_id, rng.choice(list(Signal)))
    return lam


def test_a_restored_snapshot_is_the_cache_it_was_taken_from() -> None:
    cache = folded(_engine()).cache
    data = json.loads(json.dumps(snapshot_of(cache)))  # as stored: through JSON
    copy = FoldCache(cache.policy, "copy")
    restore(copy, data)
    assert snapshot_of(copy) == snapshot_of(cache)
    ctx = {"task": "t1", "lang": "go"}
    assert [s.experience.id for s in copy.eligible(ctx)] == [s.experience.id for s in cache.eligible(ctx)]
    assert (copy.sigma(), copy.n_active) == (cache.sigma(), cache.n_active)


@pytest.mark.parametrize("damage", ["format", "nan", "rewards"])
def test_a_damaged_snapshot_is_refused(damage: str) -> None:
    data = json.loads(json.dumps(snapshot_of(folded(_engine()).cache)))
    if damage == "format":
        data["format"] = FORMAT + 1
    elif damage == "nan":
        data["lessons"][0]["ledger"]["n"] = math.nan
    else:
        data["rewards"][2] = -1.0
    with pytest.raises(ValueError):
        restore(FoldCache(Policy(), "copy"), data)


def test_the_saved_state_keeps_only_the_episodes_a_store_cannot_look_up_and_checks_itself() -> None:
    lam = _engine()
    cache = folded(lam).cache
    assert cache.last is not None
    text = saved.state_text(cache, cache.last)
    payload = saved.read_state(text, lam.policy)
    kept = {row[0] for row in payload["state"]["episodes"]}
    assert kept == {r.id for r in cache.episodes.values() if r.reports == 0} and kept
    assert payload["seq"] == cache.seq and payload["last"] == saved.fingerprint(cache.last)
    with pytest.raises(ValueError, match="checksum"):
        saved.read_state(text[:-2], lam.policy)
    with pytest.raises(ValueError, match="other tuning"):
        saved.read_state(text, Policy(explore=0.5))
