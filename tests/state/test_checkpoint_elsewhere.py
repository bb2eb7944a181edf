"""A checkpoint taken by another process, below what this process has folded: the state this
process saves afterwards must still let a new process find every episode."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope, Signal
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

_CHECKPOINT = "import sys\nfrom lamar import Lamar\nassert Lamar(sys.argv[1]).checkpoint()\n"


@pytest.fixture(params=["sqlite", "json", "postgres-log", "postgres-fold"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "shared.db")
    elif request.param == "json":
        yield str(tmp_path / "shared.json")
    else:
        url = request.getfixturevalue("postgres_url")
        namespace = unique_namespace("elsewhere")
        mode = "off" if request.param == "postgres-log" else "on"
        yield namespace_url(url, namespace, lamar_fold=mode)
        drop_namespaces(url, namespace)


def test_a_state_saved_after_another_process_checkpointed_finds_every_episode(location: str) -> None:
    lam = Lamar(location, k=1, seed=0)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    first = lam.recall({"project": "demo"}).episode_id
    lam.report(first, Signal.SHIPPED)
    lam.stats()  # this engine has folded through the last event
    subprocess.run([sys.executable, "-c", _CHECKPOINT, location], check=True)
    for _ in range(300):  # past the point where the writer saves its state beside the log
        lam.report(lam.recall({"project": "demo"}).episode_id, Signal.SHIPPED)
    lam.stats()
    lam.close()
    reopened = Lamar(location)  # a new process would resume from that saved state
    assert reopened.episode(first).reports == 1
    with pytest.raises(DuplicateReport):
        reopened.report(first, Signal.REVERTED)
    reopened.close()
