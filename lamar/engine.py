"""`Lamar`: add lessons, recall them for a context, report what happened, judge, sleep, apply.

The data path, end to end:

    recall(context) -> episode event (eligible, injected, held out, propensities)
    report(episode, signal) -> outcome event
    fold(outcome) -> each eligible lesson's selection model, ledger, change detector
    evidence(lesson) -> verdict from the ledger's anytime-valid bound
    sleep() -> proposals (retire, merge, ...) ; apply(report) -> status and merge events

Every write is an event appended to the store; the state here is a cache folded from
those events, so several processes sharing one store converge on the same state. A store in
the fold mode (PostgreSQL's default, `store.rows`) holds the folded state itself: the engine
then reads the rows it needs and writes events that the store folds (lamar/store/postgres_rows.py).
"""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import random
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Self

from lamar import arguments
from lamar._errors import (
    CorruptStore,
    DuplicateReport,
    EventConflict,
    InvalidArgument,
    InvalidExperience,
    StoreError,
    UnknownEpisode,
    UnknownExperience,
)
from lamar.checkpoint import (
    add_to_audit,
    fingerprint,
    new_audit,
    read_state,
    restore,
    snapshot_of,
    state_text,
    tuning_of,
)
from lamar.experience import Experience, Status, check_context, new_id
from lamar.pending import PendingEpisode, expire, pending, settle
from lamar.policy import fold
from lamar.policy.choose import choose
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.policy.verdicts import Evidence, Verdict
from lamar.recall import Recall
from lamar.signals import Signal, to_reward
from lamar.state.episode import EpisodeRecord
from lamar.state.view import EngineView
from lamar.store import Event, Store
from lamar.store.base import RowsView

if TYPE_CHECKING:
    from lamar.policy.history import LessonHistory
    from lamar.sleep.proposals import ApplyResult, SleepReport
    from lamar.store.postgres_rows import LessonRows
    from lamar.whatif.report import WhatIfReport

_STATE_EVERY = 512  # events folded past the saved state before a write saves it again (at least)
# The fold mode: a recall applies the pending policy (which needs the engine's own fold of the
# log) at most once in this many seconds, or in a quarter of `pending_after` if that is shorter.
_SETTLE_EVERY = 60.0


class Lamar:
    """The experience engine.

    Args:
        store: an `ExperienceStore`, any object with the store protocol, or a location
            (":memory:", a .json or .db path, a postgresql:// URL).
        k: most lessons injected per recall.
        seed: seed of the engine's coins and tie-breaks (None: from the OS).
        **tuning: fields of `lamar.policy.Policy` (explore, holdout, holdout_proven, ...).

    >>> from lamar import Lamar, Experience, Scope, Signal
    >>> lam = Lamar(":memory:", k=2, seed=1)
    >>> eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    >>> rec = lam.recall({"project": "x"})
    >>> rec.ids == [eid] or rec.held_out == (eid,)
    True
    >>> lam.report(rec.episode_id, Signal.SHIPPED)
    >>> lam.stats()["reports"]
    1
    """

    def __init__(self, store: Store | str | os.PathLike[str] = ":memory:", k: int = 3,
                 seed: int | None = None, **tuning: Any) -> None:
        opened: Store = arguments.engine_store(store)
        k = arguments.slots(k)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InvalidArgument(f"seed is a whole number or None; got {seed!r}")
        self.policy: Policy = arguments.policy(tuning)
        self.store: Store = opened
        self.k = k
        self.seed = seed
        self._rng = random.Random(seed)
        self._lock = _thread.RLock()  # threading.RLock itself; importing threading costs a cold start
        self._state_seq = 0  # the seq of the state last saved or loaded (see _resume, _save_state)
        # Readers (stats, ls, html) never save the state: they leave the store as it was. In the
        # fold mode whoever folds the log saves it (writers read the rows and never fold it).
        self._wrote = False
        # The fold mode: the store holds every lesson's folded state in rows (None: this cache does).
        self._rows: LessonRows | None = getattr(opened, "rows", None)
        self._reads: Any = self._rows if self._rows is not None else _CacheReads(self)
        self._tuning_text: str | None = None
        self._next_settle = 0.0  # the fold mode: when a recall next applies the pending policy (monotonic)
        self._reset()
        with self._lock:
            if self._rows is None and not self._resume():
                self._sync()

    # -- the cache ---------------------------------------------------------------------------

    def _reset(self) -> None:
        self._seq = 0
        self._lessons: dict[str, LessonState] = {}
        self._index: dict[tuple[tuple[str, str], ...], dict[str, LessonState]] = {}
        self._episodes: dict[str, EpisodeRecord] = {}
        self._applied: set[str] = set()
        self._n_active = 0
        self._reports = 0
        self._compacted: dict[str, Any] = new_audit()
        self._ignored: set[int] = set()  # seqs of events the fold refused (see _fold_outcome)
        self._reward_n = 0
        self._reward_mean = 0.0
        self._reward_m2 = 0.0
        # Counters over the episodes not compacted, so stats need not hold every episode.
        self._n_episodes = 0
        self._wanted = 0
        self._held = 0
        self._last: Event | None = None  # the last event folded: a saved state names it
        # Resumed from a saved state: older episodes stay in the store until one is needed.
        self._partial = False
        self._base = 0  # the seq the resumed state was folded to
        self._pinned: set[str] = set()  # episodes known only from a checkpoint snapshot
        self._unsettled: deque[str] | None = None  # pending episode ids, oldest first (lamar.pending)
        self._settled = False  # the fold mode: this cache holds the log through a settled seq (_fold_settled)

    def _append(self, events: list[Event]) -> list[Event]:
        self._wrote = True
        return self.store.append(events)

    def _sync(self) -> None:
        """Fold the events other writers (and we) appended since we last looked.

        In the fold mode only the paths that need this cache come here (stats, sleep, pending,
        history...); recall, report and evidence read the store's rows.
        """
        if self._rows is not None:
            self._fold_settled()
            return
        self._fold_tail(self.store.read(self._seq))
        if self._wrote and self._state_due():
            self._save_state()  # amortised: one save per many writes, so reopening folds a short tail

    def _state_due(self) -> bool:
        """Whether the cache has folded enough past the saved state to save it again."""
        return self._seq - self._state_seq >= max(_STATE_EVERY, len(self._lessons))

    def _fold_settled(self, whole: bool = False) -> None:
        """The fold mode's `_sync`: fold the log through its settled seq (`LessonRows.settled`).

        Seq order is not commit order there (a write may commit after another that took a later
        seq), so a read of the tail after the last folded seq could pass over a late event for
        good. Only the settled part of the log is folded: none of it can still appear. The cache
        starts from the saved state when there is one, and saves it as a log-mode writer does
        (no fold-mode writer folds the log). When the writes in flight do not end within a
        second, the whole log as it now stands is folded, and folded again from the start next
        time.
        """
        assert self._rows is not None
        through = self._rows.settled()
        if through is None:
            self._fold_events(self.store.read(0))
            self._settled = False
            return
        if whole or not self._settled:
            if whole or not self._resume(through):
                self._fold_events([e for e in self.store.read(0) if e.seq <= through])
            self._settled = True
        else:
            self._fold_tail([e for e in self.store.read(self._seq) if e.seq <= through])
        if self._state_due():
            self._save_state()

    def _fold_tail(self, events: list[Event]) -> None:
        # A replacement unfolds an outcome, and a compaction of episodes that a resumed engine
        # never loaded needs them: both fold the whole log again.
        if any(e.kind == "outcome" and e.data.get("replace") for e in events) or (
                self._partial and any(e.kind == "compact" for e in events)):
            self._refold()
            return
        for event in events:
            self._fold(event)

    def _resume(self, through: int | None = None) -> bool:
        """Load the state this store's engines saved, if it still describes the log, and fold the
        tail (up to seq `through`, if given: the fold mode's settled seq).

        Refused (and the log replayed instead): no state, a torn or edited one (checksum),
        another STATE_VERSION or tuning, or a log whose event at the state's seq is gone or
        different (rolled back, rewritten, another store's state).
        """
        load = getattr(self.store, "load_state", None)
        if load is None or getattr(self.store, "lookup", None) is None:
            return False
        text = load()
        if text is None:
            return False
        try:
            payload = read_state(text, self)
        except (ValueError, TypeError, AttributeError):
            return False
        seq = payload["seq"]
        events = self.store.read(seq - 1) if seq > 0 else []
        if not events or events[0].seq != seq or fingerprint(events[0]) != payload["last"]:
            return False
        try:
            data = payload["state"]
            restore(self, data)
            sealed = set(data.get("sealed", ()))
            for record in self._episodes.values():
                record.sealed = record.id in sealed
            self._pinned = set(data["pinned"]) & set(self._episodes)
            self._n_episodes, self._wanted, self._held = (int(n) for n in data["counters"])
        except (KeyError, TypeError, ValueError, AttributeError):
            self._reset()
            return False
        self._partial = True
        self._seq = self._base = self._state_seq = seq
        self._last = events[0]
        self._fold_tail([e for e in events[1:] if through is None or e.seq <= through])
        return True

    def _save_state(self) -> None:
        """Save the folded state beside the log (a cache: failing to save loses nothing)."""
        # In the fold mode, only a cache of the settled log (no event below its seq can still
        # commit) describes the log through its seq.
        save = getattr(self.store, "save_state", None) if self._rows is None or self._settled else None
        last = self._last
        if save is None or getattr(self.store, "lookup", None) is None or last is None or last.seq != self._seq:
            return
        self._state_seq = self._seq  # a store that cannot take it (read-only, busy) is not asked again soon
        try:
            save(self._seq, state_text(self, last))
        except (StoreError, OSError):
            pass

    def _episode_record(self, episode_id: str) -> EpisodeRecord | None:
        """The episode, from memory or (resumed from a saved state) looked up in the store by key.

        A looked-up episode is rebuilt as the fold had left it at the saved state: its outcomes
        up to that seq count, the later ones are folded as the tail is.
        """
        record = self._episodes.get(episode_id) if isinstance(episode_id, str) else None
        if record is not None or not self._partial or not isinstance(episode_id, str):
            return record
        found = self.store.lookup([f"episode:{episode_id}", f"outcome:{episode_id}"])  # type: ignore[attr-defined]
        while found and found[-1].key is not None and found[-1].key.startswith("outcome:"):
            more = self.store.lookup([f"outcome:{episode_id}:{sum(e.kind == 'outcome' for e in found)}"])  # type: ignore[attr-defined]
            if not more:
                break
            found += more
        found = sorted((e for e in found if e.seq <= self._base), key=lambda e: e.seq)
        if not found or found[0].kind != "episode":
            return None
        try:
            record = EpisodeRecord(found[0].data, found[0].time)
            record.number = -1  # unknown until the whole log is folded (sleep does that)
            for outcome in found[1:]:  # as _fold_outcome leaves the record, without the lessons
                if record.reports and not outcome.data.get("replace"):
                    continue  # a second plain report: the fold refused it
                record.reports += 1
                record.outcome_seq = outcome.seq
                if outcome.data.get("expired"):
                    record.settled = "expired"
                    continue
                record.reward = float(outcome.data["reward"])
                record.signal = outcome.data.get("signal")
                record.settled = "default" if outcome.data.get("default") else None
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptStore(f"{self.store.location}: episode {episode_id} is malformed ({exc!r})") from exc
        self._episodes[episode_id] = record
        return record

    def _whole(self) -> None:
        """Fold the whole log when the engine resumed from a saved state (sleep, checkpoint need every episode)."""
        if self._partial:
            self._refold()

    def rebuild(self) -> None:
        """Forget the cache and fold every stored event again (the state is only a cache).

        In the fold mode the store's lesson rows are built again from the log too.
        """
        with self._lock:
            self._refold()
            if self._rows is not None:
                self._build_rows(force=True)

    def _refold(self) -> None:
        if self._rows is not None:
            self._fold_settled(whole=True)
            return
        self._fold_events(self.store.read(0))

    def _fold_events(self, events: list[Event]) -> tuple[list[LessonState], tuple[int, float, float]]:
        """Reset the cache to the fold of `events` (a whole log); its lessons and reward statistics."""
        with self._lock:
            # The outcome that counts is an episode's last replacement, else its first report;
            # a later plain report is a duplicate the fold refuses (see _fold_outcome).
            final: dict[str, int] = {}
            superseded: set[int] = set()
            for e in events:
                if e.kind == "outcome" and (e.data.get("replace") or e.data["episode"] not in final):
                    if e.data["episode"] in final:
                        superseded.add(final[e.data["episode"]])
                    final[e.data["episode"]] = e.seq
            self._reset()
            for e in events:
                if e.seq in superseded:
                    self._seq = e.seq
                    self._last = e
                    self._count_replaced(e)
                    continue
                self._fold(e)
            return list(self._lessons.values()), (self._reward_n, self._reward_mean, self._reward_m2)

    # -- the fold mode ------------------------------------------------------------------------

    def _view(self, read: Callable[[Any], RowsView]) -> RowsView:
        """A read of the folded state: the store's rows in the fold mode (built first when they
        are missing, stale or were folded under other tuning: this engine's tuning is theirs from
        then on), else this cache, synced."""
        view = read(self._reads)
        if self._rows is None:
            return view
        if self._tuning_text is None:
            self._tuning_text = json.dumps(tuning_of(self), sort_keys=True)
        if view.tuning != self._tuning_text:
            self._build_rows()
            view = read(self._reads)
        return view

    def _build_rows(self, force: bool = False) -> None:
        """Fold the whole log here and write the result as the store's lesson rows (heavy), unless
        (not `force`) another engine has just built them under this tuning."""
        assert self._rows is not None
        if self._tuning_text is None:
            self._tuning_text = json.dumps(tuning_of(self), sort_keys=True)
        self._rows.build(self._tuning_text, self._fold_events, force=force)
        with self._lock:
            self._reset()  # the log's fold went into the rows; kept here it would only weigh on every call

    def _count_replaced(self, event: Event) -> None:
        episode = self._episodes.get(event.data["episode"])
        if episode is not None:
            episode.reports += 1

    def _fold(self, event: Event) -> None:
        try:
            self._fold_event(event)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptStore(
                f"{self.store.location}: event {event.seq} ({event.kind}) is malformed ({exc!r}); "
                "the store was left untouched: restore it from a backup or export what reads"
            ) from exc

    def _fold_event(self, event: Event) -> None:
        self._seq = event.seq
        self._last = event
        data = event.data
        kind = event.kind
        if kind == "snapshot":  # a checkpoint: the state folded from every event up to here
            restore(self, data)
            self._unsettled = None
            self._seq = event.seq
            self._last = event
            self._pinned = set(self._episodes)  # their keys are gone with the events they came from
            self._n_episodes = len(self._episodes)
            self._held = sum(len(r.held_out) for r in self._episodes.values())
            self._wanted = self._held + sum(len(r.injected) for r in self._episodes.values())
        elif kind == "episode":
            record = EpisodeRecord(data, event.time)
            record.number = self._n_episodes + self._compacted["episodes"]
            self._episodes[record.id] = record
            self._n_episodes += 1
            self._held += len(record.held_out)
            self._wanted += len(record.held_out) + len(record.injected)
            if self._unsettled is not None:
                self._unsettled.append(record.id)
            for ids, counted in ((record.injected, "injected_in"), (record.held_out, "held_out_in")):
                for exp_id in ids:
                    lesson = self._lessons.get(exp_id)
                    if lesson is not None:
                        setattr(lesson.history, counted, getattr(lesson.history, counted) + 1)
        elif kind == "outcome":
            self._fold_outcome(data)
        elif kind == "experience":
            exp = Experience.from_dict(data)
            if exp.id in self._lessons:  # a key refuses this until a checkpoint drops the key
                self._ignored.add(event.seq)
                return
            state = LessonState(exp)
            state.history.note(event.time, f"added as {exp.status.value}")
            self._lessons[exp.id] = state
            if exp.status is not Status.RETIRED:
                self._index.setdefault(exp.scope.items_key, {})[exp.id] = state
                self._n_active += 1
        elif kind == "status":
            self._set_status(data["id"], Status(data["status"]), data.get("reason", ""))
            reason = f": {data['reason']}" if data.get("reason") else ""
            self._note(data["id"], event.time, f"set {data['status']}{reason}")
        elif kind == "scope":
            self._narrow(data["id"], data["key"], data["value"])
            self._note(data["id"], event.time, f"scope narrowed to {data['key']}={data['value']}")
        elif kind == "merge":
            get = self._lessons.get
            for other_id in data["from"]:
                self._note(other_id, event.time, f"merged into {data['into']}")
            for other in fold.merge(get(data["into"]), [get(i) for i in data["from"]], data["from"]):
                self._set_status(other.experience.id, Status.RETIRED, f"merged into {data['into']}")
            into = get(data["into"])
            if into is not None:
                into.history.note(event.time, f"absorbed {', '.join(data['from'])}")
                into.note_evidence(event.seq, event.time, self.policy, self._n_active, always=True)
        elif kind == "applied":
            self._applied.add(data["proposal"])
        elif kind == "compact":
            dropped = [r for r in (self._episodes.pop(e, None) for e in data["episodes"]) if r is not None]
            add_to_audit(self._compacted, dropped)
            for record in dropped:
                self._n_episodes -= 1
                self._held -= len(record.held_out)
                self._wanted -= len(record.held_out) + len(record.injected)
                self._pinned.discard(record.id)
        else:  # a reader that lets an unknown kind through must not have it folded as nothing
            raise ValueError(f"unknown event kind {kind!r}")

    def _note(self, exp_id: str, time: float, text: str) -> None:
        state = self._lessons.get(exp_id)
        if state is not None:
            state.history.note(time, text)

    def _set_status(self, exp_id: str, status: Status, reason: str) -> None:
        state = self._lessons.get(exp_id)
        if state is None:
            return
        exp = state.experience
        fold.set_status(state, status)
        bucket = self._index.setdefault(exp.scope.items_key, {})
        if status is Status.RETIRED:
            self._n_active -= bucket.pop(exp_id, None) is not None
        elif exp_id not in bucket:
            bucket[exp_id] = state
            self._n_active += 1

    def _narrow(self, exp_id: str, key: str, value: str) -> None:
        """A scope event: the lesson now applies only where `key` is `value` (sleep's narrow)."""
        state = self._lessons.get(exp_id)
        if state is None:
            return
        old = state.experience.scope
        if not fold.narrow(state, key, value):
            return  # folded twice, or the scope already fixes that key: nothing to narrow
        bucket = self._index.get(old.items_key, {})
        if bucket.pop(exp_id, None) is not None:
            self._index.setdefault(state.experience.scope.items_key, {})[exp_id] = state

    def _fold_outcome(self, data: Mapping[str, Any]) -> None:
        episode = self._episode_record(data["episode"])
        replace = bool(data.get("replace"))
        if episode is None or (episode.reports and not replace) or (episode.sealed and replace):
            # An outcome for a compacted episode, a second plain report, or a replacement of
            # an outcome sealed in a checkpoint. Unique keys refuse the latter two until a
            # checkpoint drops the keys of what it folded; from then on the fold refuses them,
            # the same way in every process, and report() tells its caller.
            self._ignored.add(self._seq)
            return
        if data.get("expired"):  # the pending policy gave up on it: no reward, nothing learned
            episode.reports += 1
            episode.outcome_seq = self._seq
            episode.settled = "expired"
            return
        reward = float(data["reward"])
        episode.reward = reward
        episode.signal = data.get("signal")
        episode.reports += 1
        episode.outcome_seq = self._seq
        episode.settled = "default" if data.get("default") else None
        self._reports += 1
        self._reward_n, self._reward_mean, self._reward_m2 = fold.welford(
            self._reward_n, self._reward_mean, self._reward_m2, reward)
        # An outcome the fold mode wrote names the spread and the divisor its fold used (they
        # came from the whole fleet's rewards at that moment): replaying it uses the same.
        used = data.get("fold") or {}
        sigma = float(used["sigma"]) if "sigma" in used else self._sigma()
        n_active = int(used["active"]) if "active" in used else self._n_active
        time = self._last.time if self._last is not None else 0.0
        for state in fold.fold_outcome(self._lessons.get, episode.eligible, episode.injected, episode.p,
                                       episode.context, reward, sigma, self.policy, n_active):
            state.note_evidence(self._seq, time, self.policy, n_active)

    def _sigma(self) -> float:
        """Spread of rewards, shrunk towards a prior while outcomes are few."""
        return fold.spread(self._reward_n, self._reward_m2)

    def _active_count(self) -> int:
        """Non-retired lessons: the Bonferroni divisor of every verdict."""
        return self._n_active

    # -- lessons -----------------------------------------------------------------------------

    def add(self, experience: Experience) -> str:
        """Store a lesson; it is eligible at once (as a cold arm). Returns its id."""
        if not isinstance(experience, Experience):
            raise InvalidExperience(f"add() takes an Experience; got {type(experience).__name__}")
        from lamar.safety.boundary import admitted

        exp = admitted(experience).with_identity()  # stored as the prompt will show it, screened
        taken = InvalidExperience(f"an experience with id {exp.id!r} is already stored")
        with self._lock:
            if self._rows is not None:  # the store refuses an id that has a row or a key
                try:
                    self._append([Event("experience", exp.to_dict(), key=f"experience:{exp.id}")])
                except EventConflict:
                    raise taken from None
                return exp.id
            self._sync()
            if exp.id in self._lessons:
                raise taken
            try:
                (stored,) = self._append([Event("experience", exp.to_dict(), key=f"experience:{exp.id}")])
            except EventConflict:
                raise taken from None
            self._ignored.clear()
            self._sync()
            if stored.seq in self._ignored:  # another writer added that id just as a checkpoint ran
                raise taken
        return exp.id

    def get(self, exp_id: str) -> Experience:
        """The lesson with that id (retired ones included)."""
        with self._lock:
            return self._lesson(exp_id)[0].experience

    def _state(self, exp_id: str) -> LessonState:
        state = self._lessons.get(exp_id) if isinstance(exp_id, str) else None
        if state is None:
            raise UnknownExperience(f"no experience {exp_id!r} in store {self.store.location}")
        return state

    def _lesson(self, exp_id: str) -> tuple[LessonState, int]:
        """The lesson's current state and the Bonferroni divisor, from the cache or the rows."""
        view = self._view(lambda reads: reads.lessons([exp_id] if isinstance(exp_id, str) else []))
        if not view.states:
            raise UnknownExperience(f"no experience {exp_id!r} in store {self.store.location}")
        return view.states[0], view.active

    def _all_lessons(self) -> tuple[Iterable[LessonState], int]:
        """Every lesson in the order they were added, and the Bonferroni divisor."""
        view = self._view(lambda reads: reads.lessons())
        return view.states, view.active

    def experiences(self, status: Status | str | None = None, *, verdict: Verdict | str | None = None,
                    scope: Mapping[str, str] | None = None) -> list[Experience]:
        """Lessons in the order they were added, optionally filtered.

        Args:
            status: keep one status ("candidate", "active", "retired").
            verdict: keep one verdict ("helps", "harms", "unknown").
            scope: keep lessons whose scope has all these fields with these values.
        """
        want_status = arguments.choice(Status, status, "status")
        want_verdict = arguments.choice(Verdict, verdict, "verdict")
        want_scope = check_context(scope) if scope is not None else None
        with self._lock:
            lessons, n = self._all_lessons()
            out = []
            for state in lessons:
                exp = state.experience
                if want_status is not None and exp.status is not want_status:
                    continue
                if want_verdict is not None and state.judge(self.policy, n)[0] is not want_verdict:
                    continue
                if want_scope is not None and any(exp.scope.get(k) != v for k, v in want_scope.items()):
                    continue
                out.append(exp)
            return out

    def evidence(self, exp_id: str) -> Evidence:
        """The lesson's measured lift, its bounds and its verdict."""
        with self._lock:
            state, n = self._lesson(exp_id)
            return state.evidence(self.policy, n)

    def history(self, exp_id: str) -> LessonHistory:
        """The lesson's evidence over time, its audit trail and how many episodes injected it.

        Noted by the fold as outcomes arrived (no replay): a point whenever the lesson's
        reported eligible episodes reach a multiple of a spacing that doubles as the points
        fill up (`lamar.policy.history`), the first point kept, the last one its evidence now.
        """
        with self._lock:
            self._sync()
            return self._state(exp_id).past(self.policy, self._active_count())

    def retire(self, exp_id: str, reason: str = "retired by hand") -> None:
        """Stop injecting a lesson (kept for the audit trail; `revive` undoes it)."""
        self._change_status(exp_id, Status.RETIRED, reason)

    def revive(self, exp_id: str, reason: str = "revived by hand") -> None:
        """Make a retired lesson eligible again, as an active lesson."""
        self._change_status(exp_id, Status.ACTIVE, reason)

    def _change_status(self, exp_id: str, status: Status, reason: str) -> None:
        reason = arguments.reason(reason)
        with self._lock:
            if self._lesson(exp_id)[0].experience.status is status:
                return  # already so: a second event would only repeat the audit trail
            self._append([Event("status", {"id": exp_id, "status": status.value, "reason": reason})])
            if self._rows is None:
                self._sync()

    # -- recall ------------------------------------------------------------------------------

    def recall(self, context: Mapping[str, str], *, k: int | None = None,
               candidates: Iterable[str] | None = None) -> Recall:
        """Choose the lessons to inject for `context` and log the episode.

        Args:
            context: a mapping of strings (project, language, task, ...).
            k: slots for this call (default: the engine's `k`).
            candidates: restrict the choice to these experience ids (e.g. what a
                retriever found); unknown ids are ignored.

        Returns:
            A `Recall`; report its `episode_id` when the outcome is known.
        """
        ctx = check_context(context)
        slots = self.k if k is None else arguments.slots(k)
        allowed = arguments.candidate_ids(candidates)
        with self._lock:
            view = self._view(lambda reads: reads.eligible(ctx))  # the fold mode: one read of rows
            eligible = view.states if allowed is None else [s for s in view.states if s.experience.id in allowed]
            chosen, held, p = choose(eligible, slots, ctx, view.sigma, view.active, self.policy, self._rng)
            episode_id = new_id("ep")
            data = {
                "id": episode_id,
                "context": ctx,
                "eligible": [s.experience.id for s in eligible],
                "injected": [s.experience.id for s in chosen],
                "held_out": held,
                "p": p,
            }
            self._append([Event("episode", data, key=f"episode:{episode_id}")])
            if self._rows is None:
                self._sync()
                if self.policy.pending_after is not None:
                    settle(self, None)
            elif self.policy.pending_after is not None and time.monotonic() >= self._next_settle:
                # The fold mode folds the log for it now and then, not on every recall.
                self._next_settle = time.monotonic() + min(_SETTLE_EVERY, self.policy.pending_after / 4)
                self.settle_pending()
            return Recall(
                episode_id=episode_id,
                experiences=[s.experience for s in chosen],
                context=ctx,
                eligible=tuple(data["eligible"]),
                held_out=tuple(held),
                propensities=p,
            )

    def _eligible(self, ctx: Mapping[str, str], allowed: set[str] | None) -> list[LessonState]:
        """Non-retired lessons whose scope matches: a lookup per scope shape, not per lesson."""
        out: list[LessonState] = []
        index = self._index
        items = sorted(ctx.items())
        if len(index) <= (1 << min(len(items), 20)):
            keys: Iterable[tuple[tuple[str, str], ...]] = (
                key for key in index if all(ctx.get(f) == v for f, v in key))
        else:
            keys = _subsets(items)
        for key in keys:
            bucket = index.get(key)
            if bucket:
                out.extend(s for s in bucket.values() if allowed is None or s.experience.id in allowed)
        return out

    async def arecall(self, context: Mapping[str, str], *, k: int | None = None,
                      candidates: Iterable[str] | None = None) -> Recall:
        """`recall` without blocking the event loop (the store may touch disk)."""
        import asyncio  # here, not at module level: `import lamar` stays cheap for hooks and CLIs

        return await asyncio.to_thread(self.recall, context, k=k, candidates=candidates)

    # -- report ------------------------------------------------------------------------------

    def report(self, episode_id: str, signal: Signal | float | str, *, replace: bool = False) -> None:
        """Record what happened after an episode: a Signal or a reward in [-1, 1].

        A default outcome or an expiry that the pending policy (or `expire`) recorded only
        stands in for the report: a late report replaces it without `replace=True`.

        Raises:
            UnknownEpisode: no recall in this store produced `episode_id`.
            DuplicateReport: the episode already has an outcome and `replace` is False.
            InvalidReward: the signal is not a Signal or a float in [-1, 1].
        """
        reward, parsed = to_reward(signal)
        with self._lock:
            if self._rows is not None and not replace and isinstance(episode_id, str):
                # One transaction in the store: the episode found by key, its eligible lessons'
                # rows locked and folded. A first report ends here; anything else (no episode
                # under that key, an outcome already there) takes the heavy path below.
                data = {"episode": episode_id, "reward": reward, "signal": parsed.value if parsed else None,
                        "replace": False}
                try:
                    self._wrote = True
                    self._rows.append([Event("outcome", data, key=f"outcome:{episode_id}")], strict=True)
                    return
                except (UnknownEpisode, EventConflict):
                    pass
            self._sync()
            episode = self._episode_record(episode_id)
            if episode is None:
                raise UnknownEpisode(
                    f"no episode {episode_id!r} in store {self.store.location}: report the "
                    "episode_id that recall() returned, against the same store (an episode that sleep "
                    "compacted is gone too: an old reported one, whose outcome stays counted, or one "
                    "left unreported past keep_unreported)"
                )
            # A default or an expiry from the pending policy only stood in for this report.
            replace = replace or episode.settled is not None or (episode.reports > 0 and episode.reward is None)
            if episode.reports and not replace:
                raise DuplicateReport(
                    f"episode {episode_id} was already reported ({episode.signal or episode.reward}); "
                    "pass replace=True to replace that outcome"
                )
            if episode.sealed:
                raise DuplicateReport(
                    f"episode {episode_id}'s outcome ({episode.signal or episode.reward}) is final: it "
                    "was folded into a checkpoint when the store was compacted, so it cannot be replaced"
                )
            key = f"outcome:{episode_id}" + (f":{episode.reports}" if episode.reports else "")
            data = {"episode": episode_id, "reward": reward, "signal": parsed.value if parsed else None,
                    "replace": bool(episode.reports)}
            try:
                (stored,) = self._append([Event("outcome", data, key=key)])
            except EventConflict:
                raise DuplicateReport(
                    f"episode {episode_id} was reported by another writer just now; "
                    "pass replace=True to replace that outcome"
                ) from None
            self._ignored.clear()
            self._sync()
            now = self._episodes.get(episode_id)
            refused = stored.seq in self._ignored or (now is not None and now.outcome_seq < stored.seq)
            if self._rows is not None and self._rows.lessons([]).tuning is None:
                self._build_rows()  # the outcome could not be folded in the rows (a replacement)
            if refused:
                # Another writer reported it and a checkpoint dropped that report's key before
                # ours was written: the fold refused ours, in every process.
                raise DuplicateReport(
                    f"episode {episode_id} was reported by another writer, and compacted, just now; "
                    "this report was not counted"
                )

    async def areport(self, episode_id: str, signal: Signal | float | str, *, replace: bool = False) -> None:
        """`report` without blocking the event loop."""
        import asyncio

        await asyncio.to_thread(self.report, episode_id, signal, replace=replace)

    def pending(self, older_than: float | None = None, *, now: float | None = None) -> list[PendingEpisode]:
        """Episodes still waiting for their outcome, oldest first, each with its age.

        Args:
            older_than: keep those at least this many seconds old.
            now: the clock to measure ages against (default: `time.time()`).
        """
        arguments.seconds(older_than, "older_than")
        arguments.seconds(now, "now")
        with self._lock:
            self._sync()
            return pending(self, older_than, now)

    def settle_pending(self, *, now: float | None = None) -> list[str]:
        """Apply the `pending_after` policy now (recall also does: on each call, or at most once a
        minute in PostgreSQL's fold mode, where it needs a fold of the log's new events).

        Every episode pending for `pending_after` seconds or more gets `pending_outcome` as a
        default outcome, or, when that is None, is recorded as expired. Both are outcome
        events in the store (the audit trail shows them, every process folds them alike); a
        late report still replaces them. Returns the ids settled by this call.
        """
        arguments.seconds(now, "now")
        with self._lock:
            self._sync()
            return settle(self, now)

    def expire(self, episode_id: str, reason: str = "expired by hand") -> bool:
        """Record that an episode will get no outcome (its run failed, say): an outcome event
        with no reward, so it stops being pending and teaches nothing. A late report still
        replaces it. Returns False when the episode already had an outcome.

        Raises:
            UnknownEpisode: no recall in this store produced `episode_id`.
        """
        with self._lock:
            self._sync()
            if self._episode_record(episode_id) is None:
                raise UnknownEpisode(f"no episode {episode_id!r} in store {self.store.location}")
            return expire(self, episode_id, arguments.reason(reason))

    def episode(self, episode_id: str) -> EpisodeRecord:
        """The logged episode (context, eligible, injected, held-out, propensities, outcome)."""
        with self._lock:
            self._sync()
            record = self._episode_record(episode_id)
            if record is None:
                raise UnknownEpisode(f"no episode {episode_id!r} in store {self.store.location}")
            return record

    # -- sleep -------------------------------------------------------------------------------

    def sleep(self, traces: Any = None, model: Any = None, **options: Any) -> SleepReport:
        """Propose changes (retire proven harm, merge duplicates, ...); changes nothing."""
        from lamar.sleep import run_sleep
        from lamar.sleep.options import SLEEP_OPTIONS

        unknown = sorted(set(options) - set(SLEEP_OPTIONS))
        if unknown:
            raise InvalidArgument(f"unknown sleep option {unknown[0]!r}; the options are {list(SLEEP_OPTIONS)}")
        with self._lock:
            self._sync()
            self._whole()
            return run_sleep(EngineView(self), traces=traces, model=model, **options)

    def apply(self, report: SleepReport, only: Iterable[str] | None = None) -> ApplyResult:
        """Carry out a sleep report's proposals (all, or the ids in `only`)."""
        from lamar.sleep import apply_report
        from lamar.sleep.proposals import SleepReport

        if not isinstance(report, SleepReport):
            raise InvalidArgument(f"apply() takes the SleepReport that sleep() returned (or SleepReport.from_dict "
                                  f"of a saved one); got {type(report).__name__}")
        only = arguments.proposal_ids(only)
        with self._lock:
            self._sync()
            self._whole()
            result = apply_report(EngineView(self), report, only=only)
            self._sync()
            kinds = {p.id: p.kind for p in report.proposals}
            if any(kinds.get(pid) == "compact" for pid in result.applied) and hasattr(self.store, "rewrite"):
                self.checkpoint()  # the log shrinks too, not only the cache
            return result

    def whatif(self, policy: Any = None, since: float | None = None,
               scope: Mapping[str, str] | None = None) -> WhatIfReport:
        """Estimate what other policies (no memory, without a lesson, proven lessons only, another
        holdout or k) would have got over the logged episodes, from their logged propensities.
        See `lamar.whatif.whatif` for the arguments and docs/whatif.md for the assumptions."""
        from lamar.whatif import whatif

        return whatif(self, policy, since=since, scope=scope)

    def checkpoint(self) -> bool:
        """Replace the stored log, up to the last event folded, by one snapshot of this state.

        The snapshot holds every lesson with what was learned about it, the episodes not yet
        compacted, the applied proposals and the audit counts; later events stay as they
        are, so writers in other processes go on, and one that was behind re-syncs from the
        snapshot. Applying a compact proposal calls this. Outcomes folded into a checkpoint
        are final: `report(..., replace=True)` refuses them.

        Returns:
            False when another process had already checkpointed this far (nothing changed).

        Raises:
            StoreError: the store cannot rewrite its log (it has no `rewrite` method).
        """
        rewrite = getattr(self.store, "rewrite", None)
        if rewrite is None:
            raise StoreError(f"{type(self.store).__name__} at {self.store.location} cannot rewrite its log, "
                             "so it cannot be checkpointed; compaction still bounds the engine's memory")
        with self._lock, (self._rows.exclusive() if self._rows is not None else contextlib.nullcontext()):
            # In the fold mode no write may commit below the snapshot's seq once it is folded.
            self._sync()
            self._whole()
            if self._seq == 0:
                return False
            done = bool(rewrite(self._seq, Event("snapshot", snapshot_of(self), seq=self._seq)))
            for record in self._episodes.values():  # as a process that reads the snapshot sees them
                record.sealed = record.reward is not None
            self._pinned = set(self._episodes)  # their keys went with the events the snapshot replaced
            return done

    # -- summaries ---------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts of lessons, episodes and reports, by status and verdict.

        `events` is the seq of the last event folded: the log's length where seqs are dense,
        but not in PostgreSQL's fold mode, whose seqs come from one SEQUENCE that every
        namespace of the database shares."""
        with self._lock:
            self._sync()
            n = self._active_count()
            by_status = {s.value: 0 for s in Status}
            by_verdict = {v.value: 0 for v in Verdict}
            for state in self._lessons.values():
                by_status[state.experience.status.value] += 1
                if state.experience.status is not Status.RETIRED:
                    by_verdict[state.judge(self.policy, n)[0].value] += 1
            episodes = self._n_episodes + self._compacted["episodes"]
            reports = self._reports
            wanted, held = self._wanted, self._held
            return {
                "experiences": len(self._lessons),
                "by_status": by_status,
                "by_verdict": by_verdict,
                "episodes": episodes,
                "reports": reports,
                "unreported": episodes - reports,
                "holdout_rate": held / wanted if wanted else 0.0,
                "compacted": dict(self._compacted, by_signal=dict(self._compacted["by_signal"])),
                "events": self._seq,
                "store": self.store.location,
            }

    def close(self) -> None:
        """Save the folded state if it is worth it (so the next process folds a short tail), then close the store."""
        with self._lock:
            tail = self._seq - self._state_seq
            if self._wrote and tail > 0 and tail * 16 >= len(self._lessons):
                self._save_state()
            self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Lamar(store={self.store.location!r}, k={self.k}, lessons={len(self._lessons)})"


class _CacheReads:
    """The folded state's reads (`FoldedRows.eligible`, `lessons`) answered by the engine's own
    cache, synced with the log first: the in-process side of the seam the fold mode's rows fill."""

    __slots__ = ("_lam",)

    def __init__(self, lam: Lamar) -> None:
        self._lam = lam

    def eligible(self, context: dict[str, str]) -> RowsView:
        lam = self._lam
        lam._sync()
        return RowsView(lam._eligible(context, None), lam._sigma(), lam._active_count(), None)

    def lessons(self, ids: Iterable[str] | None = None) -> RowsView:
        lam = self._lam
        lam._sync()
        found = lam._lessons
        states = list(found.values()) if ids is None else [found[i] for i in ids if i in found]
        return RowsView(states, lam._sigma(), lam._active_count(), None)


def _subsets(items: list[tuple[str, str]]) -> Iterable[tuple[tuple[str, str], ...]]:
    """Every sub-tuple of the sorted context items (used when scopes outnumber them)."""
    n = len(items)
    for mask in range(1 << n):
        yield tuple(items[i] for i in range(n) if mask >> i & 1)


__all__ = ["EpisodeRecord", "Lamar"]
