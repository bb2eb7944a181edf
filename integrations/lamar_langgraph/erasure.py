"""How a `LangGraphStore` scrub makes the database under a LangGraph `BaseStore` drop the values it
replaced (`compaction`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from lamar import LamarError, StoreError
from lamar.integration import a_or_an


class Compaction:
    """One scrub's erasure below the BaseStore. `check` runs before anything changes and refuses
    what cannot be erased; `replacing` wraps the puts that replace the values; `compact` runs after
    them (the backend's own step, then the caller's `compact`)."""

    def __init__(self, store: BaseStore, extra: Callable[[], None] | None, where: str) -> None:
        self.store = store
        self.extra = extra
        self.where = where

    def check(self) -> None:
        """Refuse (StoreError) before the scrub changes anything."""

    @contextlib.contextmanager
    def replacing(self) -> Iterator[None]:
        yield

    def compact(self, scrubbed: bool) -> None:
        """`scrubbed`: events were replaced just now (an erase's first step, `scrub([])`, replaces
        none, and its refusal must not say it did nor ask for a scrub the API has no call for)."""
        self.own(scrubbed)
        if self.extra is not None:
            try:
                self.extra()
            except LamarError:
                raise
            except Exception as exc:
                raise self.refusal(scrubbed, f"compact() failed ({exc})", "the database may keep the old values "
                                   "until it succeeds: scrub again", "make it succeed") from exc

    def own(self, scrubbed: bool) -> None:
        """The backend's own step (none: a process's memory holds the replaced values only until
        Python frees them)."""

    def refusal(self, scrubbed: bool, what: str, then: str, first: str) -> StoreError:
        """What failed, then what to do: `then` after a scrub that replaced events, else `first`."""
        if scrubbed:
            return StoreError(f"{self.where}: the events were scrubbed, but {what}; {then}")
        return StoreError(f"{self.where}: {what}; {first}")


class _Unknown(Compaction):
    def check(self) -> None:
        if self.extra is None:
            raise StoreError(
                f"{self.where}: Lamar cannot tell how {a_or_an(type(self.store).__name__)} drops the values it "
                "replaces, so nothing can be erased from it; pass LangGraphStore(..., compact=f), where f() "
                "makes the database under it drop replaced values (nothing changed)")


class _Sqlite(Compaction):
    """langgraph's `SqliteStore`: what Lamar's own SQLite backend does, on the store's connection
    and under its lock. `secure_delete` makes SQLite zero the cells and pages the replacement
    frees; VACUUM then writes the file anew, and a TRUNCATE checkpoint folds the write-ahead log
    (which still holds earlier writes of the old values) into it and empties it."""

    def check(self) -> None:
        store: Any = self.store
        with store.lock:
            mode = str(store.conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        # PERSIST leaves the -journal file in place, overwritten only as far as the next
        # transaction's journal reaches: a longer one from before can keep old pages past that.
        if mode == "persist":
            raise StoreError(f"{self.where}: journal_mode=PERSIST can keep old pages in the -journal file, so "
                             "nothing can be erased; use WAL, DELETE or TRUNCATE (nothing changed)")

    @contextlib.contextmanager
    def replacing(self) -> Iterator[None]:
        import sqlite3

        store: Any = self.store
        with store.lock:
            before = int(store.conn.execute("PRAGMA secure_delete").fetchone()[0])
            store.conn.execute("PRAGMA secure_delete = ON")
        try:
            yield
        finally:
            with store.lock, contextlib.suppress(sqlite3.Error):
                store.conn.execute(f"PRAGMA secure_delete = {before}")

    def own(self, scrubbed: bool) -> None:
        import sqlite3

        store: Any = self.store
        conn = store.conn
        with store.lock:
            try:
                if conn.in_transaction:
                    raise self.refusal(scrubbed, "the SqliteStore's connection is inside a transaction, so VACUUM "
                                       "cannot run", "commit it and scrub again", "commit it")
                conn.execute("VACUUM")  # a fresh file: no free page holds the old values
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as exc:
                raise self.refusal(scrubbed, f"the file could not be compacted ({exc})",
                                   "old pages may remain until it is: scrub again when no one reads it",
                                   "wait until no one reads it") from exc
        if busy:
            raise self.refusal(scrubbed, "readers kept its write-ahead log from being emptied",
                               "scrub again when no one reads it", "wait until no one reads it")


class _Postgres(Compaction):
    """langgraph's `PostgresStore`: VACUUM of its `store` table (and so of the table's TOAST data)
    on the store's own connection, or one from its pool, outside any transaction: what Lamar's own
    PostgreSQL backend does. It removes the old row versions from the table; their bytes can stay
    in the pages' free space until it is reused, and in the server's write-ahead log, replicas and
    backups until they are recycled (`VACUUM FULL` rewrites the table's files: the caller's
    `compact` can run it)."""

    def check(self) -> None:
        import psycopg

        store: Any = self.store
        conn = store.conn
        if isinstance(conn, psycopg.Connection) and not conn.autocommit:
            raise StoreError(f"{self.where}: the PostgresStore's connection is not in autocommit mode, so "
                             "VACUUM cannot run after a scrub; open it with autocommit=True, as "
                             "PostgresStore.from_conn_string does (nothing changed)")

    def own(self, scrubbed: bool) -> None:
        import psycopg

        store: Any = self.store
        try:
            with _connection(store.conn) as conn:
                if not conn.autocommit:
                    raise self.refusal(scrubbed, "a connection of the PostgresStore's pool is not in autocommit "
                                       "mode, so VACUUM cannot run", "run VACUUM store yourself",
                                       "open the pool's connections with autocommit=True")
                if store.pipe is not None:  # a connection shared in pipeline mode: VACUUM alone in its own sync
                    with conn.pipeline():
                        conn.execute("VACUUM store")
                else:
                    with store.lock:  # not inside another thread's pipelined batch on this connection
                        conn.execute("VACUUM store")
        except psycopg.Error as exc:
            raise self.refusal(scrubbed, f"VACUUM failed ({exc})", "old row versions stay in the table's pages "
                               "until a VACUUM: scrub again", "make VACUUM store succeed") from exc


@contextlib.contextmanager
def _connection(conn: Any) -> Iterator[Any]:
    import psycopg

    if isinstance(conn, psycopg.Connection):
        yield conn
    else:  # a psycopg_pool.ConnectionPool
        with conn.connection() as pooled:
            yield pooled


def compaction(store: BaseStore, extra: Callable[[], None] | None, where: str) -> Compaction:
    """The erasure step for `store`'s type (a subclass counts as its base), with the caller's
    `compact` after it: `InMemoryStore` keeps nothing on disk; `SqliteStore` zeroes what it frees,
    rebuilds its file and empties its write-ahead log; `PostgresStore` vacuums its table; any other
    store needs the caller's `compact`, since Lamar cannot know where its database keeps old bytes."""
    if isinstance(store, InMemoryStore):
        return Compaction(store, extra, where)
    try:
        from langgraph.store.sqlite import SqliteStore
    except ImportError:
        pass
    else:
        if isinstance(store, SqliteStore):
            return _Sqlite(store, extra, where)
    try:
        from langgraph.store.postgres import PostgresStore
    except ImportError:
        pass
    else:
        if isinstance(store, PostgresStore):
            return _Postgres(store, extra, where)
    return _Unknown(store, extra, where)


__all__ = ["Compaction", "compaction"]
