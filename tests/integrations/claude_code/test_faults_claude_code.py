"""Claude Code's hooks under store faults: a session's prompts (each one's outcome read from the next) go on, and
the log says what to do (tests/integrations/store_faults.py). PostgreSQL is left out: each hook connects anew."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, ExperienceStore, Lamar, Scope
from tests.integrations import store_faults as faults
from tests.integrations.claude_code.conftest import payload


def _seed(location: str) -> None:
    lam = Lamar(ExperienceStore(location, timeout=faults.TIMEOUT))
    lam.add(Experience("the tests fail", "run the failing test alone with -x first", scope=Scope(project="shop")))
    lam.close()


def _prompts(location: str, env: dict[str, str], repo: Path) -> Callable[[], Any]:
    """Each call: one more prompt of the session, as Claude Code sends it; the answer is the hook's exit status
    and whether it printed anything but lessons (never a refusal, never a traceback)."""
    turns = itertools.count()

    def call() -> Any:
        event = payload("UserPromptSubmit", "s1", repo, prompt=f"the tests fail again ({next(turns)})")
        done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", location],
                              input=json.dumps(event).encode(), capture_output=True, env=env,
                              timeout=120, check=False)
        assert b"Traceback" not in done.stderr, done.stderr
        return done.returncode, done.stdout == b"" or b"run the failing test alone" in done.stdout

    return call


@pytest.fixture
def quick(env: dict[str, str]) -> dict[str, str]:
    """The hook's environment with a budget of 3 s: a lock held past it costs the prompt its lessons, not 30 s."""
    config = Path(env["HOME"]) / ".lamar" / "claude-code.toml"
    config.parent.mkdir(mode=0o700)
    config.write_text("[hook]\nbudget_seconds = 3\n")
    return env


@pytest.fixture
def store_in(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    # Both stores on the disk that fills: a hook is a process of its own, which no patch of this one reaches.
    with faults.stores(tmp_path, all_on_disk=True) as location:
        yield location


@pytest.mark.parametrize(("kind", "fault"), faults.CASES, ids=faults.IDS)
def test_prompts_go_on_under_a_store_fault_and_the_log_says_what_to_do(
        store_in: Callable[[str], str], quick: dict[str, str], repo: Path, kind: str, fault: str) -> None:
    location = store_in(kind)
    _seed(location)
    # The log beside the store, or, when that cannot be written (a full disk), the one in the home folder.
    logs = [Path(f"{location}.claude-code.log"), Path(quick["HOME"]) / ".lamar" / "claude-code.log"]
    advice = faults.refused(kind, fault)
    if fault in ("locked", "slow"):
        advice = "budget"  # the hook gives up at its budget, before the store's own wait ends
    # A JSON append may fit in its last page of a full disk; the hooks' state, written whole, never does.
    faults.survives(location, _prompts(location, quick, repo), faults.FAULTS[fault],
                    lambda: "".join(log.read_text() for log in logs if log.exists()), advice=advice,
                    whole=(kind, fault) != ("json", "full_disk"))
