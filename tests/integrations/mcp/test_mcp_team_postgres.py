"""`lamar mcp` on a team's PostgreSQL store whose agents run with their own tuning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from lamar.cli import main
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.fixture
def team_url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("mcpteam")
    yield namespace_url(postgres_url, namespace, lamar_fold="on")
    drop_namespaces(postgres_url, namespace)


@pytest.mark.parametrize("read_only", [False, True])
def test_the_server_takes_the_tuning_the_rows_were_folded_under(team_url: str, read_only: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents at `holdout=0.2`: a server opened at the defaults would build every lesson row again
    from the whole log at its first read (a `--read-only` one too), and the agents' next call would
    build them back. It opens the engine with the rows' tuning, as every `lamar` command does."""
    import lamar_mcp

    agent = Lamar(team_url, k=2, holdout=0.2)
    agent.add(Experience("the build fails", "read the first error", scope=Scope(project="trace")))
    agent.report(agent.recall({"project": "trace"}).episode_id, "shipped")
    served: list[Lamar] = []

    def build_server(lam: Lamar, **options: Any) -> None:
        served.append(lam)
        lam.stats()  # a read that folds the log, as the server's reads may
        raise KeyboardInterrupt  # in place of serving: the command ends as on Ctrl+C

    monkeypatch.setattr(lamar_mcp, "build_server", build_server)
    assert main(["mcp", "--store", team_url, *(["--read-only"] if read_only else [])]) == 130
    assert served[0].policy.holdout == 0.2
    # A read-only server leaves the namespace as it found it: no state saved from its fold.
    assert served[0].store.writes_on_read is not read_only  # type: ignore[attr-defined]
    if read_only:
        assert agent.store.load_state() is None  # type: ignore[attr-defined]
    agent.close()
