"""Each live episode's time and how many lessons it injected and held out, what the injection chart
draws: counted from a store's episode table where it keeps one, else from the what-if fold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from lamar.state.saved import fingerprint
from lamar.store.base import Event, FoldingStore, Store, StoredText, TextStore
from lamar.store.episode_rows import EpisodeTableStore

# Events after which the episodes counted before no longer tell which are live: read afresh.
_RECOUNT = frozenset({"compact", "snapshot"})


@dataclass(frozen=True)
class Injections:
    """The live episodes through the event at `seq` (whose fingerprint is `last`), in log order, as
    (time, lessons injected, lessons held out)."""

    episodes: tuple[tuple[float, int, int], ...]
    seq: int = 0
    last: str = ""


def injections(store: Store, since: Injections | None = None) -> Injections:
    """The store's live episodes as counts; from `since` plus the events logged after it when it
    still describes the log's start (a reader that keeps them, as `lamar ui` does, reads only what
    is new), else from the episode table, else from the what-if fold."""
    if since is not None and since.seq and not _unsettled(store):
        rows = _read(store, since.seq - 1)
        if rows and rows[0].seq == since.seq and fingerprint(rows[0]) == since.last:
            more = _counted(store, rows[1:])
            if more is not None:
                return _through(store, since.episodes + tuple(more), rows, since)
    if isinstance(store, EpisodeTableStore):
        table = store.episode_counts()
        if table is not None:
            more = _counted(store, table.tail)
            if more is not None:
                through = [table.last] if table.last is not None else []
                return _through(store, tuple(table.rows) + tuple(more), [*through, *table.tail], Injections(()))
    from lamar.whatif.cache import fold_store

    folded = fold_store(store)
    slates = folded.slates
    counted = tuple((folded.times[j], len(slates[s].injected), len(slates[s].held_out))
                    for j, s in enumerate(folded.slate) if folded.alive[j])
    return Injections(counted, folded.seq, folded.last)


def _unsettled(store: Store) -> bool:
    """Whether a write may commit after one that took a later seq (PostgreSQL's fold mode): the
    events after `since` may then miss one still to come, so the fold, which knows, counts them."""
    return isinstance(store, FoldingStore) and store.rows is not None


def _read(store: Store, after: int) -> Sequence[StoredText | Event]:
    return store.read_texts(after) if isinstance(store, TextStore) else store.read(after)


def _counted(store: Store, rows: Sequence[StoredText | Event]) -> list[tuple[float, int, int]] | None:
    """The episodes `rows` log, as counts; None when one of them compacts or replaces episodes."""
    out = []
    for row in rows:
        if row.kind in _RECOUNT:
            return None
        if row.kind == "episode":
            event = row if isinstance(row, Event) else cast("TextStore", store).decoded(row)
            data = event.data
            out.append((float(row.time), len(data["injected"]), len(data["held_out"])))
    return out


def _through(store: Store, episodes: tuple[tuple[float, int, int], ...], rows: Sequence[StoredText | Event],
             before: Injections) -> Injections:
    """`episodes` as of the last of `rows` (or `before`'s event when there are none)."""
    if not rows:
        return Injections(episodes, before.seq, before.last)
    return Injections(episodes, rows[-1].seq, fingerprint(rows[-1]))


__all__ = ["Injections", "injections"]
