"""The state of a store just copied into (`transfer`, `lamar import`, `lamar export`), saved beside its log, so
that its first readers resume from it instead of each folding the whole log; and the tuning they fold under."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from lamar.store.base import Event, FoldedRows, KeyedStore, Store, folded_rows

if TYPE_CHECKING:
    from lamar.policy.lesson import LessonState
    from lamar.state.follower import Follower

    Folder = Callable[[list[Event]], tuple[Iterable[LessonState], tuple[int, float, float]]]


def agents_tuning(store: Store) -> dict[str, Any]:
    """The tuning the store's agents folded it under: a PostgreSQL namespace's rows', another store's saved
    state's; {} (the defaults) when it has neither. Under the defaults a command would build every row again
    from the log, exclusively, and the agents' next call would build them back under theirs; it would refuse
    their saved state and fold the whole log, every time, and a command that writes would save its own
    state, which their next engine would refuse in turn."""
    import dataclasses
    import json

    from lamar.policy.config import Policy
    from lamar.state.saved import saved_tuning

    rows = folded_rows(store)
    if rows is None:
        tuning = saved_tuning(store.load_state()) if isinstance(store, KeyedStore) else {}
    else:
        text = rows.lessons([]).tuning  # None: no rows yet, or stale: whoever reads them next builds them
        tuning = json.loads(text) if text is not None else {}
    # Rows or a state another design of the decision core folded (knobs this Policy lacks) are folded again.
    if not set(tuning) <= {field.name for field in dataclasses.fields(Policy)}:
        return {}
    try:
        Policy(**tuning)
    except (TypeError, ValueError):  # tuning no engine takes (an edited state): the defaults, as with none
        return {}
    return tuning


def save_copied(store: Store, tuning: dict[str, Any], checked: Follower | None, log: Sequence[Event]) -> None:
    """Save the state of `store`, whose whole log is now `log`, under `tuning`: the state `checked` (the copy's
    check, which folded that log numbered as `store` numbers a write after what it held, under `tuning`) folded,
    when `store` numbered it so, and in PostgreSQL's fold mode the rows built from it; else the state a fold of
    `store` gives (`save_folded`). A cache: a store that cannot take it is left as it is.

    Raises:
        StoreError: the store could not be read.
    """
    if checked is None or not log or not isinstance(store, KeyedStore) or checked.cache.seq != log[-1].seq \
            or _told(log) != _told(checked.store.read(0)):
        # A fold-mode write numbers its events from the sequence the database's namespaces share, and an agent
        # may have written between the copy's events: folded again.
        save_folded(store, tuning)
        return
    from lamar.state.follower import Follower

    rows = folded_rows(store)
    if rows is not None:
        import json

        from lamar.state.saved import tuning_of

        rows.build(json.dumps(tuning_of(checked.policy), sort_keys=True), _checked_folder(checked, log, store))
    saver = Follower(store, checked.policy)
    cache = saver.cache = checked.cache
    # The event the state names as the store holds it: the copy's check read it as the copy was to be.
    cache.location, cache.last = store.location, log[-1]
    saver.save()


def _told(log: Sequence[Event]) -> list[tuple[int, str, str | None, float]]:
    """What tells two logs apart cheaply: each event's seq, kind, key and time (their data was compared by the
    copy's read-back)."""
    return [(e.seq, e.kind, e.key, e.time) for e in log]


def _checked_folder(checked: Follower, log: Sequence[Event], store: Store) -> Folder:
    """What builds the rows: the check's fold when the log the build reads (under its lock) is `log`, which that
    fold folded; else a fold of what it reads (an agent wrote since)."""
    folded = _told(log)

    def fold(events: list[Event]) -> tuple[Iterable[LessonState], tuple[int, float, float]]:
        if _told(events) != folded:
            from lamar.state.follower import Follower

            return Follower(store, checked.policy).cache.fold_log(events)
        cache = checked.cache
        return list(cache.lessons.values()), (cache.reward_n, cache.reward_mean, cache.reward_m2)

    return fold


def save_folded(store: Store, tuning: dict[str, Any]) -> None:
    """Fold `store` under `tuning` (a `Policy`'s fields) and save that state: in PostgreSQL's fold mode its
    rows are built too. A cache: a store that cannot take it (read-only, busy) is left as it is.

    Raises:
        StoreError: the store could not be read.
    """
    from lamar.policy.config import Policy
    from lamar.state.holder import open_state

    log, holder = open_state(store, Policy(**tuning))
    holder.open()  # a state already saved (an append's target) is resumed, and only the copied tail folded
    rows = folded_rows(store)
    if rows is not None:
        _build_folding(rows, log)
    holder.lessons([])  # the fold mode's rows, built here when missing or folded under other tuning
    log.sync()
    if log.state_seq != log.cache.seq:
        log.save()


def _build_folding(rows: FoldedRows, log: Follower) -> None:
    """Build the fold mode's rows, when missing or folded under other tuning, from a fold of the log kept as the
    follower's: the log the build reads under the namespace's write lock held exclusively is settled, so that fold
    is the state saved, and the follower's sync folds only what was written after it instead of the whole log."""
    import json

    from lamar.state.saved import tuning_of

    tuning = json.dumps(tuning_of(log.policy), sort_keys=True)
    if rows.lessons([]).tuning == tuning:
        return
    cache = log.cache

    def fold(events: list[Event]) -> tuple[Iterable[LessonState], tuple[int, float, float]]:
        folded = cache.fold_log(events)
        cache.settled = True
        log.folded_whole(events)
        return folded

    rows.build(tuning, fold)


__all__ = ["agents_tuning", "save_copied", "save_folded"]
