"""Copy every event of one store into another, in order, and check the copy: how a store moves
between backends (the event log is the whole truth; the engine rebuilds its state from it)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Sequence

from lamar._errors import StoreError
from lamar.store.base import Event, Store, UnfoldedAppendStore


@dataclasses.dataclass(frozen=True)
class TransferResult:
    """What a transfer did.

    Attributes:
        copied: events appended to the target.
        source: the source store's location.
        target: the target store's location.
        target_before: events the target held before (0 unless `append=True`).
        written_since: events written to the source after it was read, which the copy lacks
            (0 when nothing else wrote to it meanwhile).
    """

    copied: int
    source: str
    target: str
    target_before: int
    written_since: int = 0


def transfer(source: Store, target: Store, *, append: bool = False,
             batch_size: int | None = None, validate: bool = True) -> TransferResult:
    """Append every event of `source` to `target`, preserving order, kinds, keys, data and times.

    Sequence numbers are assigned by the target, so they are not kept: a new file or memory
    store, or a new PostgreSQL namespace, numbers the events from 1, and an append numbers them
    after the target's last event (in either PostgreSQL mode). A compacted source's
    snapshot gets the target's next number, so `stats()["events"]` and the numbers of later
    events differ from the source's.
    The copy is read back and compared event by event (kind, key, data, time, in order). The
    text of a lesson the source erased is not copied, even where its scrub was left unfinished.
    The copy's folded state is saved beside it (on PostgreSQL in the fold mode, its rows built),
    under the tuning its readers take: the target's agents' when it held a saved state or rows,
    else the source's; so its first engine or `lamar stats` resumes from it instead of folding
    the whole log. A state that cannot be saved (a busy or read-only store) is left to the next writer.

    Args:
        source: the store to read (it is not written).
        target: the store to append to.
        append: allow a target that already holds events; the copied events then
            follow them. Without it a non-empty target is refused, untouched.
        batch_size: events per append. None (the default) writes everything in one
            atomic append, so a failure leaves the target as it was; a number bounds
            memory per write but a failure can leave a prefix copied.
        validate: hold every event to what the API would write (a lesson's text in prompt
            form, no secret, rewards in [-1, 1], sane times, ...) and fold the result in memory
            first, the copy numbered after the target's events as the target numbers a write; any
            failure refuses the whole copy before anything is written. Where the target numbered the
            copy as that fold did (nobody else wrote to it meanwhile), that fold is the state saved (and
            the fold mode's rows built); else the copy is folded again, once, to save it.

    Returns:
        A `TransferResult`.

    Raises:
        StoreError: the target is the source, or is not empty and `append` is False (or
            the source was compacted: its snapshot would hide what the target holds), or
            the read-back lacks an event of the source, or holds it changed.
        EventConflict: an event key is already in the target (nothing of that batch written).
        InvalidEvent: an event the API would not have written (nothing written).

    >>> from lamar.store.memory import MemoryStore
    >>> a, b = MemoryStore(), MemoryStore()
    >>> _ = a.append([Event("status", {"id": "x", "status": "retired"}, key="k1")])
    >>> transfer(a, b).copied, [e.key for e in b.read()]
    (1, ['k1'])
    """
    if _same_store(source, target):
        raise StoreError(f"cannot copy {source.location} into itself; name a different target")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1 (or None for one atomic write); got {batch_size}")
    events = source.read(0)
    read_through = max((e.seq for e in events), default=0)
    before = target.read(0)
    if before and not append:
        raise StoreError(
            f"{target.location} already holds {len(before)} events; copy into an empty store, "
            "or pass append=True to add these after them"
        )
    if before and any(e.kind == "snapshot" for e in events):
        # A snapshot stands for the whole log before it: after the target's events it would
        # replace their state (their lessons and episodes would no longer be found).
        raise StoreError(
            f"{source.location} was compacted (a checkpoint's snapshot stands for its older events), "
            f"so it cannot follow the {len(before)} events {target.location} holds: copy it into an "
            "empty store, or append the other store to it instead"
        )
    from lamar.state.copied import agents_tuning, save_copied
    from lamar.store.validate import without_erased

    # The tuning the copy's readers take: the target's agents' when it has any (an append), else the source's.
    tuning = agents_tuning(target) or agents_tuning(source)
    events = without_erased(events)
    checked = None
    if validate:
        from lamar.store.validate import checked_fold

        events, checked = checked_fold(events, source.location, before, tuning)
    # Read the target's tail once more after writing, from where it ended before.
    start = before[-1].seq if before else 0
    fresh = [Event(kind=e.kind, data=e.data, key=e.key, time=e.time) for e in events]
    step = batch_size or max(len(fresh), 1)
    # Into a store that folds its own rows, the events go in unfolded and numbered as the check's fold numbered
    # them, after what the store held, so that fold builds the rows (`save_copied`) instead of each write
    # folding its batch and a fold of the whole log building them once more.
    write = target.append
    if isinstance(target, UnfoldedAppendStore) and target.rows is not None:
        write = target.append_unfolded
    for offset in range(0, len(fresh), step):
        write(fresh[offset:offset + step])
    after = target.read(start)
    _verify(events, after, target.location)
    # Copied and verified: with no state saved, every reader would fold the whole log until an agent wrote and
    # closed. The check's fold is that state where the target numbered the log as it did. A cache: the copy
    # stands without it.
    with contextlib.suppress(StoreError, OSError):
        save_copied(target, tuning, checked, [*before, *after])
    # A copy is the source as it was read: an agent that went on writing to it (a team moving its
    # store while its agents run) left reports that only the source holds, so count them.
    return TransferResult(copied=len(events), source=source.location, target=target.location,
                          target_before=len(before), written_since=len(source.read(read_through)))


def _verify(expected: Sequence[Event], copied: Sequence[Event], where: str) -> None:
    """Raise StoreError unless `copied` holds every event of `expected`, in order (seq aside).

    Other events may sit between them: a shared store's agents go on writing while an import
    appends to it, and their events are theirs, not a damaged copy."""
    rest = iter(copied)
    for i, want in enumerate(expected, 1):
        if not any((want.kind, want.key, want.data, want.time) == (got.kind, got.key, got.data, got.time)
                   for got in rest):
            raise StoreError(
                f"{where}: copied event #{i} ({want.kind}, key {want.key!r}) is not in the target as the "
                "source holds it, in the source's order; check the target before use"
            )


def _same_store(source: Store, target: Store) -> bool:
    """Whether both name one store: the same object, location, or file by another path (a link)."""
    if source is target or (source.location == target.location and source.location != ":memory:"):
        return True
    if ":memory:" in (source.location, target.location):
        return False
    try:  # a file store's location is its path; a URL names no file, and raises here
        return os.path.samefile(source.location, target.location)
    except (OSError, ValueError):
        return False


__all__ = ["TransferResult", "transfer"]
