"""Notes a namespace keeps for everyone who opens it (`lamar_notes`), such as the last sleep's figures:
one row per name, replaced whole; the table comes with the first note, as `lamar_state` does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lamar.store.postgres.connection import Connections
from lamar.store.postgres.schema import ensure_table

if TYPE_CHECKING:
    from psycopg import Connection


def save_note(db: Connections, namespace: str, name: str, text: str) -> None:
    """Keep `text` as the note `name` of `namespace`, in place of the one before.

    Raises:
        StoreError: the table could not be made (a role without CREATE) or written.
    """
    def run(conn: Connection[Any]) -> None:
        ensure_table(conn, "lamar_notes", "notes.sql")  # a role without CREATE writes once the owner made it
        with conn.transaction():
            conn.execute("INSERT INTO lamar_notes (namespace, name, body) VALUES (%s, %s, %s) "
                         "ON CONFLICT (namespace, name) DO UPDATE SET body = EXCLUDED.body", (namespace, name, text))

    db.run(run, f"keep the note {name!r} in")  # a server's refusal is a StoreError that names the store


def load_note(db: Connections, namespace: str, name: str) -> str | None:
    """The note `name` of `namespace`, or None when none was kept."""
    def run(conn: Connection[Any]) -> str | None:
        if conn.execute("SELECT to_regclass('lamar_notes')").fetchone() in (None, (None,)):
            return None  # no note was kept in this database yet
        row = conn.execute("SELECT body FROM lamar_notes WHERE namespace = %s AND name = %s",
                           (namespace, name)).fetchone()
        return None if row is None else str(row[0])

    return db.run(run)
