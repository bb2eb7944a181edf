"""`lamar export` and `import` give the copy the source's last sleep, so that `lamar stats` on the store a team moved
to still says when sleep last ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.cli.conftest import Run
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


def _slept(run_cli: Run, store: Path, tmp_path: Path) -> dict[str, object]:
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    assert run_cli("--store", store, "sleep", "--out", tmp_path / "night.json").returncode == 0
    last = json.loads(run_cli("--store", store, "stats", "--json").stdout)["last_sleep"]
    assert isinstance(last, dict)
    return last


def test_an_exported_file_store_keeps_the_last_sleep(run_cli: Run, tmp_path: Path) -> None:
    last = _slept(run_cli, tmp_path / "team.db", tmp_path)
    assert run_cli("--store", tmp_path / "team.db", "export", "--out", tmp_path / "moved.json").returncode == 0
    assert json.loads(run_cli("--store", tmp_path / "moved.json", "stats", "--json").stdout)["last_sleep"] == last
    assert run_cli("--store", tmp_path / "back.db", "import", tmp_path / "moved.json").returncode == 0
    assert json.loads(run_cli("--store", tmp_path / "back.db", "stats", "--json").stdout)["last_sleep"] == last


@pytest.mark.postgres
def test_a_store_exported_to_postgres_keeps_the_last_sleep(run_cli: Run, tmp_path: Path, postgres_url: str) -> None:
    last = _slept(run_cli, tmp_path / "team.db", tmp_path)
    namespace = unique_namespace("team-moved")
    url = namespace_url(postgres_url, namespace)
    try:
        done = run_cli("--store", tmp_path / "team.db", "export", "--out", url)
        assert done.returncode == 0, done.stderr
        assert json.loads(run_cli("--store", url, "stats", "--json").stdout)["last_sleep"] == last
    finally:
        drop_namespaces(postgres_url, namespace)
