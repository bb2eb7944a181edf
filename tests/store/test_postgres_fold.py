"""The fold mode of PostgresStore (the default): PostgreSQL holds every lesson's folded state.

The conformance suite again in this mode, then what the mode promises: the rows equal a replay
of the log in-process (exactly), writers on different lessons never wait for each other, the
namespace's counter row is not on the write path, and what the rows cannot fold is rebuilt.
"""

from __future__ import annotations

from typing import Any

from tests.store import test_postgres


class TestPostgresFoldStore(test_postgres.TestPostgresStore):
    mode: dict[str, str] = {}

    def test_a_resumed_engine_matches_a_replay_and_decides_the_same(self, store: Any, loc: str) -> None:
        """The fold mode saves no state to resume from: the rows are the state (see below)."""
