"""`Lamar.erase` through the Python API: bad input changes nothing, an engine opened before the
erasure drops the text when it next reads the log (and saves no copy of it), the what-if cache
and a checkpoint taken later hold none of it, and erasing without contexts leaves even the
per-slice evidence as it was."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from lamar import InvalidArgument, Lamar, Signal, StoreError, UnknownExperience
from lamar.experience import Experience, Scope
from lamar.store.memory import MemoryStore
from lamar.whatif.cache import cache_path
from tests.state.seam import folded

NAME = "Ottoline Brandquist"


def _filled(location: str, episodes: int = 120) -> tuple[Lamar, str]:
    lam = Lamar(location, k=2, seed=4)
    secret = lam.add(Experience(f"{NAME} reports a crash", f"ask {NAME} for the log", scope=Scope(task="t")))
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    rng = random.Random(4)
    for n in range(episodes):
        rec = lam.recall({"task": "t", "lang": "py" if n % 2 else "go"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    return lam, secret


def _files(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("args", [
    {"contexts": "yes"}, {"contexts": 1}, {"by": ""}, {"by": 5}, {"by": "a\x00b"}, {"reason": None},
    {"reason": "a\ud800"},
])
def test_bad_arguments_are_refused_and_change_nothing(tmp_path: Path, args: dict[str, object]) -> None:
    lam, secret = _filled(str(tmp_path / "s.db"), episodes=10)
    before = [e.to_dict() for e in lam.store.read()]
    with pytest.raises(InvalidArgument):
        lam.erase(secret, **args)  # type: ignore[arg-type]
    assert [e.to_dict() for e in lam.store.read()] == before
    lam.close()


def test_an_unknown_id_and_a_revival_are_refused_and_a_second_erasure_stores_nothing() -> None:
    lam, secret = _filled(":memory:", episodes=10)
    before = [e.to_dict() for e in lam.store.read()]
    for bad in ("exp_missing", 7, None):
        with pytest.raises(UnknownExperience):
            lam.erase(bad)  # type: ignore[arg-type]
    assert [e.to_dict() for e in lam.store.read()] == before
    erased = lam.erase(secret, by="ops")
    after = [e.to_dict() for e in lam.store.read()]
    assert after[-1]["kind"] == "erase" and after[-1]["data"]["by"] == "ops" and NAME not in str(after)
    assert lam.erase(secret).again and lam.erase(secret).events == 0
    with pytest.raises(InvalidArgument, match="without its contexts"):
        lam.erase(secret, contexts=True)
    with pytest.raises(InvalidArgument, match="was erased"):
        lam.revive(secret)
    assert [e.to_dict() for e in lam.store.read()] == after
    assert erased.episodes == () and erased.events == 1


def test_a_store_that_cannot_scrub_is_refused_before_anything_changes() -> None:
    class AppendOnly:
        def __init__(self) -> None:
            self._inner = MemoryStore()
            self.location = "append-only"

        def append(self, events):  # type: ignore[no-untyped-def]
            return self._inner.append(events)

        def read(self, after: int = 0):  # type: ignore[no-untyped-def]
            return self._inner.read(after)

        def close(self) -> None:
            pass

    lam = Lamar(AppendOnly(), seed=1)
    exp_id = lam.add(Experience(f"{NAME} asks", "answer"))
    with pytest.raises(StoreError, match="cannot rewrite its events"):
        lam.erase(exp_id)
    assert lam.get(exp_id).precondition == f"{NAME} asks" and len(lam.store.read()) == 1


def test_an_engine_opened_before_drops_the_text_and_saves_no_copy(tmp_path: Path) -> None:
    path = str(tmp_path / "s.json")
    lam, secret = _filled(path)
    other = Lamar(path, k=2, seed=5)
    assert other.get(secret).action == f"ask {NAME} for the log"
    before = {e.id: other.evidence(e.id) for e in other.experiences()}
    lam.erase(secret, contexts=True)
    assert other.get(secret).action == "[erased]"  # its next read folds the erase event: the log anew
    rec = other.recall({"task": "t", "lang": "py"})
    assert secret not in rec.eligible
    other.report(rec.episode_id, Signal.SHIPPED)
    folded(other).save()  # what a long-running writer does every so often
    other.close()
    lam.close()
    assert NAME.encode() not in _files(tmp_path)
    again = Lamar(path, k=2, seed=5)
    assert {e.id: again.evidence(e.id).verdict for e in again.experiences()} == {
        i: ev.verdict for i, ev in before.items()}
    again.close()


@pytest.mark.parametrize("name", ["s.db", "s.json"])
def test_the_whatif_cache_and_a_later_checkpoint_hold_no_context(tmp_path: Path, monkeypatch, name: str) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = str(tmp_path / "store" / name)
    lam = Lamar(path, k=2, seed=4)
    secret = lam.add(Experience("a crash", "ask for the log", scope=Scope(task="t")))
    rng = random.Random(4)
    for n in range(60):
        rec = lam.recall({"task": "t", "user": NAME if n % 2 else "plain"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    lam.whatif()
    cached = cache_path(path)
    assert cached is not None and NAME in cached.read_text()
    erased = lam.erase(secret, contexts=True, by="ops")
    assert len(erased.episodes) == 60 and not cached.exists()
    lam.whatif()  # folded anew from the scrubbed log
    assert not cached.exists() or NAME not in cached.read_text()
    assert lam.checkpoint() is True
    lam.close()
    assert NAME.encode() not in _files(tmp_path)


def test_without_contexts_even_the_slices_stay() -> None:
    lam, secret = _filled(":memory:")
    before = {e.id: lam.evidence(e.id) for e in lam.experiences()}
    assert any(ev.slices for ev in before.values())
    lam.erase(secret)
    assert {e.id: lam.evidence(e.id) for e in lam.experiences()} == before
    assert all(lam.episode(e.data["id"]).context for e in lam.store.read() if e.kind == "episode")



@pytest.mark.parametrize("retired", [False, True], ids=["active", "retired first"])
def test_a_reader_holding_the_journal_fails_the_erasure_which_runs_again_once_it_is_gone(tmp_path: Path,
                                                                                         retired: bool) -> None:
    import sqlite3

    path = tmp_path / "s.db"
    lam = Lamar(str(path), seed=1, k=1)
    secret = lam.add(Experience(f"{NAME} asks", "answer"))
    for _ in range(5):
        lam.report(lam.recall({}).episode_id, Signal.SHIPPED)
    if retired:  # a retired lesson whose text was scrubbed is not yet erased: its audit event is missing
        lam.retire(secret)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM events").fetchone()  # a read transaction pins the write-ahead log
    lam.store._timeout = 0.2  # type: ignore[attr-defined]  # not 30 s of waiting in a test
    with pytest.raises(StoreError, match="was not erased: .*no one reads it") as refused:
        lam.erase(secret)
    # Refused before anything was scrubbed: the message neither says it was nor asks for a scrub the API lacks.
    assert str(refused.value) == (f"lesson {secret} was not erased: {path}: readers kept its write-ahead log "
                                  f"({path}-wal) from being emptied; wait until no one reads it; then erase it again")
    # Refused before its event: nothing is erased, and the lesson reads as it did.
    assert lam.get(secret).action == "answer" and not any(e.kind == "erase" for e in lam.store.read())
    reader.execute("COMMIT")
    reader.close()
    assert lam.erase(secret).events == 1  # the event, then its one experience event scrubbed
    assert [e.data["id"] for e in lam.store.read() if e.kind == "erase"] == [secret]
    assert lam.erase(secret).again  # the cleanup once more, and no second event
    assert [e.data["id"] for e in lam.store.read() if e.kind == "erase"] == [secret]
    lam.close()
    assert NAME.encode() not in _files(tmp_path)


@pytest.mark.parametrize("name", ["s.json", "s.db"])
def test_every_version_of_an_edited_lesson_loses_its_text(tmp_path: Path, name: str) -> None:
    path = str(tmp_path / name)
    lam, secret = _filled(path, episodes=40)
    lam.edit(secret, action=f"phone {NAME} about the log")  # a second version, its own event
    lam.edit(secret, rationale=f"{NAME} keeps the logs", evidence="keep")
    for _ in range(10):
        rec = lam.recall({"task": "t", "lang": "py"})
        lam.report(rec.episode_id, Signal.SHIPPED)
    before = {e.id: lam.evidence(e.id) for e in lam.experiences()}
    lam.erase(secret)
    erased = lam.get(secret)
    assert (erased.action, erased.rationale, erased.version) == ("[erased]", "[erased]", 3)
    assert {e.id: lam.evidence(e.id) for e in lam.experiences()} == before
    lam.close()
    assert NAME.encode() not in _files(tmp_path)
    again = Lamar(path, k=2, seed=4)  # the scrubbed log folds to the same lesson, version and evidence
    assert again.get(secret) == erased
    assert {e.id: again.evidence(e.id) for e in again.experiences()} == before
    again.close()


@pytest.mark.parametrize(("source", "kept"), [("agent", "agent"), ("mined", "mined"), ("rules", "rules"),
                                              ("manual", "manual"), (f"pasted by {NAME}", None)])
def test_an_erased_lesson_keeps_the_source_lamar_named_and_drops_any_other(source: str, kept: str | None) -> None:
    lam = Lamar()
    exp_id = lam.add(Experience(f"{NAME} reports a crash", "ask for the log", provenance={"source": source}))
    lam.erase(exp_id)
    provenance = lam.get(exp_id).provenance
    assert provenance.get("source") == kept
    assert NAME not in str(provenance)


CUSTOMER = "Jane Doe"


def _scoped(path: str, checkpoint: bool) -> tuple[Lamar, str]:
    """A lesson scoped to a customer by name (and narrowed to one of its slices), beside others."""
    from lamar.store.base import Event

    lam = Lamar(path, k=2, seed=4)
    secret = lam.add(Experience("the deploy fails", "roll back first", scope=Scope(project="acme-for-jane-doe")))
    lam.add(Experience("the build fails", "clear the cache"))
    lam.add(Experience("a test flakes", "run it again", scope=Scope(customer="Bo")))
    rng = random.Random(4)
    for n in range(120):
        if n == 40:  # a narrowing, as sleep applies it: the lesson continues the slice's evidence
            lam.store.append([Event("scope", {"id": secret, "key": "customer", "value": CUSTOMER,
                                        "reason": f"sleep narrow: narrow the scope to customer={CUSTOMER}"})])
        if n == 80 and checkpoint:
            assert lam.checkpoint() is True  # a snapshot holding the scope, its index and audit trail
        rec = lam.recall({"project": "acme-for-jane-doe", "customer": CUSTOMER if n % 2 else "Bo"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    assert lam.get(secret).scope == Scope(project="acme-for-jane-doe", customer=CUSTOMER)
    return lam, secret


def _figures(lam: Lamar) -> dict[str, tuple[object, ...]]:
    return {e.id: (ev.verdict, ev.lift, ev.lower, ev.upper, ev.randomized, ev.injected)
            for e in lam.experiences() for ev in [lam.evidence(e.id)]}


@pytest.mark.parametrize("name", ["s.db", "s.json"])
@pytest.mark.parametrize("contexts", [False, True], ids=["text", "contexts"])
def test_the_scope_values_of_an_erased_lesson_are_erased_too(tmp_path: Path, name: str, contexts: bool) -> None:
    path = str(tmp_path / "store" / name)
    lam, secret = _scoped(path, checkpoint=name == "s.db")
    before = _figures(lam)
    lam.erase(secret, contexts=contexts)
    erased = lam.get(secret)
    assert dict(erased.scope) == {"project": "[erased]", "customer": "[erased]"}
    assert dict(erased.provenance["narrowed_from"]) == {"project": "[erased]"}
    assert all("acme" not in text and CUSTOMER not in text for _, text in lam.history(secret).trail)
    after = _figures(lam)
    assert after == before  # the narrowed lesson still continues its slice's evidence, contexts blanked or not
    log = lam.store.read()
    lam.close()
    if name == "s.db":  # the checkpoint replaced the events before it
        [saved] = [e.data for e in log if e.kind == "snapshot"]
        [row] = [row for row in saved["lessons"] if row["experience"]["id"] == secret]
        assert (row["experience"]["scope"], row["experience"]["provenance"]["narrowed_from"]) == (
            dict(erased.scope), {"project": "[erased]"})
        assert "acme" not in str(saved["index"]) and "acme" not in str(row["history"])
    else:
        [added] = [e.data for e in log if e.kind == "experience" and e.data["id"] == secret]
        [narrowed] = [e.data for e in log if e.kind == "scope"]
        assert added["scope"] == {"project": "[erased]"} and narrowed["reason"] == "[erased]"
        # Without --contexts the episodes' contexts keep the name, and so does the scope event
        # (its value picks the slice the narrowed lesson continues); with them, nothing does.
        assert narrowed["value"] == ("[erased]" if contexts else CUSTOMER)
        # With them, the event keeps the slice it continued (numbers only): no context names it now.
        assert ("continued" in narrowed) is contexts
    assert (CUSTOMER.encode() in _files(tmp_path)) is not contexts
    again = Lamar(path, k=2, seed=4)  # the scrubbed log folds to the same lesson and evidence
    assert again.get(secret) == erased
    assert _figures(again) == after
    again.close()


def test_erasing_again_finishes_a_cleanup_that_readers_failed_and_writes_no_second_event(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "s.db"
    lam, secret = _filled(str(path), episodes=10)
    other = Lamar(str(path), k=2, seed=5)  # folded the text before the erase
    scrub = lam.store.scrub  # type: ignore[attr-defined]
    reader = sqlite3.connect(path, isolation_level=None)

    def with_a_save_then_a_reader(events: Any) -> int:
        if not events:  # the saved state is dropped before the erase event: another engine saves one again
            done: int = scrub(events)
            other.store.save_state(other.store.read()[-1].seq, json.dumps({"held": NAME}))  # type: ignore[attr-defined]
            return done
        reader.execute("BEGIN")  # behind the event, a reader that stays: the scrub cannot compact
        reader.execute("SELECT count(*) FROM events").fetchone()
        lam.store.scrub = scrub  # type: ignore[attr-defined]
        return scrub(events)

    lam.store.scrub = with_a_save_then_a_reader  # type: ignore[attr-defined]
    lam.store._timeout = 0.2  # type: ignore[attr-defined]  # not 30 s of waiting in a test
    with pytest.raises(StoreError, match="is erased .*erase again"):
        lam.erase(secret, by="ops", reason="a name")
    assert NAME.encode() in _files(tmp_path)  # the saved state's pages, still in the write-ahead log
    reader.execute("COMMIT")
    reader.close()
    done = lam.erase(secret)
    assert (done.again, done.by, done.reason) == (True, "ops", "a name")
    assert [e.data["id"] for e in lam.store.read() if e.kind == "erase"] == [secret]
    assert lam.get(secret).action == "[erased]"
    other.close()
    lam.close()
    assert NAME.encode() not in _files(tmp_path)
