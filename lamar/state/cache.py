"""`FoldCache`: every lesson, episode and count folded from the log, and the fold of each event kind."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from lamar._errors import CorruptStore
from lamar.experience import Experience, Scope, Status
from lamar.policy import fold
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.state.episode import EpisodeRecord
from lamar.state.marks import Mark, Marks
from lamar.state.snapshot import add_to_audit, new_audit, note_no, restore
from lamar.store.base import Event, StoredText, in_rows_order

ScopeKey = tuple[tuple[str, str], ...]


class FoldCache:
    """The state folded from a log up to `seq`: lessons, their scope index, episodes and counters.

    Args:
        policy: the tuning every lesson is folded under.
        location: the store's location, for messages.
        lookup: the store's `lookup` (None when it has none): a cache resumed from a saved
            state finds an older episode by key with it.
    """

    def __init__(self, policy: Policy, location: str,
                 lookup: Callable[[Sequence[str]], list[Event]] | None = None) -> None:
        self.policy = policy
        self.location = location
        self._lookup = lookup
        self.marks = Marks()  # where a replaced outcome is folded again from (`rewind`)
        self.reset()

    def reset(self) -> None:
        self.seq = 0
        self.lessons: dict[str, LessonState] = {}
        self._rank: dict[str, int] = {}  # see `_ranks`
        self.index: dict[ScopeKey, dict[str, LessonState]] = {}
        # The first lesson added with each texts and scope (`first_same`): built when first asked,
        # kept by adds, and dropped by the events that change a lesson's texts or scope.
        self._same: dict[tuple[Any, ...], str] | None = None
        self.episodes: dict[str, EpisodeRecord] = {}
        self.applied: set[str] = set()
        self.noes: dict[str, dict[str, Any]] = {}  # what a person saw of each no in force (`note_no`)
        # Lessons retired or merged away, by the seq that did it and how: apply skips a proposal
        # made before that seq, even across a checkpoint that took the event itself out of the log.
        self.removed: dict[str, tuple[int, str]] = {}
        # Erase events whose scrub had not run when folded, by seq (`lamar.state.erasure.finish`).
        self.unscrubbed: dict[int, Event] = {}
        self.n_active = 0
        self.reports = 0
        self.compacted: dict[str, Any] = new_audit()
        self.ignored: set[int] = set()  # seqs of events the fold refused (see _fold_outcome)
        self.reward_n = 0
        self.reward_mean = 0.0
        self.reward_m2 = 0.0
        # Counters over the episodes not compacted, so stats need not hold every episode.
        self.n_episodes = 0
        self.wanted = 0
        self.held = 0
        # The last event folded, which a saved state names (as stored, when a resume had no need to decode it).
        self.last: Event | StoredText | None = None
        # Resumed from a saved state: older episodes stay in the store until one is needed.
        self.partial = False
        self.base = 0  # the seq the resumed state was folded to
        self.pinned: set[str] = set()  # episodes known only from a checkpoint snapshot
        self.unsettled: deque[str] | None = None  # pending episode ids, oldest first (lamar.state.pending)
        # The fold mode: this cache holds the log through a settled seq (see SettledFollower). A
        # reset empties the cache, so whatever it held is no longer known to be settled.
        self.settled = False
        # The lessons whose folded state changed since `track` (None: not tracked, or a change it cannot name).
        self.changed: set[str] | None = None
        self.marks.clear()  # started or not, as it was: a refold empties the cache, not the process's past

    # -- reads -------------------------------------------------------------------------------

    def sigma(self) -> float:
        """Spread of rewards, shrunk towards a prior while outcomes are few."""
        return fold.spread(self.reward_n, self.reward_m2)

    def eligible(self, ctx: Mapping[str, str], allowed: set[str] | None = None) -> list[LessonState]:
        """Non-retired lessons whose scope matches: a lookup per scope shape, not per lesson."""
        out: list[LessonState] = []
        index = self.index
        items = sorted(ctx.items())
        if len(index) <= (1 << min(len(items), 20)):
            keys: Iterable[ScopeKey] = (key for key in index if all(ctx.get(f) == v for f, v in key))
        else:
            keys = _subsets(items)
        for key in keys:
            bucket = index.get(key)
            if bucket:
                out.extend(s for s in bucket.values() if allowed is None or s.experience.id in allowed)
        # In the order they were added, as every store's rows give them: the coins and tie-breaks
        # of a seeded engine are drawn in this order, so the same calls choose alike on any backend.
        rank = self._ranks()
        out.sort(key=lambda s: rank[s.experience.id])
        return out

    def _ranks(self) -> dict[str, int]:
        """Each lesson's place in the order they were added (lessons are never removed, only retired)."""
        rank = self._rank
        if len(rank) != len(self.lessons):
            for exp_id in itertools.islice(self.lessons, len(rank), None):
                rank[exp_id] = len(rank)
        return rank

    def put_in_order(self, places: Mapping[str, int]) -> None:
        """List the lessons that have a place among a store's rows in the rows' order
        (`lamar.store.base.in_rows_order`), as the fold mode's engines list them."""
        order = in_rows_order(list(self.lessons), places)
        if order != list(self.lessons):
            held = dict(self.lessons)
            self.lessons.clear()  # in place: a view handed out holds this dict
            self.lessons.update((i, held[i]) for i in order)
            self._rank, self._same = {}, None  # both follow the lessons' order

    def first_same(self, exp: Experience) -> str | None:
        """The id of the first lesson added with `exp`'s texts and scope, retired ones included."""
        if self._same is None:
            self._same = {}
            for state in self.lessons.values():  # in the order they were added
                self._same.setdefault(same_texts(state.experience), state.experience.id)
        return self._same.get(same_texts(exp))

    def episode(self, episode_id: str) -> EpisodeRecord | None:
        """The episode, held here or (resumed from a saved state) looked up in the store by key.

        A looked-up episode is rebuilt as the fold had left it at the saved state: its outcomes
        up to that seq count, the later ones are folded as the tail is.
        """
        record = self.episodes.get(episode_id) if isinstance(episode_id, str) else None
        if record is not None or not self.partial or not isinstance(episode_id, str) or self._lookup is None:
            return record
        found = self._lookup([f"episode:{episode_id}", f"outcome:{episode_id}"])
        while found and found[-1].key is not None and found[-1].key.startswith("outcome:"):
            more = self._lookup([f"outcome:{episode_id}:{sum(e.kind == 'outcome' for e in found)}"])
            if not more:
                break
            found += more
        found = sorted((e for e in found if e.seq <= self.base), key=lambda e: e.seq)
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
            raise CorruptStore(f"{self.location}: episode {episode_id} is malformed ({exc!r})") from exc
        self.episodes[episode_id] = record
        return record

    # -- folding -----------------------------------------------------------------------------

    def fold_log(self, events: list[Event]) -> tuple[list[LessonState], tuple[int, float, float]]:
        """Reset to the fold of `events` (a whole log); its lessons and reward statistics.

        The outcome that counts is an episode's last replacement, else its first report; a later
        plain report is a duplicate the fold refuses (see _fold_outcome).
        """
        self.reset()
        self._fold_run(events, again=False)
        return list(self.lessons.values()), (self.reward_n, self.reward_mean, self.reward_m2)

    def track(self) -> None:
        """Name in `changed` each lesson whose folded state the next events change: those an outcome
        folds, and those a rewind puts back. Any other event than an episode or outcome stops it."""
        self.changed = set()

    def rewind(self, before: int) -> bool:
        """Go back to the fold as it stood at the last mark before seq `before`; False (nothing
        changed) when no mark is that old. Then `refold` the events after `seq` up to the one wanted."""
        mark = self.marks.rewind(before, self.lessons, self.episodes, self.changed)
        if mark is None:
            return False
        self.seq, self.last = mark.seq, mark.last
        self.reports, self.reward_n, self.reward_mean, self.reward_m2 = mark.sums
        return True

    def refold(self, events: list[Event]) -> None:
        """Fold again the events after a `rewind`'s mark, as folding the whole log folds them
        (each was folded once already: its episode is held, only its lessons' counts go back)."""
        self._fold_run(events, again=True)

    def _fold_run(self, events: list[Event], again: bool) -> None:
        final: dict[str, int] = {}
        superseded: set[int] = set()
        for e in events:
            if e.kind != "outcome":
                continue
            episode_id = e.data["episode"]
            if e.data.get("replace") and not self.marks.on:
                self.marks.start()
            # A plain report counts unless the episode had one: in these events, or (a refold)
            # before them, which its record, as the rewind left it, shows.
            if e.data.get("replace") or (episode_id not in final and not (
                    again and (record := self.episodes.get(episode_id)) is not None and record.reports)):
                if episode_id in final:
                    superseded.add(final[episode_id])
                final[episode_id] = e.seq
        self.marks.plan([e.seq for e in events])
        try:
            self._fold_each(events, again, superseded)
        except BaseException:
            # Stopped half way: the outcomes skipped as superseded stand uncounted, so the fold
            # cannot go on from the seq it reached. Empty, the next call folds the whole log.
            self.reset()
            raise
        finally:
            self.marks.plan(None)

    def _fold_each(self, events: list[Event], again: bool, superseded: set[int]) -> None:
        for e in events:
            if e.seq not in superseded:
                self.fold(e, again)
                continue
            self._marked(e)
            self.seq = e.seq
            self.last = e
            episode = self.episodes.get(e.data["episode"])
            if episode is not None:
                if (mark := self.marks.current) is not None:
                    mark.keep_episode(episode)
                episode.reports += 1

    def _marked(self, event: Event) -> None:
        """Set a mark before `event` when one is due, or let every mark go before an event no mark can undo."""
        kind = event.kind
        if kind != "episode" and kind != "outcome":
            self.marks.clear()
        elif (marks := self.marks).on:
            marks.count += 1
            if marks.count >= marks.due and event.seq >= marks.next:
                marks.add(Mark(self.seq, self.last, (self.reports, self.reward_n, self.reward_mean, self.reward_m2)),
                          event.seq, len(self.lessons))

    def fold(self, event: Event, again: bool = False) -> None:
        """Fold one event (`again`: in a `refold`); CorruptStore when it is malformed."""
        try:
            self._marked(event)
            self._fold_event(event, again)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptStore(
                f"{self.location}: event {event.seq} ({event.kind}) is malformed ({exc!r}); "
                "the store was left untouched: restore it from a backup or export what reads"
            ) from exc

    def _fold_event(self, event: Event, again: bool) -> None:
        self.seq = event.seq
        self.last = event
        data = event.data
        kind = event.kind
        if kind in ("scope", "erase", "edit"):
            self._same = None  # they change a lesson's texts or scope
        if kind != "episode" and kind != "outcome":
            self.changed = None
        if kind == "snapshot":  # a checkpoint: the state folded from every event up to here
            settled = self.settled  # an event of the log like any other: a settled fold stays settled
            restore(self, data)
            self.settled = settled
            self.seq = event.seq
            self.last = event
            self.pinned = set(self.episodes)  # their keys are gone with the events they came from
            self.n_episodes = len(self.episodes)
            self.held = sum(len(r.held_out) for r in self.episodes.values())
            self.wanted = self.held + sum(len(r.injected) for r in self.episodes.values())
        elif kind == "episode":
            self._fold_episode(EpisodeRecord(data, event.time), again)
        elif kind == "outcome":
            self._fold_outcome(data)
        elif kind == "experience":
            self._fold_experience(Experience.from_dict(data), event)
        elif kind == "status":
            self._set_status(data["id"], Status(data["status"]))
            if data["status"] == Status.RETIRED.value and data["id"] in self.lessons:
                self.removed[data["id"]] = (event.seq, "retired")
            reason = f": {data['reason']}" if data.get("reason") else ""
            self._note(data["id"], event.time, f"set {data['status']}{reason}")
        elif kind == "scope":
            self._narrow(data)
            state = self.lessons.get(data["id"])
            value = fold.ERASED if state is not None and state.experience.provenance.get("erased") else data["value"]
            self._note(data["id"], event.time, f"scope narrowed to {data['key']}={value}")
        elif kind == "merge":
            self._merge(data["into"], data["from"], event)
        elif kind == "erase":
            self._erase(data, event)
        elif kind == "edit":
            self._edit(data, event)
        elif kind == "applied":
            self.applied.add(data["proposal"])
            note_no(self.noes, data, event.time)
        elif kind == "compact":
            dropped = [r for r in (self.episodes.pop(e, None) for e in data["episodes"]) if r is not None]
            add_to_audit(self.compacted, dropped)
            for record in dropped:
                self.n_episodes -= 1
                self.held -= len(record.held_out)
                self.wanted -= len(record.held_out) + len(record.injected)
                self.pinned.discard(record.id)
        else:  # a reader that lets an unknown kind through must not have it folded as nothing
            raise ValueError(f"unknown event kind {kind!r}")

    def _fold_episode(self, record: EpisodeRecord, again: bool) -> None:
        if not again or record.id not in self.episodes:
            record.number = self.n_episodes + self.compacted["episodes"]
            self.episodes[record.id] = record
            self.n_episodes += 1
            self.held += len(record.held_out)
            self.wanted += len(record.held_out) + len(record.injected)
            if self.unsettled is not None:
                self.unsettled.append(record.id)
        if (mark := self.marks.current) is not None:
            mark.keep_lessons(itertools.chain(record.injected, record.held_out), self.lessons)
        for ids, counted in ((record.injected, "injected_in"), (record.held_out, "held_out_in")):
            for exp_id in ids:
                lesson = self.lessons.get(exp_id)
                if lesson is not None:
                    setattr(lesson.history, counted, getattr(lesson.history, counted) + 1)

    def _fold_experience(self, exp: Experience, event: Event) -> None:
        if exp.id in self.lessons:  # a key refuses this until a checkpoint drops the key
            self.ignored.add(event.seq)
            return
        state = LessonState(exp, rank=len(self.lessons) + 1)  # its share of alpha, fixed now
        state.history.note(event.time, f"added as {exp.status.value}")
        self.lessons[exp.id] = state
        if self._same is not None:
            self._same.setdefault(same_texts(exp), exp.id)
        if exp.status is not Status.RETIRED:
            self.index.setdefault(exp.scope.items_key, {})[exp.id] = state
            self.n_active += 1

    def _merge(self, into_id: str, from_ids: list[str], event: Event) -> None:
        get = self.lessons.get
        for other in fold.merge(get(into_id), [get(i) for i in from_ids], from_ids):
            self._set_status(other.experience.id, Status.RETIRED)
        # Only the lessons now merged into `into`: the fold refuses a merge of, or into, a lesson
        # another merge took first, and apply must not skip a later proposal for such a lesson.
        merged = [i for i in from_ids if (s := get(i)) is not None and s.experience.status is Status.RETIRED
                  and s.experience.provenance.get("merged_into") == into_id]
        for other_id in merged:
            self._note(other_id, event.time, f"merged into {into_id}")
            self.removed[other_id] = (event.seq, f"merged into {into_id}")
        into = get(into_id)
        if into is not None and merged:
            into.history.note(event.time, f"absorbed {', '.join(from_ids)}")
            into.note_evidence(event.seq, event.time, self.policy, self.n_active, always=True)

    def _erase(self, data: Mapping[str, Any], event: Event) -> None:
        """An erase event: the lesson's text erased and the lesson retired (its evidence kept), and
        the contexts of the episodes it names blanked (the scrubbed log holds them blank)."""
        by, reason = str(data["by"]), str(data.get("reason", ""))
        if data.get("pending"):
            self.unscrubbed[event.seq] = event
        state = self.lessons.get(data["id"])
        if state is not None:
            self._set_status(state.experience.id, Status.RETIRED)  # out of the index under the scope it had
            fold.erase(state, by, event.time)
            self._note(state.experience.id, event.time, f"erased by {by}" + (f": {reason}" if reason else ""))
        pairs: set[tuple[str, str]] = set()
        for episode_id in data.get("episodes", ()):
            record = self.episodes.get(episode_id)
            if record is not None:
                pairs.update(record.context.items())
                record.context = {}
        # A fold that read the contexts before the scrub blanked them named slices after them (a
        # slice's name is context text): they go, as they go from a scrubbed snapshot.
        for lesson in self.lessons.values() if pairs else ():
            for name in pairs & lesson.slices.slices.keys():
                del lesson.slices.slices[name]

    def _note(self, exp_id: str, time: float, text: str) -> None:
        state = self.lessons.get(exp_id)
        if state is not None:
            state.history.note(time, text)

    def _set_status(self, exp_id: str, status: Status) -> None:
        state = self.lessons.get(exp_id)
        if state is None:
            return
        exp = state.experience
        fold.set_status(state, status)
        if status is Status.RETIRED:
            self.n_active -= self._unindex(exp.scope, exp_id)
        elif exp_id not in (bucket := self.index.setdefault(exp.scope.items_key, {})):
            bucket[exp_id] = state
            self.n_active += 1

    def _unindex(self, scope: Scope, exp_id: str) -> bool:
        """Take the lesson out of its scope's bucket; False when it was in none. An emptied bucket
        goes, so that no checkpoint keeps a scope (which may name a person) that no lesson has."""
        bucket = self.index.get(scope.items_key)
        if bucket is None or bucket.pop(exp_id, None) is None:
            return False
        if not bucket:
            del self.index[scope.items_key]
        return True

    def _narrow(self, data: Mapping[str, Any]) -> None:
        """A scope event: the lesson now applies only where `key` is `value` (sleep's narrow)."""
        state = self.lessons.get(data["id"])
        if state is None:
            return
        exp_id, old = data["id"], state.experience.scope
        if not fold.narrow(state, data["key"], data["value"], data.get("continued")):
            return  # folded twice, or the scope already fixes that key: nothing to narrow
        if self._unindex(old, exp_id):
            self.index.setdefault(state.experience.scope.items_key, {})[exp_id] = state

    def _edit(self, data: Mapping[str, Any], event: Event) -> None:
        """An edit event: the lesson's next version (its scope may move it in the index)."""
        state = self.lessons.get(data["id"])
        if state is None:
            return
        old = fold.edit(state, data)
        if old is None:
            return  # folded twice, or not the next version
        new = state.experience.scope
        if new != old and self._unindex(old, state.experience.id):
            self.index.setdefault(new.items_key, {})[state.experience.id] = state
        kept = data.get("evidence") == "keep"
        reason = f": {data['reason']}" if data.get("reason") else ""
        state.history.note(event.time, f"edited to version {data['version']} ({', '.join(data.get('changed', []))}); "
                                       f"evidence {'kept' if kept else 'restarted'}{reason}")
        if not kept:  # a point where the new segment starts, as a merge marks its own
            state.note_evidence(event.seq, event.time, self.policy, self.n_active, always=True)

    def _fold_outcome(self, data: Mapping[str, Any]) -> None:
        episode = self.episode(data["episode"])
        replace = bool(data.get("replace"))
        if episode is None or (episode.reports and not replace) or (episode.sealed and replace):
            # An outcome for a compacted episode, a second plain report, or a replacement of
            # an outcome sealed in a checkpoint. Unique keys refuse the latter two until a
            # checkpoint drops the keys of what it folded; from then on the fold refuses them,
            # the same way in every process, and report() tells its caller.
            self.ignored.add(self.seq)
            return
        if (mark := self.marks.current) is not None:
            mark.keep_episode(episode)
            mark.keep_lessons(episode.eligible, self.lessons)
        if data.get("expired"):  # the pending policy gave up on it: no reward, nothing learned
            episode.reports += 1
            episode.outcome_seq = self.seq
            episode.settled = "expired"
            return
        if self.changed is not None:
            self.changed.update(episode.eligible)
        reward = float(data["reward"])
        episode.reward = reward
        episode.signal = data.get("signal")
        episode.reports += 1
        episode.outcome_seq = self.seq
        episode.settled = "default" if data.get("default") else None
        self.reports += 1
        self.reward_n, self.reward_mean, self.reward_m2 = fold.welford(
            self.reward_n, self.reward_mean, self.reward_m2, reward)
        # An outcome the fold mode wrote names the spread and the divisor its fold used (they
        # came from the whole fleet's rewards at that moment): replaying it uses the same.
        used = data.get("fold") or {}
        sigma = float(used["sigma"]) if "sigma" in used else self.sigma()
        n_active = int(used["active"]) if "active" in used else self.n_active
        time = self.last.time if self.last is not None else 0.0
        for state in fold.fold_outcome(self.lessons.get, episode.eligible, episode.injected, episode.p,
                                       episode.context, reward, sigma, self.policy, n_active):
            state.note_evidence(self.seq, time, self.policy, n_active)


def same_texts(exp: Experience) -> tuple[Any, ...]:
    """What makes two adds the same lesson: its texts and its scope."""
    return exp.precondition, exp.action, exp.rationale, exp.scope


def _subsets(items: list[tuple[str, str]]) -> Iterable[ScopeKey]:
    """Every sub-tuple of the sorted context items (used when scopes outnumber them)."""
    n = len(items)
    for mask in range(1 << n):
        yield tuple(items[i] for i in range(n) if mask >> i & 1)


__all__ = ["FoldCache"]
