"""What a `LangGraphStore` says when the BaseStore under it failed: the backend's error, and what to do about
the failures a store meets in the field (a lock another writer holds, a read-only file, a full disk, a lost
connection)."""

from __future__ import annotations

import errno

from lamar import StoreError

# SQLite's primary result codes for the failures below (sqlite3.SQLITE_* in Python 3.11+).
_BUSY, _LOCKED, _READONLY, _IOERR, _FULL = 5, 6, 8, 10, 13
# SQLite names a write it could not make, to a file made read-only or a disk filled up since it opened them, only
# as an I/O error (or LangGraph's SqliteStore as a COMMIT with no transaction, its BEGIN having failed).
_UNWRITABLE = ("the database file or its folder may have been made read-only, or its disk filled up (see `ls -l` "
               "and `df` of its folder): give it write access again, or free some space on its disk, then try again")


def backend_failure(location: str, exc: BaseException) -> StoreError:
    """The `StoreError` for `exc`, raised by the BaseStore of the store `location`; nothing of the call that
    failed was committed, since a write commits by its last put (the head), which comes after all the others."""
    return StoreError(f"{location}: the LangGraph store failed: {exc}{_advice(exc)}")


def _advice(exc: BaseException) -> str:
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc).lower()
    if code is not None:
        code &= 0xFF
        if code in (_BUSY, _LOCKED):
            return ("; another connection holds the database's write lock: nothing was written, try again once "
                    "that writer is done, or give the BaseStore's connection a longer timeout "
                    "(sqlite3.connect(..., timeout=...))")
        if code == _READONLY:
            return ("; the database cannot be written here (read-only file, folder or mount): nothing was written, "
                    "give this process write access to it and its folder, or open a writable copy")
        if code == _FULL:
            return "; its disk is full: nothing was written, free some space on it, then try again"
        if code == _IOERR:
            return f"; nothing was written: {_UNWRITABLE}"
    if "no transaction is active" in text:  # what SqliteStore says of a write whose BEGIN failed
        return f"; nothing was written: {_UNWRITABLE}"
    if type(exc).__module__.startswith("psycopg") and type(exc).__name__ in ("OperationalError", "InterfaceError"):
        return ("; the connection to PostgreSQL was lost or refused: nothing was written, and the call goes to the "
                "server again next time when the BaseStore's connection comes from a pool (PostgresStore.from_conn_"
                "string keeps one connection, which stays closed: open the store again)")
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "; its disk is full: nothing was written, free some space on it, then try again"
    return ""
