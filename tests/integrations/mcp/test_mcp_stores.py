"""`lamar mcp` over stdio on stores a user may have: damaged, held by another writer, read-only, unreadable,
deleted while it runs; what the tools then tell the model."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TextIO

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from lamar import Experience, Lamar, Scope
from lamar_mcp.launch import child_env, lamar_command, stdio_session
from tests.conftest import IN_CI, as_user


async def test_a_store_whose_schema_names_are_damaged_is_refused_as_corrupt(store: Path, tmp_path: Path) -> None:
    raw = bytearray(store.read_bytes())
    name = raw.find(b"events", 100, 4096)  # the events table's name in the schema, on the first page
    raw[name:name + 6] = b"\xaa" * 6  # not UTF-8: SQLite hands Python bytes it cannot decode
    store.write_bytes(bytes(raw))
    command = lamar_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "--store", str(store)],
                                   env=child_env())
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog, pytest.raises((MCPError, OSError, ExceptionGroup)):
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
    said = log.read_text()
    assert f"{store} is not a readable Lamar SQLite store" in said and "restore it from a backup" in said, said
    assert "a bug in Lamar" not in said
    assert store.read_bytes() == bytes(raw)  # left untouched


@contextlib.asynccontextmanager
async def _session(store: Path, errlog: TextIO | None = None) -> AsyncIterator[ClientSession]:
    """`lamar mcp --store STORE` over stdio, run as an ordinary user."""
    command = [*as_user(), *lamar_command()]
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "--store", str(store)],
                                   env=child_env())
    async with stdio_client(params, **({"errlog": errlog} if errlog else {})) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _says_the_store_is_read_only(said: str, store: Path) -> None:
    assert str(store) in said and "nothing was stored" in said and "Tell the user" in said, said
    assert "recall with dry_run=true, lessons, evidence and whatif still read it" in said, said
    assert "open a writable copy" not in said, said  # a model cannot


@pytest.mark.parametrize("name", ["experience.db", "experience.json"])
async def test_a_store_whose_file_is_read_only_is_explained_for_the_user(tmp_path: Path, name: str) -> None:
    store = tmp_path / name
    with Lamar(str(store), seed=0) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="shop")))
    store.chmod(0o444)
    async with _session(store) as session:
        refused = await session.call_tool("propose_lesson", {"precondition": "a test flakes", "action": "rerun it"})
        assert refused.is_error
        _says_the_store_is_read_only(refused.content[0].text, store)
        looked = await session.call_tool("recall", {"context": {"project": "shop"}, "dry_run": True})
        assert not looked.is_error and looked.structured_content["lesson_ids"], looked.content
    with Lamar(str(store)) as lam:
        assert len(lam.experiences()) == 1


def _chattr(paths: list[Path], on: bool) -> bool:
    flag = "+i" if on else "-i"
    return all(subprocess.run(["chattr", flag, str(p)], capture_output=True, check=False).returncode == 0
               for p in paths)


async def test_a_store_on_an_immutable_folder_is_explained_for_the_user(store: Path) -> None:
    files = [*store.parent.glob(f"{store.name}*"), store.parent]
    if not _chattr(files, True):
        _chattr(files, False)
        if IN_CI:
            pytest.fail("chattr +i is needed to make a store read-only for root")
        pytest.skip("chattr +i is not available here")
    try:
        async with stdio_session(store) as session:
            refused = await session.call_tool("recall", {"context": {"project": "trace"}})
            assert refused.is_error
            _says_the_store_is_read_only(refused.content[0].text, store)
            lesson = (await session.call_tool("lessons", {})).structured_content["lessons"][0]["id"]
            erase = await session.call_tool("erase", {"lesson_id": lesson})
            assert erase.is_error and "erase it again" not in erase.content[0].text  # it would fail again
            _says_the_store_is_read_only(erase.content[0].text, store)
    finally:
        _chattr(files, False)


async def test_a_json_store_deleted_while_the_server_runs_says_to_tell_the_user(tmp_path: Path) -> None:
    store = tmp_path / "experience.json"
    with Lamar(str(store), seed=0) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    async with stdio_session(store) as session:
        store.unlink()
        gone = await session.call_tool("lessons", {})
    said = gone.content[0].text
    assert gone.is_error and "was deleted, moved or renamed while open" in said, said
    assert "restore it from a backup" in said and "tell the user" in said and "restarting this MCP server" in said


async def test_a_store_this_process_may_not_read_names_the_permissions(store: Path, tmp_path: Path) -> None:
    store.chmod(0)
    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog, pytest.raises((MCPError, OSError, ExceptionGroup)):
        async with _session(store, errlog):
            pass
    said = log.read_text()
    assert f"cannot open {store}: this process may not read it (permission denied" in said, said
    assert "read and write access" in said and "a bug in Lamar" not in said, said


async def test_an_unknown_episode_is_answered_with_where_the_id_comes_from(store: Path) -> None:
    async with stdio_session(store) as session:
        unknown = await session.call_tool("report", {"episode_id": "ep_missing", "signal": "shipped"})
    said = unknown.content[0].text
    assert unknown.is_error and "no episode 'ep_missing' in store" in said, said
    assert "pass the episode_id that recall() returned for this task" in said and "keep_unreported" not in said, said
