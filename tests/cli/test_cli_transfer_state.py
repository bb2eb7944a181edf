"""export / import save the copy's folded state, so that its first readers resume from it instead of folding."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar
from lamar.policy.config import Policy
from lamar.state.copied import agents_tuning
from lamar.state.follower import Follower
from lamar.store import open_store
from lamar.store.base import folded_rows


def resumed(location: str | Path) -> tuple[dict[str, object], int, int]:
    """The tuning a command takes on the store, the seq of the state saved under it, and the last event's."""
    store = open_store(str(location))
    try:
        tuning = agents_tuning(store)
        follower = Follower(store, Policy(**tuning))
        assert follower.resume(), f"{location}: no saved state a reader resumes from"
        return tuning, follower.state_seq, store.read(0)[-1].seq
    finally:
        store.close()


@pytest.mark.parametrize(("made", "suffix"), [("new", ".json"), ("empty", ".db")])
def test_a_copy_saves_its_state_under_the_sources_tuning(run_cli, sqlite_store, tmp_path, made, suffix):
    # The built store's agents ran with holdout=0.4: the copy's readers take that tuning, and find it saved.
    assert resumed(sqlite_store)[0]["holdout"] == 0.4
    exported, imported = tmp_path / f"copy{suffix}", tmp_path / "back.db"
    if made == "empty":  # a store that holds no events is copied into in place, not made beside its name
        for location in (exported, imported):
            open_store(str(location)).close()
            assert location.exists()
    assert run_cli("export", "--store", sqlite_store, "--out", exported).returncode == 0
    assert run_cli("import", exported, "--store", imported).returncode == 0
    for copy in (exported, imported):
        tuning, seq, last = resumed(copy)
        assert tuning["holdout"] == 0.4 and seq == last
        with Lamar(str(copy), **tuning) as reader, Lamar(str(sqlite_store), **tuning) as original:
            assert reader.stats() | {"store": ""} == original.stats() | {"store": ""}


def test_an_append_saves_the_state_under_the_targets_tuning(run_cli, sqlite_store, tmp_path):
    target = tmp_path / "team.db"
    with Lamar(str(target), holdout=0.1) as agent:  # its agents' tuning, saved with their state at close
        agent.report(agent.recall({"project": "demo"}).episode_id, 1.0)
        agent.add(Experience("the deploy hangs", "check the migrations first"))
    assert resumed(target)[0]["holdout"] == 0.1
    assert run_cli("import", sqlite_store, "--store", target, "--append").returncode == 0
    tuning, seq, last = resumed(target)
    assert tuning["holdout"] == 0.1 and seq == last  # the source's 0.4 would turn the team's agents away


def test_a_copy_into_postgres_builds_its_rows_under_the_sources_tuning(run_cli, sqlite_store, postgres_url):
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("copystate")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    try:
        assert run_cli("export", "--store", sqlite_store, "--out", url).returncode == 0
        store = open_store(url)
        try:
            rows = folded_rows(store)
            assert rows is not None
            assert rows.lessons([]).tuning is not None  # built: the first reader does not build them
            assert agents_tuning(store)["holdout"] == 0.4
        finally:
            store.close()
    finally:
        drop_namespaces(postgres_url, namespace)
