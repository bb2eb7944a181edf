"""The PostgreSQL schema's scripts: each migration step names files the package ships, and the
names the Python side matches on in the server functions' output are the ones the SQL spells."""

from __future__ import annotations

from lamar.store.postgres import inbox, rows, schema


def test_every_version_reaches_the_current_one_through_files_that_exist() -> None:
    for version in (None, *range(schema.SCHEMA_VERSION)):
        scripts = schema.scripts(version)
        assert scripts and all(text.strip() for text in scripts), version
    assert schema.scripts(schema.SCHEMA_VERSION) == []
    assert "CREATE TABLE lamar_events" in schema.scripts(None)[0]


def test_the_functions_raise_and_notify_what_the_client_listens_for() -> None:
    functions = schema.script("functions.sql")
    assert f"MESSAGE = '{rows.MOVED}'" in functions
    assert f"LISTEN {inbox.INBOX_CHANNEL};" in functions and f"pg_notify('{inbox.INBOX_CHANNEL}'" in functions
