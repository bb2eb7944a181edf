"""The PostgreSQL store's wire format: events as a write sends them, and the parts of a result
that holds several."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from lamar.store.base import Event


def timeout_param(pg: Any, conninfo: str, seconds: int) -> dict[str, Any]:
    """`connect_timeout=seconds` for a connection to `conninfo`, unless its URL sets its own. libpq
    refuses a URL with a parameter it does not know here: call it where that error is caught."""
    return {} if "connect_timeout" in pg.conninfo.conninfo_to_dict(conninfo) else {"connect_timeout": seconds}


def events_json(events: Iterable[Event]) -> str:
    """Events as a write sends them: one JSON array of {kind, key, time, data}, which the server
    reads with one parse (json_to_recordset), keeping each `data` text exactly as sent."""
    return "[" + ",".join(
        f'{{"kind":{json.dumps(e.kind)},"key":{json.dumps(e.key)},"time":{float(e.time)!r},"data":{e.data_json()}}}'
        for e in events) + "]"


def keyed(events: Sequence[Event]) -> bool:
    """Whether every event has a key: a write of them is one message, settled by its keys."""
    return bool(events) and all(e.key is not None for e in events)


def result_parts(rows: list[tuple[Any, ...]], count: int) -> list[list[tuple[Any, ...]]]:
    """The rows of a result made of `count` parts (its first column: the part's number), by part."""
    parts: list[list[tuple[Any, ...]]] = [[] for _ in range(count)]
    for row in rows:
        parts[row[0]].append(row)
    return parts


__all__ = ["events_json", "keyed", "result_parts"]
