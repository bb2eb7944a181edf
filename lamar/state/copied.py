"""The state of a store just copied into (`lamar import`, `lamar export`), folded once and saved beside its
log, so that its first readers resume from it instead of each folding the whole log."""

from __future__ import annotations

from typing import Any

from lamar.store.base import Store


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
    holder.lessons([])  # the fold mode's rows, built here when missing or folded under other tuning
    log.sync()
    if log.state_seq != log.cache.seq:
        log.save()


__all__ = ["save_folded"]
