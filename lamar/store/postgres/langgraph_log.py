"""Lamar's log kept inside LangGraph's PostgresStore (`LangGraphStore`), found where the `lamar` command
finds no store of its own, so it can say how to reach those lessons."""

from __future__ import annotations

from typing import Any

_HEADS = 5  # namespaces named at most: a hint, not a listing


def langgraph_logs(conn: Any) -> list[tuple[str, ...]]:
    """The namespaces of the Lamar logs in the `store` table of LangGraph's PostgresStore on the search
    path (one `head` item each), first few only; [] when there is none or the look takes too long."""
    import psycopg

    try:
        tables = conn.execute("SELECT to_regclass('store') IS NOT NULL AND to_regclass('store_migrations') "
                              "IS NOT NULL").fetchone()
        if not tables or not tables[0]:
            return []
        # No index serves this look (an app's store can be large), and it only adds to an error message.
        conn.execute("SET statement_timeout = 2000")
        rows = conn.execute("SELECT prefix FROM store WHERE key = 'head' AND prefix LIKE '%.head' "
                            f"ORDER BY prefix LIMIT {_HEADS}").fetchall()
    except psycopg.Error:
        return []
    # LangGraphStore escapes '%', '.' and NUL in its labels (lamar_langgraph.sanitize_namespace).
    return [tuple(label.replace("%2E", ".").replace("%00", "\0").replace("%25", "%")
                  for label in row[0][:-len(".head")].split(".")) for row in rows]


def langgraph_hint(namespaces: list[tuple[str, ...]]) -> tuple[str, str]:
    """What the schema holds and what to do, for `namespace_missing`."""
    shown = " and ".join(repr(namespace) for namespace in namespaces)
    first = repr(namespaces[0])
    held = (f"LangGraph PostgresStore (table store) holds Lamar's log under namespace {shown}, which only Python "
            f"opens, as Lamar(LangGraphStore(store, namespace={first}))")
    reach = (f"to use its lessons here, copy them into a file with lamar.store.transfer.transfer(LangGraphStore("
             f"store, namespace={first}), ExperienceStore('copy.db'))")
    return held, reach
