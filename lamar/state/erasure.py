"""Erasure: the events of a log that hold a lesson's text (and, on request, the contexts of the
episodes it was eligible in), with that text replaced; ids, coins and rewards stay as they were."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lamar._errors import EventConflict, InvalidArgument, StoreError, advised
from lamar.edit import edit_key
from lamar.experience import Experience, Status
from lamar.policy.config import Policy
from lamar.policy.fold import ERASED, erased_lesson, erased_note, erased_text
from lamar.state.cache import FoldCache
from lamar.state.snapshot import EPISODE_FIELDS
from lamar.store import base
from lamar.store.appendable import check_appendable
from lamar.store.base import ErasableStore, Event, KeyedStore, Store, folded_rows

if TYPE_CHECKING:
    from lamar.state.follower import Follower
    from lamar.state.holder import Holder

_CONTEXT = EPISODE_FIELDS.index("context")
_ELIGIBLE = EPISODE_FIELDS.index("eligible")
_ID = EPISODE_FIELDS.index("id")
_TRIES = 5  # scrubs before erase gives up on a lesson that other writers keep editing
# Seconds an erase event stays pending before another engine finishes its scrub: the erasing
# process scrubs right behind its event, and two scrubs at once would only wait for each other.
GRACE = 60.0


@dataclasses.dataclass(frozen=True)
class Erasure:
    """What `Lamar.erase` did, as its audit event records it (never the erased text).

    Attributes:
        id: the lesson erased.
        by: who erased it.
        time: when (seconds since the epoch).
        reason: the reason given.
        episodes: the episodes whose contexts were blanked (empty unless `contexts=True`).
        events: how many stored events were rewritten.
        again: the lesson was erased before: this run only finished that erase's cleanup (its
            who, when, why and episodes are that erase's) and stored no event.
    """

    id: str
    by: str
    time: float
    reason: str
    episodes: tuple[str, ...]
    events: int
    again: bool = False


def erase(holder: Holder, store: Store, exp: Experience, contexts: bool, who: str, why: str) -> Erasure:
    """`Lamar.erase` once its arguments are checked, under the engine's lock: scrub the stored
    events, record the erase event, fold the scrubbed log anew and drop the what-if cache.

    A lesson is erased once its erase event is stored. A scrub that replaced the text but failed
    to compact the store leaves the text erased and no event, so running `erase` again finishes it
    (the lesson may be retired meanwhile, by hand or before). A checkpoint folds the event into
    its snapshot; erasing such a lesson again only scrubs and compacts again, and records a second
    event. While the event is in the log, erasing again stores no event: it finishes the erase's
    cleanup (`_finish`), which fails if readers keep the store busy."""
    if not isinstance(store, ErasableStore):
        if exp.provenance.get("erased") and exp.status is Status.RETIRED:  # a copy of a lesson erased elsewhere
            raise _already_erased(exp.id, exp.provenance["erased"])
        raise StoreError(f"{type(store).__name__} at {store.location} cannot rewrite its events, so "
                         "nothing can be erased from it; nothing changed")
    for _ in range(_TRIES):
        done = _erase_once(holder, store, exp, contexts, who, why)
        if done is not None:
            _forget_whatif(store.location)
            return done
        # Another writer stored the lesson's next version while this scrubbed: fold it and scrub that too.
        holder.rebuild()
        exp = holder.lessons([exp.id]).states[0].experience
    raise advised(StoreError, f"lesson {exp.id} was edited by another writer each time erase scrubbed it; its "
                  "text is erased from what was read, but not the latest version: ", base.ERASE_AGAIN)


def _erase_once(holder: Holder, store: ErasableStore, exp: Experience, contexts: bool, who: str,
                why: str) -> Erasure | None:
    """Store the erase event, then scrub the log; None when an edit took the event's key first.

    The event's key is the one the lesson's next `edit` event would take: an edit made from the
    text before the erase is refused once the event is stored, and an edit stored before it makes
    this store nothing (and scrub nothing). The event goes first so that an erase stopped at any
    point leaves the lesson erased and retired in every fold of the log, and every store refusing
    a state saved or checkpointed from a fold made before it; what the scrub had yet to do, a
    second `erase` finishes (`_finish`)."""
    erased = exp.provenance.get("erased")
    log = store.read(0)
    done = [e for e in log if e.kind == "erase" and e.data.get("id") == exp.id] if erased else []
    if done:
        return _finish(holder, store, exp.id, done[-1], contexts)
    at = time.time()
    changed, episodes = scrubbed(log, exp.id, contexts, who, at, holder.policy)
    event = Event("erase", {"id": exp.id, "by": who, "reason": why, "contexts": contexts,
                            "episodes": episodes, "events": len(changed), "pending": True},
                  key=edit_key(exp.id, exp.version + 1), time=at)
    check_appendable([event])  # before the log is touched
    # A store that cannot erase (one whose old pages outlive a rewrite) or cannot compact now (a
    # reader holds SQLite's write-ahead log) says so here, before the event, and nothing is
    # erased. This also drops the saved state, which is only a cache.
    try:
        store.scrub([])
    except StoreError as exc:
        raise advised(StoreError, f"lesson {exp.id} was not erased: {exc}; ", base.ERASE_AFTER) from exc
    try:
        holder.write([event], fold=False)  # folded once, from the scrubbed log (`rebuild` below)
    except EventConflict:
        return None
    try:
        # Once the event is stored, no store takes a state or checkpoint folded before it: the
        # text is left only in the log (snapshots included) and a state saved since the drop
        # above, and the scrub replaces the one and drops the other.
        count = _scrub_log(store, exp.id, contexts, who, at, holder.policy, clean=True, read=log)
    except StoreError as exc:
        holder.rebuild()  # the scrub may have committed before it failed: fold what is stored
        raise advised(StoreError, f"lesson {exp.id} is erased (its erase event is stored and every read shows it "
                      f"erased), but scrubbing its text from the store failed: {exc}; ", base.ERASE_AGAIN) from exc
    holder.rebuild()  # nothing this process folded from the old text stays in memory
    return Erasure(exp.id, who, at, why, tuple(episodes), count)


def _finish(holder: Holder, store: ErasableStore, exp_id: str, event: Event, contexts: bool) -> Erasure:
    """Erase again while the erase event is stored: its cleanup (`_scrub_again`) once more, with
    that erase's who, when and contexts, so that what it already scrubbed reads as it does."""
    data = event.data
    if contexts and not data.get("contexts"):  # blanking contexts is a new erase, which needs its own event
        raise InvalidArgument(f"lesson {exp_id} was already erased (by {data.get('by')}) without its contexts; "
                              "nothing changed")
    count = _scrub_again(store, exp_id, bool(data.get("contexts")), str(data.get("by")), event.time, holder.policy)
    holder.rebuild()
    return Erasure(exp_id, str(data.get("by")), event.time, str(data.get("reason")), tuple(data.get("episodes", ())),
                   count, again=True)


def _scrub_again(store: ErasableStore, exp_id: str, contexts: bool, by: str, at: float, policy: Policy) -> int:
    """Drop the saved state, then scrub what the log holds of the lesson; how many events changed.
    The drop waits for a rewrite in flight (PostgreSQL's rewrite lock), so the read after it sees
    its snapshot."""
    store.scrub([])
    return _scrub_log(store, exp_id, contexts, by, at, policy, clean=False)


def _scrub_log(store: ErasableStore, exp_id: str, contexts: bool, by: str, at: float, policy: Policy, *,
               clean: bool, read: list[Event] | None = None) -> int:
    """Scrub what the log holds of the lesson (a scrub drops the saved state too), then what that
    scrub put back of other lessons' (`_put_back`); how many events changed. With nothing to scrub,
    `clean` (the erase itself) still drops the saved state; without it (a second erase, or another
    writer finishing one) every erased lesson is scrubbed from the whole log, since an eraser
    stopped behind its scrub may have put another's text back. The erase event stays pending
    until then: an eraser stopped before leaves it so, and the next writer finishes it (`finish`).
    `read`: the log as read before the erase event, whose tail is then all there is to read."""
    for _ in range(_TRIES):
        log = _log(store, read)
        read = None  # a retry reads the whole log
        changed, _ = scrubbed(log, exp_id, contexts, by, at, policy)
        texts = [e for e in changed if e.kind != "erase"]
        mine = [e for e in log if e.kind == "erase" and e.data.get("id") == exp_id][-1:]
        try:
            if texts and mine and not mine[0].data.get("pending"):  # pending again, for the put-back check
                store.scrub([Event("erase", {**mine[0].data, "pending": True}, mine[0].key, mine[0].seq,
                                   mine[0].time)])
            if texts or clean:
                store.scrub(texts)
        except ValueError:  # a later checkpoint replaced those events meanwhile: read the log again
            continue
        if texts or not clean:
            _put_back(store, policy, log, texts if clean else None)
        if mine and (texts or mine[0].data.get("pending")):
            try:
                store.scrub([Event("erase", {k: v for k, v in mine[0].data.items() if k != "pending"},
                                   mine[0].key, mine[0].seq, mine[0].time)])
            except ValueError:  # a checkpoint took the event out, its snapshot folded from the scrubbed log
                pass
        return len(texts)
    raise StoreError("the log was checkpointed each time it was read")


def _log(store: ErasableStore, read: list[Event] | None) -> list[Event]:
    """The whole log: `read` and what came after it, unless a checkpoint came between (then read anew)."""
    if read and _in_order(store):
        tail = store.read(read[-1].seq)
        if _follows(read, tail):
            return [*read, *tail]
    return store.read(0)


def _in_order(store: ErasableStore) -> bool:
    """Whether seq order is commit order, so that a read of the tail after a seq misses no event that
    commits later. Not in PostgreSQL's fold mode: an event may commit below a seq a reader passed."""
    return folded_rows(store) is None


def _follows(log: list[Event], tail: list[Event]) -> bool:
    """Whether `tail`, read after `log`, continues it: no checkpoint replaced what it holds."""
    return not any(e.kind == "snapshot" for e in tail) and (not tail or tail[0].seq == (log[-1].seq if log else 0) + 1)


def _put_back(store: ErasableStore, policy: Policy, log: list[Event], written: list[Event] | None) -> None:
    """Scrub again what the log holds of every lesson its erase events name, until a read finds
    nothing to scrub. Two erases at once each rewrite an event both lessons are in (a snapshot)
    from the log as each read it: the later write puts back the text the earlier one took out,
    and only a read after it, by the later eraser, sees both erase events.

    Only what this scrub `written` (from `log`) can hold text it put back, and each other writer
    checks what it wrote: unless the erase events stored so far change it, or a checkpoint came
    since, no read of the whole log is needed (where seq order is commit order: `_in_order`).

    The slices an erase with contexts took out are named by the contexts it blanked in the same
    write: a scrub from a read before that write holds both, so `log` names them (`scrubbed`'s `read`)."""
    stale = log
    if written is not None and _in_order(store):
        tail = store.read(log[-1].seq if log else 0)
        if _follows(log, tail):
            current = {e.seq: e for e in written}
            scrub_all(current, [e for e in [*log, *tail] if e.kind == "erase"], policy, [*log, *tail])
            if all(current[e.seq].data == e.data for e in written):
                return
    for _ in range(_TRIES):
        log = store.read(0)
        current = {e.seq: e for e in log}
        scrub_all(current, [e for e in log if e.kind == "erase"], policy, stale)
        # Only the texts: each erase event is marked done by its own eraser, after its own check.
        changed = [e for e, stored in zip(current.values(), log, strict=True)
                   if e.data != stored.data and e.kind != "erase"]
        if not changed:
            return
        try:
            store.scrub(changed)
        except ValueError:  # a later checkpoint replaced those events meanwhile: read the log again
            continue
    raise advised(StoreError, "other writers kept changing the log while erase scrubbed it: ", base.ERASE_AGAIN)


def scrub_all(current: dict[int, Event], erases: list[Event], policy: Policy, read: list[Event] | None = None) -> None:
    """`current` (events by seq) with the lesson of each of `erases` scrubbed from it (`read`: as `scrubbed`'s)."""
    for erase in erases:
        data = erase.data
        again, _ = scrubbed(current.values(), str(data.get("id")), bool(data.get("contexts")),
                            str(data.get("by")), erase.time, policy, read=read or ())
        current.update((e.seq, e) for e in again)


def finish(follower: Follower, unscrubbed: dict[int, Event], *, at_once: bool = False) -> bool:
    """Finish the scrub of each erase event of `unscrubbed` (by seq) pending for `GRACE` seconds
    (its eraser was stopped behind the event), as a second `erase` would; unless the store shows it
    finished meanwhile. Each one done or found done leaves `unscrubbed`. A failure (a busy store)
    waits another `GRACE` before the next try. True when it scrubbed: the caller then forgets
    what it folded from the old text.

    `at_once` (a checkpoint, whose snapshot takes the pending event out of the log, so no later
    writer would know to scrub what the rewrite leaves in the files) finishes each pending erase
    now and raises the failure."""
    store, now = follower.store, time.time()
    if not isinstance(store, ErasableStore) or not at_once and now < follower.erasing_after:
        return False
    due = [e for e in unscrubbed.values() if at_once or now - e.time >= GRACE]
    finished = False
    for event in due:
        # The lookup too: a writer finishes another engine's erase after its own write went
        # through, which a store failing now (a lost connection) must not turn into an error.
        try:
            stored = store.lookup([event.key]) if isinstance(store, KeyedStore) and event.key else [event]
            if stored and stored[0].seq == event.seq and stored[0].data.get("pending"):
                data = event.data
                _scrub_again(store, str(data["id"]), bool(data.get("contexts")), str(data["by"]), event.time,
                             follower.policy)
                finished = True
        except StoreError:
            if at_once:
                raise
            follower.erasing_after = now + GRACE
            break
        del unscrubbed[event.seq]
    if finished:
        _forget_whatif(store.location)
    return finished


def _already_erased(exp_id: str, erased: dict[str, Any]) -> InvalidArgument:
    return InvalidArgument(f"lesson {exp_id} was already erased (by {erased.get('by')}); nothing changed")


def _forget_whatif(location: str) -> None:
    """Remove the what-if fold cached for this store, and the copy this process keeps of it (it may
    hold the blanked contexts)."""
    from lamar.whatif.cache import forget

    forget(location)


def scrubbed(events: Iterable[Event], exp_id: str, contexts: bool, by: str, at: float,
             policy: Policy, *, read: Iterable[Event] = ()) -> tuple[list[Event], list[str]]:
    """The events of a log that change when `exp_id` is erased, as they are to be stored (same
    seq, kind, key and time), and the ids of the episodes whose contexts are blanked.

    Changed: the lesson's `experience` event, each `edit` and `scope` event of it, and its entry in
    every checkpoint snapshot (text and scope values erased: `lamar.policy.fold.erased_lesson`).
    With `contexts`, every episode it was eligible in, logged or kept by a snapshot, gets the
    context {} (no key, no value), and a snapshot's lessons
    lose the slices named by a key=value of those contexts (a slice's name is context text). The
    lesson-wide evidence reads no context, so it stays as it was; so does that of a lesson narrowed
    to such a slice: its `scope` event (of any lesson) keeps the slice, folded under `policy`.
    `read`: the log as read earlier, whose contexts (blanked since) name slices too.
    """
    log = list(events)
    blanked: list[str] = []
    pairs: set[tuple[str, str]] = set()  # key=value of the blanked contexts
    if contexts:
        for episode_id, context in _eligible(log, exp_id):
            blanked.append(episode_id)
            pairs.update(context.items())
        for _, context in _eligible(read, exp_id):
            pairs.update(context.items())
    kept = _continued(log, pairs, policy) if pairs else {}
    changed: list[Event] = []
    for event in log:
        data: dict[str, Any] | None = None
        if event.kind == "experience" and event.data.get("id") == exp_id:
            data = erased_lesson(event.data, by, at)
        elif event.kind == "edit" and event.data.get("id") == exp_id:  # every later version's text too
            data = erased_text(event.data)
        elif event.kind == "scope" and event.data.get("id") == exp_id:
            data = _erased_narrowing(event.data, contexts)
        elif event.kind == "episode" and contexts and exp_id in event.data.get("eligible", ()):
            data = {**event.data, "context": {}}
        elif event.kind == "applied" and _quoted_in_no(event.data, exp_id):
            data = {**event.data, "reason": ERASED}  # a rejection's reason quotes the lessons it names
        elif event.kind == "snapshot":
            data = _scrubbed_snapshot(event.data, exp_id, contexts, by, at, pairs)
        elif event.kind == "erase" and event.data.get("id") == exp_id and event.data.get("pending"):
            data = {k: v for k, v in event.data.items() if k != "pending"}  # done with the scrub, atomically
        if event.seq in kept:
            data = {**(event.data if data is None else data), "continued": kept[event.seq]}
        if data is not None and data != event.data:
            changed.append(Event(event.kind, data, event.key, event.seq, event.time))
    return changed, blanked


def _eligible(events: Iterable[Event], exp_id: str) -> Iterable[tuple[str, dict[str, str]]]:
    """(id, context) of each episode, logged or kept by a snapshot, that `exp_id` was eligible in."""
    for event in events:
        if event.kind == "episode" and exp_id in event.data.get("eligible", ()):
            yield event.data["id"], event.data.get("context", {})
        elif event.kind == "snapshot":
            for row in event.data.get("episodes", ()):
                if exp_id in row[_ELIGIBLE]:
                    yield row[_ID], row[_CONTEXT]


class _Continued(FoldCache):
    """A fold of the log that keeps, for each scope event in `scopes` (by seq), the slice its
    narrowing continues as the log folds before its contexts are blanked."""

    def __init__(self, policy: Policy, wanted: set[int]) -> None:
        super().__init__(policy, "the log being erased")
        self.scopes = wanted
        self.found: dict[int, dict[str, Any]] = {}

    def _narrow(self, data: Mapping[str, Any]) -> None:
        state = self.lessons.get(data["id"])
        if self.seq in self.scopes and state is not None and data["key"] not in state.experience.scope:
            kept = data.get("continued") or state.slices.continued(data["key"], data["value"])
            if kept is not None:
                self.found[self.seq] = dict(kept)
        super()._narrow(data)


def _continued(log: list[Event], pairs: set[tuple[str, str]], policy: Policy) -> dict[int, dict[str, Any]]:
    """The slice each narrowing to a blanked key=value continues, by its scope event's seq: once
    the contexts that fed it are {}, a fold of the log finds it in the event instead."""
    wanted = {e.seq for e in log if e.kind == "scope" and (e.data.get("key"), e.data.get("value")) in pairs}
    if not wanted:
        return {}
    fold = _Continued(policy, wanted)
    fold.fold_log(log)
    return fold.found


def _erased_narrowing(data: dict[str, Any], contexts: bool) -> dict[str, Any]:
    """A scope event of the erased lesson: its reason (which names the value) reads ERASED. The
    value stays unless the contexts go too: the fold reads it to pick the slice whose evidence the
    narrowed lesson continues, and the contexts that slice was measured in hold it anyway."""
    out = {**data, "reason": ERASED} if data.get("reason") else dict(data)
    if contexts:  # no episode of the lesson keeps a context, so no slice is named by the value
        out["value"] = ERASED
    return out


def _scrubbed_index(index: list[Any], exp_id: str, scope: dict[str, Any]) -> list[Any]:
    """A snapshot's scope buckets with the lesson moved to the bucket of its erased scope, and
    every empty bucket gone (its scope, which may name a person, is no lesson's now)."""
    out: list[Any] = []
    moved = False
    for key, ids in index:
        kept = [i for i in ids if i != exp_id]
        moved = moved or len(kept) < len(ids)
        if kept:
            out.append([key, kept])
    if moved:
        erased = sorted([k, v] for k, v in scope.items())
        held = next((row for row in out if row[0] == erased), None)
        if held is None:
            out.append([erased, [exp_id]])
        else:
            held[1] = [*held[1], exp_id]
    return out


def _quoted_in_no(data: object, exp_id: str) -> bool:
    """Whether `data` is a rejection's (`lamar.sleep.rejected`) whose reason may quote lesson `exp_id`."""
    if not isinstance(data, dict) or not data.get("reason") or data.get("reason") == ERASED:
        return False
    return isinstance(data.get("lessons"), list) and exp_id in data["lessons"]


def _scrubbed_snapshot(data: dict[str, Any], exp_id: str, contexts: bool, by: str, at: float,
                       pairs: set[tuple[str, str]]) -> dict[str, Any]:
    lessons = []
    for raw in data.get("lessons", ()):
        if isinstance(raw, dict) and isinstance(raw.get("experience"), dict):
            if raw["experience"].get("id") == exp_id:
                raw = {**raw, "experience": erased_lesson(raw["experience"], by, at)}
                if isinstance(raw.get("history"), dict) and isinstance(raw["history"].get("trail"), list):
                    raw = {**raw, "history": {**raw["history"], "trail": [
                        [t, erased_note(note)] for t, note in raw["history"]["trail"]]}}
            slices = raw.get("slices")
            if pairs and isinstance(slices, dict) and "slices" in slices:
                kept = [s for s in slices["slices"] if (s[0], s[1]) not in pairs]
                raw = {**raw, "slices": {**slices, "slices": kept}}
        lessons.append(raw)
    out = {**data, "lessons": lessons}
    if isinstance(noes := data.get("noes"), dict):  # what a checkpoint keeps of each rejection
        out["noes"] = {r: {**seen, "reason": ERASED} if _quoted_in_no(seen, exp_id) else seen
                       for r, seen in noes.items()}
    if isinstance(data.get("index"), list):
        out["index"] = _scrubbed_index(data["index"], exp_id, next(
            (raw["experience"].get("scope", {}) for raw in lessons if isinstance(raw, dict)
             and isinstance(raw.get("experience"), dict) and raw["experience"].get("id") == exp_id), {}))
    if contexts and "episodes" in data:
        out["episodes"] = [[*row[:_CONTEXT], {}, *row[_CONTEXT + 1:]] if exp_id in row[_ELIGIBLE] else row
                           for row in data["episodes"]]
    return out


__all__ = ["GRACE", "Erasure", "erase", "finish", "scrub_all", "scrubbed"]
