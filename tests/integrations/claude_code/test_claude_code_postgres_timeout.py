"""A hook on a PostgreSQL store whose role's statement_timeout is too short for Lamar: it fails open,
and the next session is told why and what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path

from lamar import Experience, Lamar, Scope
from tests.pg_role import set_timeout
from tests.store.test_postgres import namespace_url

from .conftest import Hook, payload


def test_a_hook_fails_open_on_a_statement_timeout_too_short_and_says_why_next_session(
        postgres_url: str, pg_role: str, env: dict[str, str], repo: Path) -> None:
    base = postgres_url.replace("postgres@", f"{pg_role}@", 1)
    url = namespace_url(base, "pgtimeout", options=f"-c search_path={pg_role}")
    lam = Lamar(url)
    lam.add(Experience("the tests fail", "run the failing test alone first", scope=Scope(project="shop")))
    lam.close()
    set_timeout(postgres_url, pg_role, "SET statement_timeout = 1")
    hook = Hook(url, env)  # type: ignore[arg-type]
    # The open's migration check or the pool's set-up of a connection: the timeout cancels one of them.
    quiet = (0, b"", b"")
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="fix the tests"))
    assert (done.returncode, done.stdout, done.stderr) == quiet, done
    done = hook(payload("SessionStart", "s2", repo, source="startup"))
    (message,) = json.loads(done.stdout).values()
    # The session start tries the store before it says a kept failure: whether its own try or the prompt's
    # is the failure kept last depends on which query the tiny timeout cancels; both say the same of it.
    said = re.match(r"Lamar is off, so no lessons are recalled and nothing is learned: its (\w+) hook failed at ",
                    message)
    assert said and said.group(1) in ("UserPromptSubmit", "SessionStart"), message
    assert "statement_timeout is too short for Lamar's queries: raise it for the role (ALTER ROLE" in message
