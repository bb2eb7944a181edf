"""`lamar stats` on a PostgreSQL namespace in the fold mode prints the log's last seq, which comes from a sequence
every namespace of the database shares: its store line must not read as a count of the namespace's events."""

from __future__ import annotations

from lamar import Experience, ExperienceStore, Lamar
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


def _store_line(run_cli, url):
    done = run_cli("stats", "--store", url)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[0]


def test_the_fold_modes_last_seq_does_not_read_as_a_count(run_cli, postgres_url):
    mine, other = unique_namespace("fixes2-stats"), unique_namespace("fixes2-other")
    try:
        with Lamar(ExperienceStore(postgres_url, namespace=other)) as lam:  # another namespace takes seqs first
            for i in range(3):
                lam.add(Experience(f"the build fails {i}", "read the first error"))
        with Lamar(ExperienceStore(postgres_url, namespace=mine)) as lam:
            lam.add(Experience("the build fails", "read the first error"))
        line = _store_line(run_cli, namespace_url(postgres_url, mine))
        assert "events" not in line and "event)" not in line and "not a count" in line, line
        log_mode = _store_line(run_cli, namespace_url(postgres_url, mine, lamar_fold="off"))
        assert "not a count" not in log_mode, log_mode
    finally:
        drop_namespaces(postgres_url, mine, other)
