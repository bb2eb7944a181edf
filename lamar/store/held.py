"""The keys a checkpoint goes on refusing: its snapshot lists the applied proposals, whose events'
`proposal:<id>` keys it replaced, and every store refuses those keys as if they were still stored."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    from lamar.store.base import Event

PROPOSAL = "proposal:"


def proposal_ids(events: Iterable[Event]) -> list[str]:
    """The proposal ids named by these events' `proposal:` keys (most writes name none)."""
    return [e.key[len(PROPOSAL):] for e in events if e.key is not None and e.key.startswith(PROPOSAL)]


def held_in(first: Event | None, events: Sequence[Event]) -> str | None:
    """The first `proposal:` key of `events` whose proposal `first`, the log's first event, lists
    as applied when it is a snapshot (a snapshot of any age lists them), or None."""
    if first is None or first.kind != "snapshot":
        return None
    applied = first.data.get("applied", ())
    return next((PROPOSAL + pid for pid in proposal_ids(events) if pid in applied), None)


def refuse_in_sqlite(db: sqlite3.Connection, events: Sequence[Event]) -> None:
    """`held_in` for a SQLite log, asked inside the write's transaction (JSON1 reads the list out
    of the snapshot row, never decoded for it): raises IntegrityError, as the UNIQUE column does."""
    import sqlite3

    ids = proposal_ids(events)
    if not ids:
        return
    try:
        row = db.execute(
            "SELECT a.value FROM events AS e, json_each(e.data, '$.applied') AS a "
            "WHERE e.seq = (SELECT min(seq) FROM events) AND e.kind = 'snapshot' "
            f"AND a.value IN ({','.join('?' * len(ids))}) LIMIT 1", tuple(ids)).fetchone()
    except sqlite3.OperationalError:  # a SQLite built without JSON1: the snapshot is decoded here
        import json

        head = db.execute("SELECT data FROM events WHERE kind = 'snapshot' AND seq = (SELECT min(seq) FROM events)")
        applied = {str(pid) for (data,) in head for pid in json.loads(data).get("applied", ())}
        row = next(((pid,) for pid in ids if pid in applied), None)
    if row is not None:
        raise sqlite3.IntegrityError(held_conflict(PROPOSAL + str(row[0]), "the log"))


def held_conflict(key: str, where: str) -> str:
    """The message of the EventConflict that refuses a held key."""
    return f"event key {key!r} is held by the checkpoint at the start of {where} (that proposal is applied)"


__all__ = ["PROPOSAL", "held_conflict", "held_in", "proposal_ids", "refuse_in_sqlite"]
