"""An export into PostgreSQL that missed what an agent wrote meanwhile says how to start again there: a namespace
is no file to delete."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.cli.conftest import Run
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

pytestmark = pytest.mark.postgres


def test_a_copy_into_postgres_that_missed_events_names_another_namespace(run_cli: Run, tmp_path: Path,
                                                                         postgres_url: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import lamar.store.transfer as transfer_module

    source = tmp_path / "team.db"
    with Lamar(str(source)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    agent = Lamar(str(source))
    verify = transfer_module._verify

    def agent_reports_meanwhile(*args: object, **kwargs: object) -> object:
        agent.report(agent.recall({}).episode_id, "shipped")  # another developer's agent goes on
        return verify(*args, **kwargs)

    monkeypatch.setattr(transfer_module, "_verify", agent_reports_meanwhile)
    first, second = unique_namespace("team-move"), unique_namespace("team-move")
    try:
        moved = run_cli("export", "--store", source, "--out", namespace_url(postgres_url, first))
        assert moved.returncode == 2, moved.stderr
        said = moved.stderr
        assert "first stop the agents and commands that write to it, then copy it again into an empty store" in said
        assert "(name another namespace, lamar_namespace=NAME in the URL, or delete this one's rows as " in said, said
        assert "docs/postgres.md, \"The schema\", says)" in said, said
        assert "(delete postgresql://" not in said
        monkeypatch.setattr(transfer_module, "_verify", verify)
        agent.close()
        again = run_cli("export", "--store", source, "--out", namespace_url(postgres_url, second))
        assert again.returncode == 0 and "(verified)" in again.stdout, again.stderr
    finally:
        drop_namespaces(postgres_url, first, second)
