"""export / import between backends, and `lamar.store.transfer` underneath: no event lost or changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import DuplicateReport, EventConflict, Experience, InvalidEvent, Lamar, StoreError
from lamar.conformance_erase import erase_stopped_behind_its_event
from lamar.store import Event, MemoryStore, open_store
from lamar.store.transfer import transfer


def records(path: Path | str) -> list[tuple[object, ...]]:
    store = open_store(path)
    try:
        return [(e.seq, e.kind, e.key, e.data, e.time) for e in store.read()]
    finally:
        store.close()


def test_export_import_round_trip_keeps_every_event(lamar_cli, run_cli, json_store, tmp_path, strict_json):
    original = records(json_store)
    exported = lamar_cli("export", "--store", json_store, "--out", tmp_path / "moved.db", "--json")
    assert exported.returncode == 0, exported.stderr
    assert strict_json(exported.stdout)["copied"] == len(original) == 490
    assert records(tmp_path / "moved.db") == original  # seq, kind, key, data and time, in order

    imported = lamar_cli("import", tmp_path / "moved.db", "--store", tmp_path / "back.json")
    assert imported.returncode == 0, imported.stderr
    assert f"copied {len(original)} events" in imported.stdout and "(verified)" in imported.stdout
    assert records(tmp_path / "back.json") == original
    # The engine folds the copy to the same beliefs.
    before = Lamar(str(json_store))
    after = Lamar(str(tmp_path / "back.json"))
    assert after.stats() | {"store": ""} == before.stats() | {"store": ""}
    for exp in before.experiences():
        assert after.evidence(exp.id) == before.evidence(exp.id)


def test_export_refuses_a_non_empty_target_unless_appending(run_cli, sqlite_store, tmp_path):
    target = tmp_path / "target.json"
    first = Lamar(str(target))
    first.add(Experience("already here", "keep it"))
    first.close()
    before = target.read_bytes()
    refused = run_cli("export", "--store", sqlite_store, "--out", target)
    assert refused.returncode == 1 and "already holds 1 event:" in refused.stderr and "--append" in refused.stderr
    assert target.read_bytes() == before
    appended = run_cli("export", "--store", sqlite_store, "--out", target, "--append")
    assert appended.returncode == 0, appended.stderr
    copied = records(target)
    assert len(copied) == 1 + len(records(sqlite_store))
    assert [r[1:] for r in copied[1:]] == [r[1:] for r in records(sqlite_store)]  # after the old event, in order


def test_a_compacted_store_is_never_appended_after_other_events(run_cli, tmp_path):
    # Its snapshot stands for the log before it: after another store's events it would replace
    # their state, and the lessons and episodes already there would no longer be found.
    compacted = tmp_path / "compacted.json"
    lam = Lamar(str(compacted), k=2, seed=3)
    lam.add(Experience("the build fails", "clear the cache"))
    for _ in range(60):
        lam.report(lam.recall({"project": "demo"}).episode_id, 1.0)
    report = lam.sleep(keep_last=10)
    lam.apply(report, only=[p.id for p in report.of_kind("compact")])
    lam.close()
    assert records(compacted)[0][1] == "snapshot"
    target = tmp_path / "target.db"
    with Lamar(str(target)) as lam:
        lam.add(Experience("tests flake", "rerun them alone"))
    before = records(target)
    out = run_cli("import", compacted, "--store", target, "--append")
    assert out.returncode in (1, 2) and "was compacted" in out.stderr and "empty store" in out.stderr
    assert records(target) == before
    # Into an empty store it copies whole, and the other way round it appends.
    assert run_cli("import", compacted, "--store", tmp_path / "empty.db").returncode == 0
    assert run_cli("import", target, "--store", compacted, "--append").returncode == 0
    with Lamar(str(compacted)) as lam:
        assert {e.precondition for e in lam.experiences()} == {"the build fails", "tests flake"}


@pytest.mark.parametrize("target", ["moved.json", "moved.db", ":memory:"])
def test_a_copy_of_a_compacted_store_keeps_its_events_and_numbers_them_from_one(tmp_path, target):
    source = tmp_path / "compacted.db"
    lam = Lamar(str(source), k=1, seed=3)
    lam.add(Experience("the build fails", "clear the cache"))
    for _ in range(8):
        lam.report(lam.recall({}).episode_id, 1.0)
    assert lam.checkpoint()
    lam.report(lam.recall({}).episode_id, 0.5)
    lam.close()
    original = records(source)
    assert original[0][1] == "snapshot" and original[0][0] > 1
    copy = open_store(target if target == ":memory:" else str(tmp_path / target))
    transfer(open_store(str(source)), copy)
    moved = [(e.seq, e.kind, e.key, e.data, e.time) for e in copy.read()]
    assert [r[1:] for r in moved] == [r[1:] for r in original]  # every event, in order, as it was
    assert [r[0] for r in moved] == list(range(1, len(original) + 1))  # numbered anew from 1
    with Lamar(str(source)) as before, Lamar(copy) as after:
        assert before.stats()["events"] == original[-1][0] != after.stats()["events"] == len(original)
        assert [after.evidence(e.id) for e in after.experiences()] == [
            before.evidence(e.id) for e in before.experiences()]
        after.report(after.recall({}).episode_id, 1.0)
        assert after.stats()["events"] == len(original) + 2  # later events go on from the copy's numbers


def test_a_copy_into_a_new_postgres_namespace_is_numbered_from_1_and_its_agents_go_on_after(tmp_path, postgres_url):
    # One sequence numbers the fold mode's writes in every namespace; a copy into a new one is numbered as a
    # new file numbers it, and its agents' events then take the sequence's numbers, after the copy's.
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    source = tmp_path / "source.db"
    with Lamar(str(source), k=1, seed=3) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        for _ in range(4):
            lam.report(lam.recall({}).episode_id, 1.0)
    original = records(source)
    other, fresh = unique_namespace("pg-other"), unique_namespace("pg-copy")
    try:
        with Lamar(namespace_url(postgres_url, other)) as lam:
            lam.add(Experience("tests flake", "rerun them alone"))
        copy = open_store(namespace_url(postgres_url, fresh))
        transfer(open_store(str(source)), copy)
        moved = [(e.seq, e.kind, e.key, e.data, e.time) for e in copy.read()]
        assert [r[1:] for r in moved] == [r[1:] for r in original]  # every event, in order, as it was
        assert [r[0] for r in moved] == list(range(1, len(original) + 1))
        with Lamar(copy) as after:
            assert after.stats()["events"] == len(original)
            after.report(after.recall({}).episode_id, 1.0)
            numbers = [e.seq for e in copy.read()]
            assert numbers == sorted(numbers) and len(numbers) == len(original) + 2  # after the copy's
    finally:
        drop_namespaces(postgres_url, other, fresh)


def test_import_into_a_store_that_shares_keys_writes_nothing(run_cli, store):
    twin = store.with_name("twin" + store.suffix)
    twin.write_bytes(store.read_bytes())
    before = records(store)
    out = run_cli("import", twin, "--store", store, "--append")
    assert out.returncode == 2 and "already in" in out.stderr
    assert records(store) == before


def test_a_copy_of_an_empty_store_is_refused_and_creates_nothing(run_cli, tmp_path):
    empty = tmp_path / "empty.db"
    open_store(empty).close()
    for command in (("import", empty, "--store", tmp_path / "new.json"),
                    ("export", "--store", empty, "--out", tmp_path / "out.db")):
        out = run_cli(*command)
        assert out.returncode == 1 and "holds no events" in out.stderr, out.stderr
    assert not (tmp_path / "new.json").exists() and not (tmp_path / "out.db").exists()


def test_a_key_repeated_within_an_import_is_named(run_cli, json_store, tmp_path):
    twin = tmp_path / "twin.json"
    twin.write_bytes(json_store.read_bytes())
    out = run_cli("import", json_store, "--store", twin, "--append")
    assert out.returncode == 2 and "None" not in out.stderr and "'experience:exp_" in out.stderr, out.stderr


def test_import_usage_errors(run_cli, json_store, tmp_path):
    missing = run_cli("import", tmp_path / "absent.json", "--store", json_store)
    assert missing.returncode == 1 and "nothing to import" in missing.stderr
    itself = run_cli("import", json_store, "--store", json_store)
    assert itself.returncode == 1 and "is the store itself" in itself.stderr


def test_transfer_into_memory_and_back_with_batches():
    source = MemoryStore()
    source.append([Event("experience", {"id": f"e{i}", "precondition": "p", "action": "a"}, key=f"k{i}")
                   for i in range(7)])
    middle = MemoryStore()
    result = transfer(source, middle, batch_size=3)
    assert result.copied == 7 and result.target_before == 0
    assert [(e.seq, e.key, e.data, e.time) for e in middle.read()] == [
        (e.seq, e.key, e.data, e.time) for e in source.read()]


def test_transfer_refuses_non_empty_target_and_itself():
    source, target = MemoryStore(), MemoryStore()
    source.append([Event("status", {"id": "x", "status": "retired"}, key="a")])
    target.append([Event("status", {"id": "y", "status": "retired"}, key="b")])
    with pytest.raises(StoreError, match="already holds 1 events"):
        transfer(source, target)
    assert len(target.read()) == 1
    with pytest.raises(StoreError, match="into itself"):
        transfer(source, source)
    assert transfer(source, target, append=True).target_before == 1
    with pytest.raises(EventConflict):  # the same keys again: refused whole
        transfer(source, target, append=True)
    assert [e.key for e in target.read()] == ["b", "a"]


def test_transfer_detects_a_copy_that_differs():
    class Lossy(MemoryStore):
        def append(self, events):  # a broken backend that drops event data
            return super().append([Event(e.kind, {}, key=e.key, time=e.time) for e in events])

    source = MemoryStore()
    source.append([Event("status", {"id": "x", "status": "retired"})])
    with pytest.raises(StoreError, match="is not in the target as the source holds it"):
        transfer(source, Lossy())


def test_export_to_postgres_and_back(run_cli, json_store, tmp_path, postgres_url):
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS lamar_cli_test CASCADE")
        conn.execute("CREATE SCHEMA lamar_cli_test")
    url = f"{postgres_url}?options=-csearch_path%3Dlamar_cli_test"  # a schema of its own, dropped after
    try:
        out = run_cli("export", "--store", json_store, "--out", url)
        assert out.returncode == 0, out.stderr
        again = run_cli("export", "--store", json_store, "--out", url)  # a namespace, not a file, to choose anew
        assert again.returncode == 1 and "choose a namespace that holds none (lamar_namespace=NAME in the URL)" \
            in again.stderr and "new file" not in again.stderr, again.stderr
        back = run_cli("import", url, "--store", tmp_path / "back.db")
        assert back.returncode == 0, back.stderr
        assert records(tmp_path / "back.db") == records(json_store)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS lamar_cli_test CASCADE")


def test_an_empty_file_to_import_is_a_usage_error(run_cli, json_store):
    # The empty path names the current folder: it was a store error (exit 2) about ".".
    before = json_store.read_bytes()
    out = run_cli("import", "", "--store", json_store, "--append")
    assert out.returncode == 1 and "FILE is empty: name the store to import from" in out.stderr, out.stderr
    assert json_store.read_bytes() == before


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_an_outcome_without_its_key_is_refused_by_import(run_cli, tmp_path, suffix):
    # An engine resumed from a saved state finds a reported episode's outcomes by key: without
    # one, the episode looks unreported to it and a second report is counted.
    lam = Lamar(str(tmp_path / "made.json"))
    lam.add(Experience("when the build fails", "clear the cache"))
    episode = lam.recall({"project": "p"}).episode_id
    made = list(lam.store.read())
    lam.close()
    outcome = {"episode": episode, "reward": -1.0, "signal": "reverted", "replace": False}
    for key, name in ((None, "keyless.json"), (f"outcome:{episode}", "keyed.json")):
        crafted = open_store(tmp_path / name)
        crafted.append([Event(e.kind, e.data, e.key, time=e.time) for e in made] + [Event("outcome", outcome, key)])
        crafted.close()
    target = tmp_path / f"target{suffix}"
    refused = run_cli("import", tmp_path / "keyless.json", "--store", target)
    assert refused.returncode == 1 and "event #3 ('outcome')" in refused.stderr, refused.stderr
    assert "give it that key" in refused.stderr and f"'outcome:{episode}'" in refused.stderr
    assert not target.exists()
    assert run_cli("import", tmp_path / "keyed.json", "--store", target).returncode == 0
    writer = Lamar(str(target))
    writer.recall({"project": "p"})  # a write, so that closing saves the folded state
    writer.close()
    resumed = Lamar(str(target))
    with pytest.raises(DuplicateReport):
        resumed.report(episode, 1.0)
    resumed.close()


@pytest.mark.parametrize(("source", "target"), [("db", "json"), ("json", "db")])
def test_an_erase_whose_scrub_was_stopped_does_not_carry_the_text_into_the_copy(run_cli, tmp_path, source, target):
    # The erase event is stored and its scrub pending: the source's next writer scrubs it, but a
    # copy that nobody writes to would keep the text for good.
    lam = Lamar(str(tmp_path / f"src.{source}"))
    exp_id = lam.add(Experience("when the zebracabinet opens", "read the zebracabinet code aloud"))
    lam.recall({"project": "p"})
    erase_stopped_behind_its_event(lam, exp_id)
    lam.close()
    assert b"zebracabinet" in (tmp_path / f"src.{source}").read_bytes()
    out = tmp_path / "copy"
    out.mkdir()
    assert run_cli("export", "--store", tmp_path / f"src.{source}", "--out", out / f"moved.{target}").returncode == 0
    assert [p.name for p in out.iterdir() if b"zebracabinet" in p.read_bytes()] == []
    copy = Lamar(str(out / f"moved.{target}"))
    assert copy.get(exp_id).action == "[erased]" and copy.stats()["experiences"] == 1
    copy.close()


def test_transfer_refuses_an_episode_keyed_otherwise_than_recall_keys_it():
    source = MemoryStore()
    episode = {"id": "ep_1", "context": {}, "eligible": [], "injected": [], "held_out": [], "p": {}}
    source.append([Event("episode", episode, key="ep_1")])
    with pytest.raises(InvalidEvent, match="event #1 \\('episode'\\).*not 'episode:ep_1'"):
        transfer(source, MemoryStore())


def test_a_copy_says_what_an_agent_wrote_to_the_source_while_it_ran(run_cli, tmp_path, monkeypatch):
    # A team moved its SQLite store to PostgreSQL while its agents still ran: the reports written
    # after the export had read the file stayed in the file, and nothing said so.
    import lamar.store.transfer as transfer_module

    source = tmp_path / "proto.db"
    with Lamar(str(source)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        lam.report(lam.recall({}).episode_id, "shipped")
    agent = Lamar(str(source))
    verify = transfer_module._verify

    def agent_reports_meanwhile(*args, **kwargs):
        agent.report(agent.recall({}).episode_id, "shipped")  # the agent goes on, between read and check
        return verify(*args, **kwargs)

    monkeypatch.setattr(transfer_module, "_verify", agent_reports_meanwhile)
    result = transfer(open_store(source), open_store(tmp_path / "copy.db"))
    assert (result.copied, result.written_since) == (3, 2)  # the episode and its outcome
    moved = run_cli("export", "--store", source, "--out", tmp_path / "moved.db")
    # Not verified as the store, nor status 0: a script that then points its agents at the copy, or deletes
    # the source, would lose what was written meanwhile.
    assert moved.returncode == 2, moved.stderr
    assert moved.stdout == f"copied 5 events from {source} to {tmp_path / 'moved.db'}\n"
    assert (moved.stderr.startswith("lamar: error: 2 events written to") and "are not in" in moved.stderr
            and "first stop the agents" in moved.stderr and "delete" in moved.stderr), moved.stderr
    as_json = run_cli("export", "--store", source, "--out", tmp_path / "moved.json", "--json")
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["written_since"] == 2, as_json.stderr
    monkeypatch.setattr(transfer_module, "_verify", verify)
    agent.close()
    quiet = run_cli("export", "--store", source, "--out", tmp_path / "quiet.db")
    assert quiet.returncode == 0 and "note:" not in quiet.stderr, quiet.stderr


def test_an_append_that_missed_events_never_advises_deleting_the_target(run_cli, tmp_path, monkeypatch):
    # The target held events of its own before --append: deleting it to copy again would lose them.
    import lamar.store.transfer as transfer_module

    source, team = tmp_path / "proto.db", tmp_path / "team.db"
    for where, words in ((source, "the build fails"), (team, "the deploy hangs")):
        with Lamar(str(where)) as lam:
            lam.add(Experience(words, "clear the cache"))
    agent = Lamar(str(source))
    verify = transfer_module._verify

    def agent_reports_meanwhile(*args, **kwargs):
        agent.report(agent.recall({}).episode_id, "shipped")
        return verify(*args, **kwargs)

    monkeypatch.setattr(transfer_module, "_verify", agent_reports_meanwhile)
    merged = run_cli("import", source, "--store", team, "--append")
    agent.close()
    assert merged.returncode == 2, merged.stderr
    assert "2 events written to" in merged.stderr and "first stop the agents" in merged.stderr, merged.stderr
    assert f"delete {team}" not in merged.stderr, merged.stderr
    assert "held 1 event of its own" in merged.stderr and "put back a copy" in merged.stderr, merged.stderr


@pytest.mark.parametrize("target_name", ["target.db", "target.json"])
def test_appending_a_store_that_shares_events_with_the_target_says_what_to_do(run_cli, tmp_path, target_name):
    # It said only "experience ... is already in ...": a team that imported their prototype twice, or a copy
    # of their shared store, was left to guess.
    source = tmp_path / "proto.db"
    with Lamar(str(source)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    target = tmp_path / target_name
    assert run_cli("import", source, "--store", target).returncode == 0
    before = records(target)
    again = run_cli("import", source, "--store", target, "--append")
    assert again.returncode in (1, 2) and "nothing was written" in again.stderr, again.stderr
    assert "imported there before, or both stores began as one copy" in again.stderr
    assert "import into a new store (without --append)" in again.stderr and "lamar add --from" in again.stderr
    assert records(target) == before
