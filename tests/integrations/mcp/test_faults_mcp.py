"""`lamar mcp` under store faults while it runs (tests/integrations/store_faults.py makes them): a recall the store
cannot take is a tool error that names the store and tells the model what to say, never a dead server; once the
fault is gone the same server recalls again, and the store holds every event written before it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from lamar import Experience, ExperienceStore, Lamar, Scope
from lamar_mcp.launch import stdio_session
from tests.integrations import store_faults as faults


def _seed(location: str) -> None:
    lam = Lamar(ExperienceStore(location, timeout=faults.TIMEOUT))
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="shop")))
    lam.close()


async def _recall(session: ClientSession) -> tuple[bool, str]:
    done = await session.call_tool("recall", {"context": {"project": "shop"}})
    if not done.is_error:
        reported = await session.call_tool("report", {"episode_id": done.structured_content["episode_id"],
                                                      "signal": "shipped"})
        assert not reported.is_error, reported.content
    return done.is_error, done.content[0].text if done.content else ""


async def _through(location: str, fault: Callable[[str], Any], read: Callable[[], list[Any]],
                   *options: str) -> str | None:
    """The tool's refusal under `fault` (None: the recall went through), after checking what the store kept;
    `options`: more of `lamar mcp`'s."""
    async with stdio_session(location, *options) as session:
        assert (await _recall(session))[0] is False
        before = read()
        with fault(location):
            failed, said = await _recall(session)
        between = read()
        assert between[:len(before)] == before, "an event written before the fault was lost"
        assert failed or len(between) > len(before)
        assert (await _recall(session))[0] is False, "the server does not recall once the fault is gone"
        assert len(read()) > len(between)
    return said if failed else None


@pytest.fixture
def store_in(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    with faults.stores(tmp_path, all_on_disk=True) as location:  # the server is a process of its own
        yield location


@pytest.mark.parametrize(("kind", "fault"), faults.CASES, ids=faults.IDS)
async def test_a_running_server_answers_a_store_fault_with_what_to_tell_the_user(
        store_in: Callable[[str], str], kind: str, fault: str) -> None:
    location = store_in(kind)
    _seed(location)
    # The server waits for a lock as long as the faults' own stores do: far less than a fault holds it.
    said = await _through(location, faults.FAULTS[fault], lambda: faults.events(location),
                          "--store-timeout", str(faults.TIMEOUT))
    if faults.refused(kind, fault) is None or (kind, fault) == ("json", "full_disk"):
        return  # an open SQLite file and a JSON append into its last page may take the write
    # A lock held by another writer is passing: the model may try again. The rest needs the user.
    advice = faults.ADVICE[fault] if fault in ("locked", "slow") else "tell the user"
    assert said is not None and location in said and advice in said.lower(), said


@pytest.mark.postgres
async def test_a_running_server_connects_again_when_postgres_ends_its_connection(
        postgres_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with faults.member_store(postgres_url, "fixfaults_mcp") as (location, role):
        _seed(location)
        said = await _through(location, faults.killed(postgres_url, role), lambda: faults.events(location))
        assert said is None or "reconnects" in said, said
