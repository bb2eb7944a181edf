"""The episodes `lamar show` lists are read from the end of the log, in growing windows, and are the
same as a scan of the whole log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.cli.timeline import appearances, latest_appearances
from lamar.store.base import Event, StoredText, TextStore
from tests.cli.conftest import Run


def test_the_latest_episodes_are_found_past_the_first_window(tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=1, seed=2)
    rare = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    lam.add(Experience("a lint error", "run the formatter", scope=Scope(task="lint")))
    for _ in range(8):  # episodes that may inject the rare lesson (or hold it out), early in the log
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    for _ in range(1500):  # then 3 000 events that never name it: past the first window of 1 024
        lam.report(lam.recall({"task": "lint"}).episode_id, Signal.ACCEPTED)
    everything, _ = appearances(lam.store.read(0), rare)
    assert 3 < len(everything) <= 8 and lam.history(rare).injected_in == len(everything)
    assert latest_appearances(lam, rare, 3) == everything[-3:]
    assert latest_appearances(lam, rare, 20) == everything  # fewer than asked: the whole log was read
    assert latest_appearances(lam, rare, None) == everything
    assert all(a.signal == "shipped" for a in everything)


def _decoded(lam: Lamar, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of the events the store decodes from here on, by `read` or one by one."""
    store, count = lam.store, [0]
    assert isinstance(store, TextStore)
    read, decoded = store.read, store.decoded

    def counting_read(after: int = 0) -> list[Event]:
        events = read(after)
        count[0] += len(events)
        return events

    def counting_decoded(row: StoredText) -> Event:
        count[0] += 1
        return decoded(row)

    monkeypatch.setattr(store, "read", counting_read)
    monkeypatch.setattr(store, "decoded", counting_decoded)
    return count


@pytest.mark.parametrize("rare_id", ["", "exp_caf\u00e9\"r\u00e9sum\u00e9\""])  # a made id; one JSON escapes
def test_a_lessons_episodes_are_found_decoding_only_the_events_that_name_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rare_id: str) -> None:
    costs = []
    for others in (200, 800):
        lam = Lamar(str(tmp_path / f"s{others}.db"), k=1, seed=2)
        rare = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build"), id=rare_id))
        lam.add(Experience("a lint error", "run the formatter", scope=Scope(task="lint")))
        for _ in range(6):
            lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
        for _ in range(others):  # episodes that never name it, after its own
            lam.report(lam.recall({"task": "lint"}).episode_id, Signal.ACCEPTED)
        everything, _ = appearances(lam.store.read(0), rare)
        count = _decoded(lam, monkeypatch)
        assert latest_appearances(lam, rare, None) == everything and len(everything) >= 3
        assert latest_appearances(lam, rare, 2) == everything[-2:]
        costs.append(count[0])
        monkeypatch.undo()
        lam.close()
    # Its 6 episodes and their outcomes, decoded once by each call: as many with 4 times the log.
    assert costs[0] == costs[1] <= 2 * (6 + 6)


@pytest.mark.parametrize("flags", [["--all"], ["--episodes", "10"]])
def test_show_says_a_checkpoint_compacted_the_earlier_episodes_rather_than_sending_to_all(
        run_cli: Run, store_location: str, flags: list[str]) -> None:
    lam = Lamar(store_location, k=1, seed=2)
    rare = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    for _ in range(6):
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    assert lam.checkpoint()  # what a team runs: the episodes before it leave the log, their counts stay
    for _ in range(3):
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    counted, listed = lam.history(rare).injected_in, latest_appearances(lam, rare, None)
    lam.close()
    assert 0 < len(listed) < counted
    out = run_cli("show", rare, "--store", store_location, *flags)
    assert out.returncode == 0, out.stderr
    assert "--all lists every one" not in out.stdout
    assert (f"(the {counted - len(listed)} before the store's last checkpoint are no longer in its log; "
            f"their outcomes stay in the evidence)") in out.stdout
    assert out.stdout.count(" shipped (+1.00)") == len(listed)


def test_show_json_counts_the_episodes_a_checkpoint_took_out_of_the_log(run_cli: Run, store_location: str) -> None:
    # The text said how many were no longer in the log; the JSON listed fewer with nothing to say why.
    lam = Lamar(store_location, k=1, seed=2)
    rare = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    for _ in range(6):
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    before = json.loads(run_cli("show", rare, "--store", store_location, "--json").stdout)
    assert before["injected_before_checkpoint"] == 0 and before["injected_in"]
    assert lam.checkpoint()
    for _ in range(3):
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    counted, listed = lam.history(rare).injected_in, latest_appearances(lam, rare, None)
    lam.close()
    assert 0 < len(listed) < counted
    out = run_cli("show", rare, "--store", store_location, "--json")
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert len(shown["injected_in"]) == len(listed)
    assert shown["injected_before_checkpoint"] == counted - len(listed)
