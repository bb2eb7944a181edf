"""What one erase costs: the whole log read and folded once each before it ends, and SQLite's
episode table built again only when the erase blanks contexts (the only text it holds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from lamar.state.follower import Follower
from lamar.store import episode_rows


def _store(location: str) -> tuple[Lamar, str]:
    lam = Lamar(location, k=2, seed=0)
    secret = lam.add(Experience("Quorvath's build fails", "page Quorvath", scope=Scope(task="t")))
    for n in range(20):
        lam.report(lam.recall({"task": "t", "user": f"u{n % 3}"}).episode_id, 1.0)
        if n == 10 and location != ":memory:":
            assert lam.checkpoint()
    return lam, secret


@pytest.mark.parametrize("suffix", ["db", "json", "memory"])
def test_an_erase_reads_and_folds_the_whole_log_once_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         suffix: str) -> None:
    lam, secret = _store(":memory:" if suffix == "memory" else str(tmp_path / f"s.{suffix}"))
    folds, reads = [], []
    refold, read = Follower.refold, lam.store.read

    def counted_refold(self: Follower) -> None:
        folds.append(1)
        refold(self)

    def counted_read(after: int = 0) -> Any:
        reads.extend([1] if after == 0 else [])
        return read(after)

    monkeypatch.setattr(Follower, "refold", counted_refold)
    monkeypatch.setattr(lam.store, "read", counted_read)
    lam.erase(secret, by="ops")
    # the erase's own read of the log, and the fold of the scrubbed log (which reads it)
    assert (len(folds), len(reads)) == (1, 2)
    assert lam.get(secret).action == "[erased]"
    lam.close()


def test_sqlite_builds_its_episode_table_again_only_when_an_erase_blanks_contexts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lam, secret = _store(str(tmp_path / "s.db"))
    other = lam.add(Experience("the deploy fails", "page Vexmoor", scope=Scope(task="t")))
    lam.report(lam.recall({"task": "t", "user": "Vexmoor"}).episode_id, 1.0)
    builds = []
    rebuild = episode_rows.rebuild

    def counted(*args: Any) -> None:
        builds.append(1)
        rebuild(*args)

    monkeypatch.setattr(episode_rows, "rebuild", counted)
    before = lam.store.episodes()  # type: ignore[attr-defined]
    lam.erase(secret, by="ops")
    assert builds == []
    assert lam.store.episodes().rows == before.rows  # type: ignore[attr-defined]
    lam.erase(other, contexts=True, by="ops")
    assert builds != []
    lam.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert b"Quorvath" not in stored and b"Vexmoor" not in stored


def test_a_json_erase_writes_the_file_anew_only_for_what_it_replaces(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar.store.json_file import JsonStore

    lam, secret = _store(str(tmp_path / "s.json"))
    writes = []
    write = JsonStore._write

    def counted(self: JsonStore, events: Any) -> None:
        writes.append(len(events))
        write(self, events)

    monkeypatch.setattr(JsonStore, "_write", counted)
    lam.erase(secret, by="ops")
    # the scrub of the text, then the erase event marked done; the drop of the saved state first writes none
    assert len(writes) == 2
    lam.close()
    assert not any(b"Quorvath" in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
