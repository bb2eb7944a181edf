"""`transfer` saves the copy's folded state, folding the copied log once: its check's fold where it can."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.policy.config import Policy
from lamar.state.copied import agents_tuning
from lamar.state.follower import Follower
from lamar.state.saved import state_text, tuning_of
from lamar.store import open_store
from lamar.store.base import KeyedStore, Store, folded_rows
from lamar.store.transfer import transfer
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


def build(location: Path | str, *, replaced: bool = True, **tuning: float) -> None:
    """A store its agents folded under `tuning`: lessons, reported and pending episodes, a retired lesson and
    (`replaced`) a replaced report, which the fold takes back to a mark."""
    with Lamar(str(location), k=2, seed=3, **tuning) as agent:  # type: ignore[arg-type]
        ids = [agent.add(Experience(f"when step {i} fails", f"do fix {i}", scope=Scope(task="t"))) for i in range(6)]
        episodes = [agent.recall({"task": "t"}).episode_id for _ in range(40)]
        for n, episode in enumerate(episodes[:-3]):  # the last 3 pending
            agent.report(episode, 1.0 if n % 3 else -1.0)
        if replaced:
            agent.report(episodes[5], 0.5, replace=True)
        agent.retire(ids[0], reason="superseded")


def resumed(store: Store, tuning: dict[str, object]) -> Follower:
    follower = Follower(store, Policy(**tuning))
    assert follower.resume(), f"{store.location}: no saved state its readers resume from"
    return follower


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_a_copy_into_a_new_file_folds_its_log_once(tmp_path: Path, counted_folds: list[int], suffix: str) -> None:
    build(tmp_path / "source.db", replaced=False, holdout=0.3)
    source, target = open_store(str(tmp_path / "source.db")), open_store(str(tmp_path / f"copy{suffix}"))
    try:
        counted_folds[0] = 0
        result = transfer(source, target)
        # The check's fold is the state saved: each event folded once, not once more to save it.
        assert counted_folds[0] == result.copied
        assert isinstance(target, KeyedStore) and target.load_state() is not None
    finally:
        source.close()
        target.close()


@pytest.mark.parametrize("append", [False, True])
def test_the_state_saved_is_the_one_a_fold_of_the_copy_saves(tmp_path: Path, append: bool) -> None:
    build(tmp_path / "source.db", holdout=0.3)
    if append:  # the target's agents' tuning, and their events first
        with Lamar(str(tmp_path / "copy.db"), holdout=0.1) as agent:
            agent.report(agent.recall({"task": "t"}).episode_id, 1.0)
            agent.add(Experience("the deploy hangs", "check the migrations first"))
    source, target = open_store(str(tmp_path / "source.db")), open_store(str(tmp_path / "copy.db"))
    try:
        transfer(source, target, append=append)
        tuning = agents_tuning(target)
        assert tuning["holdout"] == (0.1 if append else 0.3)
        saved = resumed(target, tuning)
        assert saved.state_seq == target.read(0)[-1].seq
        # What folding the copy gives (the fold a copy paid again to save its state), saved alike.
        folded = Follower(target, Policy(**tuning))
        folded.sync()
        assert isinstance(target, KeyedStore) and folded.cache.last is not None
        assert target.load_state() == state_text(folded.cache, folded.cache.last)
    finally:
        source.close()
        target.close()


@pytest.mark.parametrize("target_kind", ["sqlite", "json", "memory", "postgres-log", "postgres-fold"])
def test_transfer_saves_the_state_its_readers_resume_from(tmp_path: Path, target_kind: str, request) -> None:
    build(tmp_path / "source.db", holdout=0.4)
    namespace = None
    if target_kind.startswith("postgres"):
        url = request.getfixturevalue("postgres_url")
        namespace = unique_namespace("copies")
        location = namespace_url(url, namespace, lamar_fold="on" if target_kind == "postgres-fold" else "off")
    else:
        location = {"sqlite": str(tmp_path / "copy.db"), "json": str(tmp_path / "copy.json"),
                    "memory": ":memory:"}[target_kind]
    source, target = open_store(str(tmp_path / "source.db")), open_store(location)
    try:
        transfer(source, target)
        assert agents_tuning(target)["holdout"] == 0.4  # the source's agents' tuning, which the copy's take
        rows = folded_rows(target)
        if rows is not None:  # the fold mode: its rows built, so that its first reader builds none
            assert rows.lessons([]).tuning is not None
        else:
            assert resumed(target, {"holdout": 0.4}).state_seq == target.read(0)[-1].seq
        with Lamar(target, holdout=0.4) as copy, Lamar(str(tmp_path / "source.db"), holdout=0.4) as original:
            numbered = {"store": "", "events": 0}  # a database numbers a namespace's events after its others'
            assert copy.stats() | numbered == original.stats() | numbered
    finally:
        source.close()
        target.close()
        if namespace is not None:
            drop_namespaces(request.getfixturevalue("postgres_url"), namespace)


@pytest.mark.parametrize("fold", ["off", "on"])
def test_a_copy_into_a_new_postgresql_namespace_folds_its_log_once(tmp_path: Path, counted_folds: list[int],
                                                                   postgres_url: str, fold: str) -> None:
    build(tmp_path / "source.db", replaced=False, holdout=0.3)
    namespace = unique_namespace("pg-copies")
    source = open_store(str(tmp_path / "source.db"))
    target = open_store(namespace_url(postgres_url, namespace, lamar_fold=fold))
    try:
        counted_folds[0] = 0
        result = transfer(source, target)
        # The check's fold is the state saved and, in the fold mode, the rows built: each event folded once.
        assert counted_folds[0] == result.copied
        assert resumed(target, {"holdout": 0.3}).state_seq == target.read(0)[-1].seq
        rows = folded_rows(target)
        assert rows is None or agents_tuning(target) == tuning_of(Policy(holdout=0.3))  # built, not left stale
        with Lamar(target, holdout=0.3) as copy, Lamar(str(tmp_path / "source.db"), holdout=0.3) as original:
            assert [copy.evidence(e.id) for e in copy.experiences()] == \
                [original.evidence(e.id) for e in original.experiences()]
            assert counted_folds[0] == result.copied  # its first engine resumed: it folded nothing again
    finally:
        source.close()
        target.close()
        drop_namespaces(postgres_url, namespace)


def agents_events(location: str) -> None:
    """Events an agent wrote to `location` and no state: written by a store, as an engine's writes before it saves
    one (the fold mode's rows stay unbuilt)."""
    from lamar.store.base import Event
    from lamar.store.memory import MemoryStore

    with Lamar(MemoryStore()) as agent:
        agent.report(agent.recall({"task": "t"}).episode_id, 1.0)
        agent.add(Experience("the deploy hangs", "check the migrations first"))
        events = [Event(e.kind, e.data, e.key, time=e.time) for e in agent.store.read(0)]
    store = open_store(location)
    try:
        store.append(events)
    finally:
        store.close()


@pytest.mark.parametrize(("validate", "append"), [(False, False), (False, True), (True, True)])
def test_every_copy_into_a_fold_mode_namespace_folds_its_log_once(tmp_path: Path, counted_folds: list[int],
                                                                  postgres_url: str, validate: bool,
                                                                  append: bool) -> None:
    # Unchecked, the copy's log is folded once to build the rows and once more for the state saved; appended, the
    # check numbered it from 1, the namespace otherwise, and the rows and the state each took a fold again.
    build(tmp_path / "source.db", replaced=False, holdout=0.3)
    namespace = unique_namespace("pgstore-copies")
    location = namespace_url(postgres_url, namespace, lamar_fold="on")
    if append:
        agents_events(location)
    source, target = open_store(str(tmp_path / "source.db")), open_store(location)
    try:
        counted_folds[0] = 0
        transfer(source, target, append=append, validate=validate)
        log = target.read(0)
        assert counted_folds[0] == len(log)
        assert agents_tuning(target) == tuning_of(Policy(holdout=0.3))  # the rows built, not left stale
        assert resumed(target, {"holdout": 0.3}).state_seq == log[-1].seq
        folded = Follower(target, Policy(holdout=0.3))
        folded.sync()
        with Lamar(target, holdout=0.3) as copy:
            counted_folds[0] = 0
            assert [copy.evidence(e.id) for e in copy.experiences()] == \
                [folded.lesson(e.id).evidence(folded.policy, folded.cache.n_active) for e in copy.experiences()]
            assert counted_folds[0] == 0  # its first engine read the rows the copy built: it folded nothing
    finally:
        source.close()
        target.close()
        drop_namespaces(postgres_url, namespace)


def test_an_agents_write_after_an_append_whose_rows_were_not_built_is_kept(
        tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The copy goes in numbered by the namespace, past the sequence the agents' writes take their seqs from; a
    # write that took a seq below the copy's would be refused as a key taken (here: a report "by another writer").
    import lamar.state.copied

    build(tmp_path / "source.db", replaced=False)
    namespace = unique_namespace("pgstore-append")
    location = namespace_url(postgres_url, namespace, lamar_fold="on")
    source = open_store(str(tmp_path / "source.db"))
    try:
        with Lamar(location) as agent:
            agent.add(Experience("the deploy hangs", "check the migrations first"))
            episode = agent.recall({}).episode_id
            # The state and rows are a cache the copy may fail to save (a busy store): none here.
            monkeypatch.setattr(lamar.state.copied, "save_copied", lambda *args: None)
            target = open_store(location)
            try:
                result = transfer(source, target, append=True)
            finally:
                target.close()
            agent.report(episode, 1.0)
            log = agent.store.read(0)
            assert [e.kind for e in log[-1:]] == ["outcome"] and len(log) == result.target_before + result.copied + 1
    finally:
        source.close()
        drop_namespaces(postgres_url, namespace)
