"""`lamar mcp --read-only` over real stdio writes nothing in the store's folder: every file in it keeps its
bytes and time, though its what-if answer reads a store whose episode table and saved state are far behind the log."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import anyio
import pytest

from lamar import Experience, Lamar, Scope
from lamar_mcp.launch import stdio_session

EPISODES = 2600  # past the events a reader that may write folds into the episode table, or saves the state of


def _listing(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir()}


def _filled(folder: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    store = folder / name
    # The same bytes as a writer's appends, without waiting on the disk for each: what the server
    # reads is the question here, not whether a write survives a crash.
    with monkeypatch.context() as unsynced, Lamar(str(store), seed=0) as lam:
        unsynced.setattr(os, "fsync", lambda fd: None)
        lam.add(Experience("a test fails only in CI", "compare the CI locale", scope=Scope(project="trace")))
        for i in range(EPISODES):
            lam.report(lam.recall({"project": "trace"}).episode_id, ("shipped", "corrected")[i % 2])
    if name.endswith(".db"):
        # As a file that got the episode table from a version before it, or whose writer was
        # killed after a long run, leaves it: the table describes none of the log.
        db = sqlite3.connect(store, isolation_level=None)
        db.execute("DELETE FROM episode_rows")
        db.execute("DELETE FROM episode_slates")
        db.execute("UPDATE meta SET value = '0' WHERE key = 'episode_rows_through'")
        db.execute("DELETE FROM state")  # as a store filled through store.append has none: a reader may save it
        db.close()
    else:
        store.with_name(name + ".state").unlink()
    return store


@pytest.mark.parametrize("name", ["experience.db", "experience.json"])
async def test_a_read_only_server_leaves_every_file_of_the_stores_folder_as_it_was(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the what-if cache's own folder, elsewhere
    folder = tmp_path / "store"
    folder.mkdir()
    store = _filled(folder, name, monkeypatch)
    before = _listing(folder)
    await anyio.sleep(0.05)  # a file written now gets another time
    async with stdio_session(store, "--read-only") as session:
        for tool, arguments in [("lessons", {}), ("whatif", {}), ("whatif", {"policies": ["none", "k:1"]}),
                                ("lessons", {"context": {"project": "trace"}, "text": "CI"})]:
            answer = await session.call_tool(tool, arguments)
            assert not answer.is_error, answer.content
        lesson = json.loads((await session.read_resource("lamar://lessons")).contents[0].text)["lessons"][0]["id"]
        assert not (await session.call_tool("evidence", {"lesson_id": lesson})).is_error
        await session.read_resource("lamar://scopes")
    assert _listing(folder) == before
    assert os.listdir(tmp_path / "cache" / "lamar" / "whatif")  # the what-if fold is cached outside it
