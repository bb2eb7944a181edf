"""A PostgreSQL store a team shares keeps its last sleep in the database, so that `lamar stats` says the same to
every user on every machine, not only to whoever ran the sleep."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.cli.conftest import Run
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

pytestmark = pytest.mark.postgres


def test_the_last_sleep_of_a_shared_database_is_the_same_in_every_home(lamar_cli: Run, postgres_url: str,
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = unique_namespace("team-sleep")
    url = namespace_url(postgres_url, namespace)
    homes = {who: tmp_path / f"home-{who}" for who in "abc"}
    for home in homes.values():
        home.mkdir()

    def last(who: str) -> object:
        out = lamar_cli("--store", url, "stats", "--json", extra_env={"HOME": str(homes[who])})
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)["last_sleep"]

    try:
        with Lamar(url) as lam:
            lam.add(Experience("the build fails", "clear the cache"))
        assert [last(who) for who in "abc"] == [None, None, None]
        report = tmp_path / "report.json"
        done = lamar_cli("--store", url, "sleep", "--out", report, extra_env={"HOME": str(homes["b"])})
        assert done.returncode == 0, done.stderr
        seen = [last(who) for who in "abc"]
        assert seen[0] == seen[1] == seen[2] and isinstance(seen[0], dict), seen
        assert seen[0]["report"] == str(report) and seen[0]["proposals"] == 0
        monkeypatch.setenv("HOME", str(homes["c"]))  # a sleep from Python, by another user, is everyone's last
        with Lamar(url) as lam:
            made = lam.sleep().created
        seen = [last(who) for who in "abc"]
        assert [s["created"] for s in seen] == [made] * 3 and seen[0]["report"] is None  # type: ignore[index]
        assert not any((home / ".lamar").exists() for home in homes.values())  # nothing kept in a home folder
    finally:
        drop_namespaces(postgres_url, namespace)
