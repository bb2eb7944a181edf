"""`import --append` into a PostgreSQL namespace a team's agents keep writing to while it copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, ExperienceStore, Lamar, Scope, Signal
from lamar.store.transfer import transfer
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.mark.parametrize("fold", ["on", "off"])
def test_append_beside_live_agents_is_verified(postgres_url: str, tmp_path: Path, fold: str) -> None:
    namespace = unique_namespace("live-import")
    url = namespace_url(postgres_url, namespace, lamar_fold=fold)
    solo = Lamar(str(tmp_path / "solo.db"))
    solo.add(Experience("pip install fails on M1", "use the arm64 wheel", scope=Scope(project="trace")))
    for _ in range(3):
        solo.report(solo.recall({"project": "trace"}).episode_id, Signal.SHIPPED)
    solo.close()
    agent = Lamar(url)
    target = ExperienceStore(url)
    try:
        agent.add(Experience("a flaky test fails on CI only", "rerun it with the CI seed",
                             scope=Scope(project="trace")))
        # The fold mode's copy goes in unfolded, numbered after the namespace's events (`append_unfolded`).
        written_by = "append_unfolded" if fold == "on" else "append"
        copy_append = getattr(target, written_by)

        def append_then_agent_writes(events):  # type: ignore[no-untyped-def]
            # A teammate's agent recalls and reports between the copy's write and its read-back.
            seqs = copy_append(events)
            agent.report(agent.recall({"project": "trace"}).episode_id, Signal.SHIPPED)
            return seqs

        setattr(target, written_by, append_then_agent_writes)
        source = ExperienceStore(str(tmp_path / "solo.db"))
        result = transfer(source, target, append=True)
        assert result.copied == 7 and result.written_since == 0
        copied_keys = [e.key for e in source.read(0)]
        landed = [e.key for e in target.read(0)]
        assert set(copied_keys) <= set(landed)
        assert len(landed) == 7 + 1 + 2  # the copy, the agent's lesson, its episode and outcome
        source.close()
    finally:
        agent.close()
        target.close()
        drop_namespaces(postgres_url, namespace)
