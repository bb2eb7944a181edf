"""`Follower`: keeps a fold cache in step with a store's log, from a saved state when it can."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext

from lamar._errors import StoreError, UnknownEpisode, UnknownExperience
from lamar.arguments import unknown
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.state.cache import FoldCache
from lamar.state.episode import EpisodeRecord
from lamar.state.prebuilt import Prebuilt, after_rewrite, prebuild, still_true
from lamar.state.saved import fingerprint, kept_episodes, read_state, state_text
from lamar.state.snapshot import restore
from lamar.store.base import ErasableStore, Event, KeyedStore, RewritableStore, Store, StoredText, TextStore
from lamar.store.decode import no_cycle_collection

# Events folded past the saved state before a write saves it again (at least): one save per
# many writes keeps writes cheap, and reopening then folds a short tail. A large state (many
# lessons, many pending episodes) waits as many events, so saving it costs a write O(1).
_STATE_EVERY = 512
# Events a process that only reads folds past the saved state before it saves the state itself. A reader
# leaves the store as it found it, except where every later reader would fold as long a log again: a store
# filled through `store.append` (an importer, a copy) that no engine has written since has no state at all.
_READER_STATE_EVERY = 5000


class Follower:
    """A store's log folded into a `FoldCache`: this process's folded state.

    Called under the engine's lock. Every write goes through `append`, so the follower knows
    whether this process wrote: readers (stats, ls, html) leave the store as it was, unless they
    folded a long log past the saved state (`reader_due`), and in PostgreSQL's fold mode (`SettledFollower`).
    """

    def __init__(self, store: Store, policy: Policy, private: bool = False) -> None:
        self.store = store
        self.policy = policy
        self._keyed: KeyedStore | None = store if isinstance(store, KeyedStore) else None
        self.cache = FoldCache(policy, store.location, self._keyed.lookup if self._keyed is not None else None)
        self.state_seq = 0  # the seq of the state last saved or loaded (see resume, save)
        # Events folded past that state (`state_due`): counted, not told by seqs, which on PostgreSQL
        # other namespaces (and the fold mode's row versions) take from the one sequence they share.
        self.unsaved = 0
        self.foreign = False  # the state found beside the log was another Lamar's or tuning's (see resume)
        self.state_size = 0  # the lessons and episodes the state last saved held
        self.wrote = False
        self.erasing_after = 0.0  # when this writer next tries to finish an erase's scrub (`erasure.finish`)
        self.scrubs = True  # False while a checkpoint holds the log: no scrub may run then
        # `Lamar(":memory:")`'s own store closes with it: only an engine opened on `lam.store` could load a
        # saved state there, and without one it folds the log and decides the same. So its state (a JSON
        # text of every lesson) is not written as it goes; a checkpoint still writes it (see `_rewrite`).
        self.private = private

    def append(self, events: list[Event]) -> list[Event]:
        self.wrote = True
        return self.store.append(events)

    def sync(self) -> None:
        """Fold the events other writers (and we) appended since we last looked."""
        self.fold_tail(self.store.read(self.cache.seq))
        self.finish_erasures()
        if not self.private and (self.state_due() if self.wrote else self.reader_due()):
            self.save()

    def finish_erasures(self) -> None:
        """Finish the scrub of an erase stopped behind its event: only a writer, so that an engine
        that only reads leaves the store as it was (`lamar.state.erasure.finish`)."""
        if self.scrubs and self.wrote and self.cache.unscrubbed:
            from lamar.state.erasure import finish

            if finish(self, self.cache.unscrubbed):
                self.refold()

    def refold(self) -> None:
        """Forget the cache and fold the whole log again."""
        with no_cycle_collection():  # the fold builds a long-lived object per episode and lesson, no cycle
            log = self.store.read(0)
            self.cache.fold_log(log)
        if self.wrote and self._keyed is not None and self._keyed.load_state() is None:
            # An erase's scrub drops the saved state, and the cache is folded again after it: a writer
            # that still counted the state as saved would not save one soon (`state_due`) nor at close
            # (`save_if_worth`), and until another did, every reader would fold the whole log.
            self.state_seq = self.state_size = 0
        self.folded_whole(log)

    def folded_whole(self, log: list[Event]) -> None:
        """Count the events of a whole log just folded that lie past the saved state."""
        self.unsaved = len(log) - bisect_right(log, self.state_seq, key=lambda e: e.seq)

    def whole(self) -> None:
        """Fold the whole log when the cache resumed from a saved state (sleep, checkpoint need every episode)."""
        if self.cache.partial:
            self.refold()

    def fold_tail(self, events: list[Event]) -> None:
        # A compaction of episodes that a resumed cache never loaded needs them: the whole log
        # again. So does an erasure: the log before it was scrubbed, and what this cache folded
        # from the old text (the slices of blanked contexts) must go with it.
        if any(e.kind == "erase" for e in events) or (self.cache.partial and any(e.kind == "compact" for e in events)):
            self.refold()
            return
        self.unsaved += len(events)
        for event in events:
            if event.kind != "outcome" or not event.data.get("replace"):
                self.cache.fold(event)
            elif not self._replaced(event):
                self.refold()
                return

    def _replaced(self, event: Event) -> bool:
        """Fold a replacement as folding the whole log would; False (nothing folded) when only that can.

        The whole log counts the replacement at its own seq and skips the outcome it replaces, so
        every fold after that outcome changes (the reward spread each later outcome was folded
        with, the lessons' baselines and fall detectors): the cache goes back to a mark before it
        (`lamar.state.marks`) and folds the log again from there, through `event`.
        """
        cache = self.cache
        cache.marks.start()  # from the first replacement on: the next ones find a mark (a first one refolds)
        episode_id = event.data.get("episode")
        record = cache.episode(episode_id) if isinstance(episode_id, str) else None
        if record is None or record.sealed:
            return False  # what the whole log makes of an outcome the fold refuses
        if record.reports and record.settled == "expired" and episode_id not in cache.pinned:
            # The outcome it replaces changed nothing but its record, which this one sets anew.
            # Not for an episode a checkpoint holds: its expiry's event is gone, and folding the log
            # from the snapshot takes a plain report written after it as the outcome replaced.
            cache.marks.drop_from(record.outcome_seq)
        elif record.reports:
            mark = cache.marks.before(record.outcome_seq)
            if mark is None:
                return False
            # Read before going back: a read that fails leaves the cache as it was, where a cache
            # gone back to the mark would fold every event after it again as new at the next sync.
            again = [e for e in self.store.read(mark.seq) if e.seq <= event.seq]
            if not again or again[-1].seq != event.seq or any(e.kind not in ("episode", "outcome") for e in again):
                # The log no longer holds it as folded (a mark loaded with a state saved before a
                # checkpoint, whose snapshot now stands after the mark): fold it whole.
                return False
            try:
                cache.rewind(record.outcome_seq)
                cache.refold(again)
            except BaseException:
                # Stopped half way (an interrupt, no memory left): the next call folds the whole log,
                # where from the seq reached it would fold the events after it again as new.
                cache.reset()
                raise
            return True
        cache.fold(event)  # (with no report to replace, a first report)
        return True

    def state_due(self, every: int = _STATE_EVERY) -> bool:
        """Whether the cache has folded enough past the saved state to save it again: at least `every` events,
        and as many as the state holds, so that saving a large state costs each event O(1)."""
        return self.unsaved >= max(every, len(self.cache.lessons), self.state_size)

    def reader_due(self) -> bool:
        """Whether a process that only read folded so long a log past the saved state that it saves the
        state itself: never over a state another Lamar or tuning saved, whose engines would then fold the
        whole log; a store told to leave the file as it found it (`writes_on_read`) refuses the save."""
        return not self.foreign and self.state_due(_READER_STATE_EVERY)

    def resume(self, through: int | None = None) -> bool:
        """Load the state this store's engines saved, if it still describes the log, and fold the
        tail (up to seq `through`, if given: the fold mode's settled seq).

        Refused (and the log replayed instead): no state, a torn or edited one (checksum),
        another STATE_VERSION or tuning, or a log whose event at the state's seq is gone or
        different (rolled back, rewritten, another store's state).
        """
        if self._keyed is None:
            return False
        with no_cycle_collection():  # the state decodes into long-lived objects, none in a cycle
            return self._resume(self._keyed, through)

    def _resume(self, keyed: KeyedStore, through: int | None) -> bool:
        text = keyed.load_state()
        if text is None:
            return False
        try:
            payload = read_state(text, self.policy)
        except (ValueError, TypeError, AttributeError, RecursionError):  # nested past any state: crafted
            self.foreign = True
            return False
        seq = payload["seq"]
        # The event the state names is checked by its stored text: left undecoded, a checkpoint's
        # snapshot (the whole state again, episodes included) costs no second parse.
        first: Event | StoredText
        if isinstance(self.store, TextStore):
            rows = self.store.read_texts(seq - 1) if seq > 0 else []
            if not rows:
                return False
            first, events = rows[0], self.store.read(seq)  # the tail decoded as one read decodes it
        else:
            read = self.store.read(seq - 1) if seq > 0 else []
            if not read:
                return False
            first, events = read[0], read[1:]
        if first.seq != seq or fingerprint(first) != payload["last"]:
            return False
        cache = self.cache
        try:
            data = payload["state"]
            restore(cache, data)
            sealed = set(data.get("sealed", ()))
            for record in cache.episodes.values():
                record.sealed = record.id in sealed
            cache.pinned = set(data["pinned"]) & set(cache.episodes)
            cache.n_episodes, cache.wanted, cache.held = (int(n) for n in data["counters"])
            cache.marks.load(data.get("marks", ()), seq, cache.lessons)
        except (KeyError, TypeError, ValueError, AttributeError):
            cache.reset()
            return False
        cache.partial = True
        cache.seq = cache.base = self.state_seq = seq
        cache.last = first
        self.unsaved = 0
        self.fold_tail([e for e in events if through is None or e.seq <= through])
        return True

    def may_save(self) -> bool:
        """Whether the cache describes the log through its seq (it does, in this mode)."""
        return True

    def save(self) -> None:
        """Save the folded state beside the log (a cache: failing to save loses nothing)."""
        last = self.cache.last
        if self._keyed is None or not self.may_save() or last is None or last.seq != self.cache.seq:
            return
        if self.cache.unscrubbed and isinstance(self.store, ErasableStore):
            return  # a state past an unscrubbed erase event would hide it from the next writer, who scrubs
        self.state_seq = self.cache.seq  # a store that cannot take it (read-only, busy) is not asked again soon
        self.unsaved = 0
        if not self._findable():
            # Another process checkpointed below our seq: the episodes the state would leave
            # out are gone from the log into its snapshot. Fold the log as it now is (the
            # snapshot pins and seals them), and save that fold's state if it is findable.
            self.refold()
            last, self.state_seq, self.unsaved = self.cache.last, self.cache.seq, 0
            if not self.may_save() or last is None or not self._findable():
                return
        self.state_size = len(self.cache.lessons) + len(kept_episodes(self.cache))
        try:
            self._keyed.save_state(self.cache.seq, state_text(self.cache, last))
        except (StoreError, OSError):
            pass

    def _findable(self) -> bool:
        """Whether the episodes a saved state leaves out (reported, not pinned) can still be
        looked up by key: checked on the oldest, since a checkpoint removes a prefix of the log."""
        cache = self.cache
        oldest = next((r.id for r in cache.episodes.values() if r.reports and r.id not in cache.pinned), None)
        return oldest is None or self._keyed is None or bool(self._keyed.lookup([f"episode:{oldest}"]))

    def saves_at_close(self) -> bool:
        """Whether `save_if_worth` folds the tail and saves: a writer whose store others may open."""
        return self.wrote and not self.private

    def save_if_worth(self) -> None:
        """Save the state at close when the tail folded past it is long enough to matter (`saves_at_close`)."""
        if not self.saves_at_close():
            if not self.private and self.reader_due():
                self.save()  # a reader that resumed and folded a long tail, with no call since
            return
        # The tail is counted once folded: this engine's last writes (in the fold mode, every one since its last
        # call that folded) are not folded yet. And what others wrote: a lesson another process erased since holds
        # its text in this cache, and a state saved from it would store that text beside the scrubbed log.
        try:
            self.sync()
        except StoreError:
            return  # a cache: failing to save loses nothing
        tail = self.unsaved
        if tail > 0 and tail * 16 >= len(self.cache.lessons) and self.state_seq != self.cache.seq:
            self.save()

    def lesson(self, exp_id: str) -> LessonState:
        """The lesson's folded state; UnknownExperience when the log has none by that id."""
        state = self.cache.lessons.get(exp_id) if isinstance(exp_id, str) else None
        if state is None:
            raise unknown(UnknownExperience, exp_id, self.store.location)
        return state

    def find(self, episode_id: str) -> EpisodeRecord | None:
        """The logged episode, None when the log has none by that id (`FoldCache.episode`).

        A cache resumed from a saved state finds the episodes the state left out by their keys, and
        a checkpoint that another process took since then dropped those keys (its snapshot holds
        the episodes, past the seq this cache folded): on a miss, such a cache folds the log as it
        now stands and looks again, once, since the cache it folds looks up nothing.
        """
        record = self.cache.episode(episode_id)
        if record is None and self.cache.partial and isinstance(episode_id, str):
            self.refold()
            record = self.cache.episode(episode_id)
        return record

    def checkpointed_elsewhere(self, record: EpisodeRecord) -> bool:
        """Whether another process's checkpoint took the reported episode into its snapshot after this cache
        folded it: its key is gone with its event, and only a fold of the log as it now stands seals it."""
        return bool(record.reports) and not record.sealed and self._keyed is not None and not self._keyed.lookup(
            [f"episode:{record.id}"])

    def episode(self, episode_id: str) -> EpisodeRecord:
        """The logged episode; UnknownEpisode when the log has none by that id."""
        record = self.find(episode_id)
        if record is None:
            raise unknown(UnknownEpisode, episode_id, self.store.location)
        return record

    def checkpoint(self, store: RewritableStore,
                   hold: Callable[[], AbstractContextManager[None]] = nullcontext) -> bool:
        """Replace the log up to the last event folded by one snapshot of the cache (see `Lamar.checkpoint`),
        under `hold` (the fold mode's lock on the log), once a pending erase's scrub is finished."""
        self.sync()
        self._finish_pending(store)
        # The whole log folded before the hold, which then folds only what was written meanwhile: a cache
        # resumed from a saved state would fold it all again under the hold, while every writer waits.
        self.whole()
        # The snapshot too (its build and its text grow with the episodes): under the hold, what was written
        # meanwhile is folded, and the snapshot replaces the log up to its seq while that leaves it true.
        built = None
        if self.cache.seq and self.may_save():
            self._in_rows_order()
            built = prebuild(self.cache)
        with hold():
            # A scrub takes the store's write lock itself, which `hold` may hold: it would wait here for ever.
            self.scrubs = False
            try:
                done = self._rewrite(store, built)
            finally:
                self.scrubs = True
        # After the hold: the state names the snapshot, which stays whatever is written after it. Unsaved,
        # every open until a writer's next save would fold the snapshot whole.
        if done:
            self.save()
        return done

    def _finish_pending(self, store: RewritableStore) -> None:
        if self.cache.unscrubbed and isinstance(store, ErasableStore):
            # The snapshot takes a pending erase event out of the log, and a rewrite does not
            # compact the store: its scrub has to be finished first, or no writer ever would.
            from lamar.state.erasure import finish

            try:
                if finish(self, self.cache.unscrubbed, at_once=True):
                    self.refold()  # nothing folded from the old text goes into the snapshot
            except StoreError as exc:
                raise StoreError(f"cannot checkpoint {self.store.location} now: it first finishes the scrub of "
                                 f"an erase stopped behind its event, which failed ({exc}); nothing was "
                                 "rewritten: checkpoint again") from exc

    def _rewrite(self, store: RewritableStore, built: Prebuilt | None = None) -> bool:
        self.sync()
        if self.cache.unscrubbed and isinstance(store, ErasableStore):
            raise StoreError(f"cannot checkpoint {self.store.location} now: an erase stored meanwhile has not "
                             "finished its scrub; nothing was rewritten: checkpoint again")
        self.whole()
        cache = self.cache
        if cache.seq == 0:
            return False
        if not self.may_save():
            # An event below the cache's seq may still commit (its writer is mid-write, which the
            # checkpoint's lock rules out while held): a snapshot there would hide it for good.
            raise StoreError(f"cannot checkpoint {self.store.location} now: a write in flight did not end "
                             "within a second (the checkpoint's lock on the log was lost); nothing was "
                             "rewritten: checkpoint again")
        self._in_rows_order()
        if built is None or not still_true(built, cache, self._written_since(built.event.seq)):
            built = prebuild(cache)
        snapshot = built.event
        done = bool(store.rewrite(snapshot.seq, snapshot))
        if snapshot.seq == cache.seq:
            if done:  # the state saved before names an event now gone: save one that names the snapshot
                cache.last = snapshot
        elif not done:
            cache.reset()  # another snapshot stands, past what this one holds: the next call folds the log as it is
            return False
        after_rewrite(built, cache)  # as a process that reads the snapshot sees them
        return done

    def _written_since(self, seq: int) -> list[Event]:
        """The events this cache folded past `seq`."""
        return [e for e in self.store.read(seq) if e.seq <= self.cache.seq] if self.cache.seq > seq else []

    def _in_rows_order(self) -> None:
        """Put the lessons in the order a store that holds their rows lists them (see SettledFollower)."""


def rewritable(store: Store) -> RewritableStore:
    """`store`, when a checkpoint can rewrite its log; StoreError (nothing changed) when not."""
    if not isinstance(store, RewritableStore):
        raise StoreError(f"{type(store).__name__} at {store.location} cannot rewrite its log, "
                         "so it cannot be checkpointed; compaction still bounds the engine's memory")
    return store


class SettledFollower(Follower):
    """The follower of a store that folds its own rows (PostgreSQL's fold mode).

    Seq order is not commit order there (a write may commit after another that took a later
    seq), so a read of the tail after the last folded seq could pass over a late event for
    good. Only the settled part of the log is folded (`settled()`: the seq through which none
    can still appear). The cache starts from the saved state when there is one and saves it as a
    log-mode writer does, in a process that only read too, since no fold-mode write folds the log.
    When the writes in flight do not end within a second, the whole log as it now stands is folded,
    and folded again from the start next time. `places` gives each lesson row's place (`FoldedRows.places`).
    """

    def __init__(self, store: Store, policy: Policy, settled: Callable[[], int | None],
                 places: Callable[[], Mapping[str, int]] = dict) -> None:
        super().__init__(store, policy)
        self._settled = settled
        self._places = places

    def _in_rows_order(self) -> None:
        # Two adds at once may stand in one order in the rows and in the other in the log, and the
        # engines list the rows' order: a snapshot in it makes what reads the log itself (a copy,
        # the log mode, a build) list the lessons as they do. Read under the checkpoint's
        # exclusive lock, while no add can take a place.
        self.cache.put_in_order(self._places())

    def sync(self, whole: bool = False) -> None:
        cache = self.cache
        through = self._settled()
        if through is None:
            cache.fold_log(self.store.read(0))
            cache.settled = False
            return
        if whole or not cache.settled:
            if whole or not self.resume(through):
                log = [e for e in self.store.read(0) if e.seq <= through]
                cache.fold_log(log)
                self.folded_whole(log)
            cache.settled = True
        else:
            self.fold_tail([e for e in self.store.read(cache.seq) if e.seq <= through])
        self.finish_erasures()
        # No fold-mode write folds the log, so a process that only reads (stats, show, ui) saves the state too:
        # else each one folds the whole log again. Not over a state another Lamar or tuning saved, which its
        # engines would then fold whole; a store told to leave the namespace as it found it (`lamar mcp
        # --read-only`, `PostgresStore.writes_on_read`) refuses the save.
        if (self.wrote or not self.foreign) and self.state_due():
            self.save()

    def refold(self) -> None:
        with no_cycle_collection():  # as Follower.refold
            self.sync(whole=True)

    def saves_at_close(self) -> bool:
        # A reader saves too, as in `sync`. Only a cache this engine folded: one that never folded (a writer
        # without `pending_after`) would fold at close what the next call that needs the fold folds anyway.
        return self.cache.settled and (self.wrote or not self.foreign)

    def may_save(self) -> bool:
        # Only a cache of the settled log (no event below its seq can still commit) describes
        # the log through its seq.
        return self.cache.settled


__all__ = ["Follower", "SettledFollower", "rewritable"]
