"""The fleet benchmark's paced rows carry each episode's CPU, and its flatness summary reads them
right (its figures are printed, never asserted: speed is measured in benchmarks, not tests)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from lamar.bench.fleet import flatness, mean_interval, measure, row_line, row_seconds, run_segment, summarize
from lamar.store import Event


def test_a_mean_comes_with_the_half_width_of_its_95_percent_interval() -> None:
    samples = [1.0, 2.0, 3.0, 4.0, 5.0]
    mean, half = mean_interval(samples)
    assert mean == 3.0 and half == pytest.approx(1.96 * statistics.stdev(samples) / 5**0.5)
    assert mean_interval([2.0, 2.0, 2.0]) == (2.0, 0.0)


def _row(clients: int, cpu: float, ci: float, workload: str = "shared", busy: int = 0) -> dict[str, Any]:
    return {"workload": workload, "mode": "fold", "clients": clients, "busy": busy,
            "client_cpu_ms": cpu, "client_cpu_ci_ms": ci, "server_cpu_ms": cpu / 2, "server_cpu_ci_ms": ci / 2}


def test_flatness_compares_the_highest_mean_with_the_lowest_and_their_intervals() -> None:
    rows = [_row(1, 2.0, 0.2), _row(16, 2.5, 0.1), _row(64, 2.2, 0.05),
            _row(1, 9.0, 0.1, busy=15),  # a control row: not part of the fleet's curve
            _row(4, 1.0, 0.1, workload="spread"),  # alone in its workload: nothing to compare
            # run flat out, so without intervals: left out
            *({k: v for k, v in _row(n, 0.5, 0.0, workload="spread").items() if not k.endswith("_ci_ms")}
              for n in (1, 64))]
    (line,) = flatness(rows)
    assert line.startswith("shared   fold      client CPU    2.00 ms ( 1 clients) to  2.50 ms (16)")
    assert "x1.25, 95 % intervals x1.09 to x1.44" in line  # 2.4 / 2.2 and 2.6 / 1.8
    (server,) = flatness(rows, "server")
    assert "x1.25" in server and "1.00 ms ( 1 clients)" in server


def test_an_interval_reaching_zero_leaves_the_ratio_unbounded() -> None:
    (line,) = flatness([_row(1, 0.1, 0.2), _row(4, 0.3, 0.1)])
    assert line.endswith("x0.67 to xinf")


def test_a_paced_row_runs_for_its_episodes_and_times_each(postgres_url: str) -> None:
    assert row_seconds(0.2, 2, 20.0, 16) == pytest.approx(0.4)  # 16 episodes at 2 x 20 a second
    assert row_seconds(0.2, 2, 0.0, 16) == 0.2  # flat out: the time given
    row = measure("fold", "spread", 2, 0.2, 4, postgres_url, rate=20.0, min_episodes=16)
    assert row["seconds"] == pytest.approx(0.4) and row["segments"] == 1
    assert 10 <= row["episodes"] <= 20
    assert row["client_cpu_ms"] > 0 and row["client_cpu_ci_ms"] >= 0 and row["server_cpu_ci_ms"] >= 0
    assert " ±" in row_line(row)
    flat_out = measure("fold", "spread", 1, 0.2, 4, postgres_url)
    assert "client_cpu_ci_ms" not in flat_out and " ±" not in row_line(flat_out)


def test_the_segments_of_a_row_run_at_different_times_merge_into_one_row(postgres_url: str) -> None:
    segments = [run_segment("fold", "shared", 2, 0.3, 4, postgres_url, rate=20.0) for _ in range(2)]
    parts = [summarize([segment]) for segment in segments]
    row = summarize(segments)
    assert row["segments"] == 2 and row["seconds"] == pytest.approx(0.6)
    assert row["episodes"] == sum(part["episodes"] for part in parts) > 0
    assert row["episodes_per_s"] == pytest.approx(row["episodes"] / 0.6)
    # the merged mean weighs each segment by its episodes
    assert row["client_cpu_ms"] == pytest.approx(
        sum(p["client_cpu_ms"] * p["episodes"] for p in parts) / row["episodes"])
    assert (row["workload"], row["clients"], row["processes"]) == ("shared", 2, 2)


def test_a_turn_puts_time_between_each_recall_and_its_report_and_the_latency_leaves_it_out(
        postgres_url: str) -> None:
    row = measure("fold", "shared", 1, 0.6, 4, postgres_url, turn=0.25)
    assert 1 <= row["episodes"] <= 3  # flat out, a client with no turn runs dozens in 0.6 s
    # With the turn counted, every episode would take at least 250 ms; left out, they take a few.
    # The median, not the slowest: one stall of the machine must not fail the check.
    assert row["episode_p50_ms"] < 250.0


def test_a_rows_namespace_is_dropped_from_every_table_of_the_schema_it_ran_in(postgres_url: str) -> None:
    # The benchmark dropped a row's namespace from the default schema, whatever search_path its URL named,
    # and left its saved state behind: the database grew a namespace's rows with every run.
    import uuid
    from urllib.parse import quote

    import psycopg

    from lamar.bench.fleet.clients import drop_namespace, namespace_url
    from lamar.store.postgres import PostgresStore

    schema, namespace = f"pgrows_bench_{uuid.uuid4().hex[:8]}", f"bench-{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    base = f"{postgres_url}{'&' if '?' in postgres_url else '?'}options={quote(f'-c search_path={schema}')}"
    try:
        store = PostgresStore(namespace_url(base, namespace, "fold"))
        store.append([Event("applied", {"proposal": "p"}, key="k")])
        store.save_state(store.read()[-1].seq, "a state")
        store.close()
        drop_namespace(base, namespace)
        with psycopg.connect(base, autocommit=True) as conn:
            left = {table: conn.execute(f"SELECT count(*) FROM {table} WHERE namespace = %s", (namespace,)).fetchone()
                    for table in ("lamar_events", "lamar_namespaces", "lamar_state")}
        assert left == dict.fromkeys(left, (0,))
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
