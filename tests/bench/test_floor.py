"""The floor benchmark runs its empty episodes and leaves nothing behind (its figures are printed,
never asserted: speed is measured in benchmarks, not tests)."""

from __future__ import annotations

import psycopg
import pytest

from lamar.bench.floor import main, measure_floor


def test_empty_episodes_are_counted_and_their_table_is_dropped(postgres_url: str) -> None:
    row = measure_floor(postgres_url, clients=3, messages=2, seconds=0.3)
    assert row["clients"] == 3 and row["processes"] == 3 and row["messages"] == 2
    assert row["episodes_per_s"] > 0 and row["episode_p99_ms"] >= row["episode_p50_ms"] > 0
    with psycopg.connect(postgres_url) as conn:
        left = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'lamar_floor_%'").fetchone()
    assert left == (0,)


def test_an_episode_of_one_message_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--messages", "1"])
    assert "2 messages or more" in capsys.readouterr().err
