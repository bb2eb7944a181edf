"""`lamar ls`, `lamar show` and `lamar sleep` tell a lesson the selection dropped from one with no evidence yet,
and say that its harm is not proven."""

from __future__ import annotations

import json
from pathlib import Path

from lamar import Experience, Lamar
from tests.worlds import turning


def _dropped(path: Path) -> tuple[str, int]:
    with Lamar(str(path), k=1, seed=3) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache", rationale="stale modules survive"))
        turning(lam, exp_id, 1600, turn=600, seed=11)
        ev = lam.evidence(exp_id)
    assert ev.dropped and ev.unchosen is not None and ev.unchosen >= 200, ev
    return exp_id, ev.unchosen


def test_ls_show_and_sleep_say_the_selection_dropped_it(tmp_path: Path, lamar_cli) -> None:
    store = tmp_path / "s.db"
    exp_id, unchosen = _dropped(store)
    listed = lamar_cli("ls", "--store", store)
    row = next(line for line in listed.stdout.splitlines() if line.startswith(exp_id))
    assert row.split()[1:3] == ["active", "unknown"], row  # the verdict stays unknown
    assert f"harm is not proven): {exp_id}; `lamar show ID` says since when" in listed.stdout, listed.stdout
    shown = lamar_cli("show", exp_id, "--store", store)
    said = " ".join(shown.stdout.split())
    assert "dropped by the selection: its estimate of the lift is " in said, shown.stdout
    assert "Harm is not proven: the evidence coin is flipped only for a lesson the selection chooses" in said
    assert f"not chosen in the last {unchosen} reported episodes of its scope" in said, shown.stdout
    assert "its injected rewards fell: the selection restarted" in shown.stdout, shown.stdout  # the audit trail
    data = json.loads(lamar_cli("show", exp_id, "--json", "--store", store).stdout)
    assert data["evidence"]["unchosen"] == unchosen and "Harm is not proven" in data["dropped"], data
    slept = lamar_cli("sleep", "--store", store, "--out", tmp_path / "r.json")
    assert slept.returncode == 0 and "retire_dropped_" in slept.stdout, slept
    (proposal,) = json.loads((tmp_path / "r.json").read_text())["proposals"]
    assert proposal["kind"] == "retire_dropped" and proposal["reason"].startswith("NOT proven harm"), proposal
