"""The cached fold of a file store: the same episodes as a fold of the whole log, after every kind of
write, and never trusted once it no longer describes the log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.store import decode, open_store
from lamar.store.base import TextStore
from lamar.whatif import cache
from lamar.whatif.log import read_log


def _same(lam: Lamar) -> None:
    fresh = read_log(lam.store, cache=False)
    cached = read_log(lam.store)
    assert cached == fresh
    assert read_log(lam.store, scope={"task": "flaky"}) == read_log(lam.store, scope={"task": "flaky"}, cache=False)


def _play(lam: Lamar, n: int, task: str = "flaky") -> list[str]:
    ids = []
    for i in range(n):
        rec = lam.recall({"task": task})
        lam.report(rec.episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
        ids.append(rec.episode_id)
    return ids


@pytest.mark.parametrize("name", ["s.db", "s.json"])
def test_the_cache_follows_every_kind_of_write(tmp_path: Path, name: str) -> None:
    cache.SAVE_AFTER = 1  # save after every read, so each step below starts from the cache
    try:
        lam = Lamar(str(tmp_path / name), k=2, seed=3)
        for action in ("pin the seeds", "mock the clock", "retry the network"):
            lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
        ids = _play(lam, 20)
        _same(lam)
        path = cache.cache_path(lam.store.location)
        assert path is not None and path.exists()
        ids += _play(lam, 5, "deploy")
        _same(lam)
        lam.report(ids[0], Signal.REVERTED, replace=True)
        lam.expire(lam.recall({"task": "flaky"}).episode_id)
        pending = lam.recall({"task": "flaky"}).episode_id
        _same(lam)
        lam.report(pending, 0.4)
        _same(lam)
        assert lam.checkpoint()  # the log is rewritten: the cache's last event is gone
        _same(lam)
        _play(lam, 3)
        _same(lam)
        assert len(read_log(lam.store).ids) == 29  # 20 + 5 + the late report + 3; the expired one has no reward
        lam.close()
    finally:
        cache.SAVE_AFTER = 1000


def test_a_cache_of_another_log_at_the_same_path_is_not_trusted(tmp_path: Path) -> None:
    cache.SAVE_AFTER = 1
    try:
        first, second = tmp_path / "a.db", tmp_path / "b.db"
        for path, seed in ((first, 1), (second, 2)):
            with Lamar(str(path), k=2, seed=seed) as lam:
                lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
                _play(lam, 12 if seed == 1 else 15)
        store = open_store(str(first))
        assert len(read_log(store).ids) == 12  # cached
        store.close()
        shutil.copy(second, first)  # another log under the same name, as long or longer
        store = open_store(str(first))
        assert read_log(store) == read_log(store, cache=False)
        assert len(read_log(store).ids) == 15
        store.close()
    finally:
        cache.SAVE_AFTER = 1000


def test_a_torn_cache_is_ignored(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "s.json"), k=2, seed=1) as lam:
        lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
        _play(lam, 6)
        read_log(lam.store)
        path = cache.cache_path(lam.store.location)
        assert path is not None
        path.write_text(path.read_text()[:50])
        assert read_log(lam.store) == read_log(lam.store, cache=False)
        assert cache.Folded.from_json(path.read_text(), str(tmp_path / "s.json")) is not None  # replaced


@pytest.mark.parametrize("times", ["not base64!", "AAAA", 7])
def test_a_cache_whose_times_do_not_unpack_is_ignored_and_replaced(tmp_path: Path, times: object) -> None:
    with Lamar(str(tmp_path / "s.json"), k=2, seed=1) as lam:
        lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
        _play(lam, 6)
        fresh = read_log(lam.store, cache=False)
        assert read_log(lam.store) == fresh  # written, and read back whole: every time exact
        path = cache.cache_path(lam.store.location)
        assert path is not None
        data = json.loads(path.read_text())
        data["times"] = times  # not base64, not a whole number of doubles, not a string
        path.write_text(json.dumps(data))
        assert read_log(lam.store) == fresh
        assert cache.Folded.from_json(path.read_text(), data["store"]) is not None  # folded again and saved


def test_a_store_is_cached_by_its_path_or_its_url_and_memory_never() -> None:
    assert cache.cache_path(":memory:") is None
    one, other = (cache.cache_path(f"postgresql://postgres@127.0.0.1/test?lamar_namespace={n}") for n in "ab")
    assert one is not None and other is not None and one != other
    assert cache.cache_path("s.db") == cache.cache_path(str(Path("s.db").absolute()))


def test_a_fold_past_its_memory_of_slates_files_them_as_before(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=5)
    for task in ("flaky", "deploy"):
        for action in ("pin the seeds", "mock the clock", "retry the network"):
            lam.add(Experience(f"a {task} task", action, scope=Scope(task=task)))
    for task in ("flaky", "deploy", "flaky", "deploy"):
        _play(lam, 15, task)
    remembered = read_log(lam.store, cache=False)
    monkeypatch.setattr(cache, "SEEN_LIMIT", 1)
    assert read_log(lam.store, cache=False) == remembered
    assert len(remembered.slates) > 2  # more slates than the fold could remember
    lam.close()


def _columns(folded: cache.Folded) -> tuple[object, ...]:
    return (folded.seq, folded.ids, folded.times, folded.context, folded.slate, folded.reward, folded.signal,
            folded.sealed, folded.alive, folded.contexts, [s.key for s in folded.slates], folded.randomized)


def _by_events(store: object) -> cache.Folded:
    """The fold of the log's decoded events, one by one: what the text fold must equal."""
    folded = cache.Folded()
    for event in store.read(0):  # type: ignore[attr-defined]
        folded.fold(event)
    return folded


@pytest.mark.parametrize("limit", [4096, 2, 0])
def test_a_fold_of_the_stored_texts_equals_the_fold_of_the_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   limit: int) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=2, seed=4)
    for action in ("pin the seeds", "mock the clock", "retry the network"):
        lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
    ids = _play(lam, 30)
    for n in range(5):  # contexts that never repeat: a session id in each
        lam.report(lam.recall({"task": "flaky", "session": f"s{n}"}).episode_id, 0.25 * n - 0.5)
    lam.report(ids[0], Signal.REVERTED, replace=True)
    lam.expire(lam.recall({"task": "flaky"}).episode_id)
    lam.recall({"task": "flaky"})  # pending
    assert lam.checkpoint()  # a snapshot event first, then the log since
    later = _play(lam, 10)
    lam.report(later[0], Signal.ACCEPTED, replace=True)
    monkeypatch.setattr(decode, "MEMO_LIMIT", limit)  # the limit of the fold's memory of texts (`Repeats`)
    store = lam.store
    assert isinstance(store, TextStore)
    decoded: list[int] = []
    real = store.decoded
    monkeypatch.setattr(store, "decoded", lambda row, *rest: decoded.append(row.seq) or real(row, *rest))
    texts = cache.fold_store(store, cache=False)
    read_whole = len(decoded)
    assert _columns(texts) == _columns(_by_events(store))
    assert (len(texts.ids), texts.reward.count(None), len(texts.contexts)) == (47, 2, 6)
    rows = len(store.read_texts(0))
    # Remembered texts are filed without decoding: with no memory, every one is decoded.
    assert read_whole == rows if limit == 0 else read_whole < rows / 2, (read_whole, rows)
    lam.close()


def test_the_first_read_refuses_a_hand_edit_that_kept_its_checksum(tmp_path: Path) -> None:
    import sqlite3

    from lamar import CorruptStore
    from lamar.store.sqlite_checks import event_crc

    location = tmp_path / "s.db"
    with Lamar(str(location), k=2, seed=1) as lam:
        lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
        _play(lam, 6)
    db = sqlite3.connect(location)
    seq, kind, key, at, data = db.execute(
        "SELECT seq, kind, key, time, data FROM events WHERE kind = 'outcome' ORDER BY seq DESC LIMIT 1").fetchone()
    forged = data.replace('"reward":1.0', '"reward":2.0').replace('"reward":-1.0', '"reward":2.0')
    assert forged != data
    db.execute("UPDATE events SET data = ?, crc = ? WHERE seq = ?", (forged, event_crc(kind, key, at, forged), seq))
    db.commit()
    db.close()
    store = open_store(str(location))
    with pytest.raises(CorruptStore, match=f"event {seq} .*not a number in"):
        cache.fold_store(store, cache=False)
    store.close()


def test_a_store_named_through_a_link_has_the_cache_of_its_target(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # An erase through one path removes the cached fold (it may hold the blanked contexts) that
    # `lamar whatif` through the other wrote.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    target = tmp_path / "real" / "s.json"
    target.parent.mkdir()
    target.write_text("")
    (tmp_path / "link.json").symlink_to(Path("real") / "s.json")
    assert cache.cache_path(str(tmp_path / "link.json")) == cache.cache_path(str(target))


@pytest.mark.parametrize("name", ["s.db", "s.json"])
def test_a_cache_file_this_process_read_or_wrote_is_not_parsed_again_until_it_changes(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(str(tmp_path / name), k=2, seed=3)
    lam.add(Experience("a test is flaky", "pin the seeds", scope=Scope(task="flaky")))
    _play(lam, 20)
    parse = cache.Folded.from_json
    parsed: list[str] = []
    monkeypatch.setattr(cache.Folded, "from_json",
                        staticmethod(lambda text, where: parsed.append(where) or parse(text, where)))
    first = read_log(lam.store)  # folds the log and writes the cache file
    assert read_log(lam.store) == first and parsed == []  # the fold written, kept: the file is not parsed again
    _play(lam, 3)
    _same(lam)  # the kept fold and the events since
    assert parsed == []
    path = cache.cache_path(lam.store.location)
    assert path is not None
    text = path.read_text(encoding="utf-8")
    path.unlink()
    path.write_text(text, encoding="utf-8")  # another process's file, with the same text
    _same(lam)
    assert len(parsed) == 1
    lam.close()


@pytest.mark.parametrize("name", ["s.db", "s.json"])
def test_a_fold_read_between_an_erase_event_and_its_scrub_is_not_cached(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process folds the log after the erase event is stored but before the scrub blanks the
    contexts, and writes its cache after the eraser removed the old one: the event it ends at (a
    later write's) is untouched by the scrub, so the cache would serve the erased contexts."""
    location = str(tmp_path / name)
    with Lamar(location) as lam:
        exp_id = lam.add(Experience("when deploying", "check the canary"))
        for i in range(3):
            lam.report(lam.recall({"user": f"Quentin Oyelaran {i}"}).episode_id, 1.0)
    reader, eraser = Lamar(location), Lamar(location)
    saves: list[tuple[Path, cache.Folded, str]] = []
    scrub = eraser.store.scrub  # type: ignore[attr-defined]

    def another_process_folds_meanwhile(events: list[object]) -> int:
        if events and not saves:
            with Lamar(location) as other:  # a write after the erase event, before its scrub
                other.report(other.recall({"user": "someone else"}).episode_id, 0.5)
            real_save = cache._save
            monkeypatch.setattr(cache, "_save", lambda *args: saves.append(args))
            cache.fold_store(reader.store)  # its read sees the erase event, not yet the scrub
            monkeypatch.setattr(cache, "_save", real_save)
        return int(scrub(events))

    monkeypatch.setattr(eraser.store, "scrub", another_process_folds_meanwhile)
    eraser.erase(exp_id, by="ops", contexts=True)
    for args in saves:
        cache._save(*args)  # written after the eraser removed the cache file
    cache._files.clear()  # as a process of its own would read it
    path = cache.cache_path(location)
    assert path is None or not path.exists() or "Oyelaran" not in path.read_text(encoding="utf-8")
    assert "Oyelaran" not in json.dumps(cache.fold_store(reader.store).contexts)
    reader.close()
    eraser.close()


def test_an_erase_leaves_no_fold_of_the_blanked_contexts_kept_in_this_process(tmp_path: Path) -> None:
    """The erasing process removes the cache file and folds its engine again so that nothing folded
    from the old text stays in its memory: the fold it kept of that file goes too."""
    lam = Lamar(str(tmp_path / "s.db"))
    exp_id = lam.add(Experience("when deploying", "check the canary"))
    for i in range(3):
        lam.report(lam.recall({"user": f"Quentin Oyelaran {i}"}).episode_id, 1.0)
    read_log(lam.store)  # folded, cached and kept
    assert any("Oyelaran" in json.dumps(folded.contexts) for _, _, folded in cache._files.values())
    lam.erase(exp_id, by="ops", contexts=True)
    kept = [json.dumps(folded.contexts) for _, _, folded in cache._files.values()]
    assert not any("Oyelaran" in contexts for contexts in kept)
    lam.close()
