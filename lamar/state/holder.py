"""Where recall, report and evidence find the folded state: this process's fold of the log
(`LocalFold`), or the rows of a store that folds its own (`StoreRows`, PostgreSQL's fold mode)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from lamar._errors import (
    EventConflict,
    InvalidExperience,
    StoreError,
    UnknownEpisode,
    UnknownExperience,
)
from lamar.arguments import unknown
from lamar.experience import Experience, Status
from lamar.policy.config import Policy
from lamar.state.cache import same_texts
from lamar.state.follower import Follower, SettledFollower
from lamar.state.outcome import overtaken, refused, unknown_episode, write_outcome
from lamar.state.pending import settle
from lamar.state.saved import tuning_of
from lamar.store.appendable import storable_key
from lamar.store.base import Event, FoldedRows, KeyedStore, RowsView, Store, folded_rows

# The fold mode: a recall applies the pending policy (which needs a fold of the log) at most
# once in this many seconds, or in a quarter of `pending_after` if that is shorter.
_SETTLE_EVERY = 60.0
_BUILDS = 3  # builds of stale rows a read makes before it reads them as they are
# The pauses before each write again of a report that another writer's outcome overtook.
_OVERTAKEN_PAUSES = (0.0, 0.05, 0.1, 0.2, 0.4, 0.8)


class Holder(Protocol):
    """What recall, report and evidence read and write of the folded state. Called under the
    engine's lock; reads return the lessons with the reward spread and the Bonferroni divisor."""

    policy: Policy  # the tuning the state is folded under

    def open(self) -> None:
        """Make ready what the first call reads."""

    def eligible(self, context: dict[str, str]) -> RowsView:
        """The non-retired lessons whose scope the context contains."""

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        """These lessons (all when None), in the order they were added."""

    def add(self, event: Event) -> bool:
        """Append a lesson's `experience` event; False when its id is taken (the store or the fold
        refuses it)."""

    def first_same(self, exp: Experience) -> str | None:
        """The id of the first lesson added with `exp`'s texts and scope, retired ones included:
        one it finds is first among every add that took an earlier place in the order of
        `lessons`, those still committing included."""

    def write(self, events: list[Event], *, fold: bool = True) -> None:
        """Append events that change lessons (a status), seen by the next read; without `fold`, not
        before the caller's `rebuild` (an erase, which folds the log again once it is scrubbed)."""

    def recall(self, event: Event) -> None:
        """Append a recall's episode event, then settle the pending episodes that are due."""

    def report(self, episode_id: str, reward: float, signal: str | None, replace: bool) -> None:
        """Append and fold an episode's outcome (see `Lamar.report` for what is refused)."""

    def rebuild(self) -> None:
        """Fold everything again from the log."""

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold off every other writer's fold while the log is rewritten (a checkpoint)."""


def add_lesson(holder: Holder, exp: Experience, *, fresh: bool) -> str:
    """Store `exp` and return its id; when `fresh` (the caller gave no id), a stored lesson with its
    texts and scope is returned instead, so that adding at every start stores a lesson once.

    Processes that add the same fresh lesson at once each find none and store one. Each then reads
    the lessons again, every earlier add visible by then (`Holder.first_same`): the copy added first
    is the lesson, and every later one is retired at once as a copy of it, so all of them return the
    same id and no evidence is split between copies."""
    if fresh and (held := holder.first_same(exp)) is not None:
        return held
    if not holder.add(Event("experience", exp.to_dict(), key=f"experience:{exp.id}")):
        raise InvalidExperience(f"an experience with id {exp.id!r} is already stored")
    if fresh and (first := holder.first_same(exp)) not in (None, exp.id):
        from lamar.edit import status_event

        retired = status_event(exp, Status.RETIRED, f"added at the same time as {first}, the same lesson")
        if retired is not None:  # a lesson added retired is a copy that recall never shows already
            holder.write([retired])
        return first
    return exp.id


def without_copies(states: list[Any], allowed: set[str] | None = None) -> list[Any]:
    """`states` (LessonStates in the order they were added) kept to the ids in `allowed` (None: all), with
    each later copy of a lesson left out.

    Workers that add the same lesson at once each store a copy, and each adder retires its own only once
    it has read the first (`add_lesson`); a recall in between would inject the lesson twice and give the
    copy episodes of its own, splitting the first one's evidence."""
    if allowed is not None:
        states = [state for state in states if state.experience.id in allowed]
    if len({state.experience.action for state in states}) == len(states):
        return states  # no two share an action, so no copies: one set per recall in the usual case
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for state in states:
        key = same_texts(state.experience)  # the sameness `add_lesson` finds a copy by (`Holder.first_same`)
        if key not in seen:
            seen.add(key)
            kept.append(state)
    return kept


def report_outcome(holder: Holder, episode_id: str, reward: float, signal: str | None, replace: bool,
                   location: str) -> None:
    """`holder.report`, whose refusal of an id the store holds as a lesson's says so: a recall hands
    over an episode id and lesson ids, and one is passed for the other. A report that another writer's
    outcome of the episode overtook reads the log again, and replaces that outcome if asked to or if it is a default."""
    for pause in (*_OVERTAKEN_PAUSES, None):
        try:
            holder.report(episode_id, reward, signal, replace)
            return
        except EventConflict:
            # Another writer's outcome of the episode came between this one's read and its write. Read again:
            # a replacement replaces it, a late report replaces it where it is a default, once a read shows it
            # (in PostgreSQL's fold mode it may wait in the inbox for its fold, or behind a write in flight).
            if pause is None:
                break
            time.sleep(pause)
        except UnknownEpisode:
            if not isinstance(episode_id, str) or not holder.lessons([episode_id]).states:
                raise
            raise unknown_episode(episode_id, location, lesson=True) from None
    raise overtaken(episode_id, replace, len(_OVERTAKEN_PAUSES) + 1)


def unknown_lesson(log: Follower, exp_id: str, location: str) -> UnknownExperience:
    """The refusal of a lesson id the store holds none by, which says so where the store holds it as an
    episode's id (`report_outcome`'s refusal, the other way round)."""
    return unknown(UnknownExperience, exp_id, location, held_as="episode" if _logged_episode(log, exp_id) else None)


def _logged_episode(log: Follower, exp_id: str) -> bool:
    # By key where the store keys its events: a miss (a mistyped id, the start of one that the MCP server
    # tries whole first) must not cost a fold of the log, which a sync is in the fold mode (its cache is
    # emptied after each build) and a find is in a cache resumed from a saved state.
    if not storable_key(exp_id):
        return False
    if exp_id in log.cache.episodes:  # folded here already: a checkpoint drops the keys of the episodes it folds
        return True
    if isinstance(log.store, KeyedStore):
        return any(event.kind == "episode" for event in log.store.lookup([f"episode:{exp_id}"]))
    log.sync()
    return log.find(exp_id) is not None


def open_state(store: Store, policy: Policy, opened: bool = False) -> tuple[Follower, Holder]:
    """The follower of `store`'s log, and the holder recall and report go through; `opened`: the
    engine opened `store` from its location, so a store in memory is this engine's alone."""
    rows = folded_rows(store)
    if rows is None:
        log = Follower(store, policy, private=opened and store.location == ":memory:")
        return log, LocalFold(log)
    settled = SettledFollower(store, policy, rows.settled, rows.places)
    return settled, StoreRows(rows, settled)


class LocalFold:
    """The folded state as this process folded it, synced with the log before each read."""

    def __init__(self, log: Follower) -> None:
        self._log = log
        self.policy = log.policy

    def open(self) -> None:
        if not self._log.resume():
            self._log.sync()

    def eligible(self, context: dict[str, str]) -> RowsView:
        self._log.sync()
        cache = self._log.cache
        return RowsView(cache.eligible(context), cache.sigma(), cache.n_active, None)

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        self._log.sync()
        cache = self._log.cache
        found = cache.lessons
        states = list(found.values()) if ids is None else [found[i] for i in ids if i in found]
        return RowsView(states, cache.sigma(), cache.n_active, None)

    def add(self, event: Event) -> bool:
        log = self._log
        log.sync()
        if event.data["id"] in log.cache.lessons:
            return False
        try:
            (stored,) = log.append([event])
        except EventConflict:
            return False
        log.cache.ignored.clear()
        log.sync()
        return stored.seq not in log.cache.ignored  # refused: another writer added it as a checkpoint ran

    def first_same(self, exp: Experience) -> str | None:
        self._log.sync()
        return self._log.cache.first_same(exp)

    def write(self, events: list[Event], *, fold: bool = True) -> None:
        self._log.append(events)
        if fold:
            self._log.sync()

    def recall(self, event: Event) -> None:
        self.write([event])
        if self._log.policy.pending_after is not None:
            settle(self._log, None)

    def report(self, episode_id: str, reward: float, signal: str | None, replace: bool) -> None:
        if write_outcome(self._log, episode_id, reward, signal, replace):
            raise refused(episode_id)

    def rebuild(self) -> None:
        self._log.refold()

    def exclusive(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()


class StoreRows:
    """The folded state as the store holds it in rows that each write folds (`FoldedRows`).

    The rows are built here first when they are missing, stale or were folded under other
    tuning: this engine's tuning is theirs from then on. The follower's cache serves only what
    needs the whole log (stats, sleep, pending, a report the rows cannot fold).
    """

    def __init__(self, rows: FoldedRows, log: SettledFollower) -> None:
        self._rows = rows
        self._log = log
        self.policy = log.policy
        if log.policy.pending_after is not None:
            # Its recalls fold the log to settle pending episodes, and a late report replaces a default:
            # marked from the first fold, the default replaced has a mark before it (`_replace`).
            log.cache.marks.start()
        self._tuning: str | None = None
        self._next_settle = 0.0  # when a recall next applies the pending policy (monotonic)
        # Erase events known pending (by seq); when a write last asked the store for them
        # (`FoldedRows.unscrubbed`, monotonic): a write asks once per `erasure.GRACE`, the first
        # a GRACE after opening, since that question reads the whole log (no index finds a kind)
        # and a short-lived process (a CLI call, a hook) would pay it on every run; and the seq
        # through which they asked about every event that will ever commit.
        self._unscrubbed: dict[int, Event] = {}
        self._asked = time.monotonic()
        self._asked_through = 0
        self._asked_for: float | None = None  # the rows' `erasing` this engine last asked about

    def open(self) -> None:
        pass  # the rows are read as they are, and the log is folded only when a call needs it

    def _read(self, read: Callable[[FoldedRows], RowsView]) -> RowsView:
        view = read(self._rows)
        # Another engine's erase may blank the rows again between this build and the read after
        # it: read once stale, they would list no lesson (an existing id "unknown", a recall with
        # none eligible).
        for _ in range(_BUILDS):
            if view.tuning == self._tuning_text():
                break
            if view.tuning is not None:
                self._other_tuning(view.tuning)
            self._build()
            view = read(self._rows)
        return view

    def eligible(self, context: dict[str, str]) -> RowsView:
        return self._read(lambda rows: rows.eligible(context))

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        return self._read(lambda rows: rows.lessons() if ids is None else rows.lessons(ids))

    def add(self, event: Event) -> bool:
        try:  # the store refuses an id that has a row or a key
            self._log.append([event])
        except EventConflict:
            return False
        return True

    def first_same(self, exp: Experience) -> str | None:
        # The rows' order is the order in which adds took their seqs, not the order in which they
        # committed: a copy found committed may follow one still committing, which its adder will
        # find first. Once every write that took a seq before the copy found has ended (it took
        # its own before this settles), the rows read again hold every copy added before it. A
        # writer stopped mid-write is not waited for past the store's limit.
        if self._first_same(exp) is None:
            return None
        self._rows.settled()
        return self._first_same(exp)

    def _first_same(self, exp: Experience) -> str | None:
        same = same_texts(exp)
        for state in self.lessons().states:  # in the order they were added
            if same_texts(state.experience) == same:
                return str(state.experience.id)
        return None

    def write(self, events: list[Event], *, fold: bool = True) -> None:
        self._log.append(events)

    def recall(self, event: Event) -> None:
        self._log.append([event])
        after = self._log.policy.pending_after
        if after is not None and time.monotonic() >= self._next_settle:
            self._next_settle = time.monotonic() + min(_SETTLE_EVERY, after / 4)
            self._log.sync()
            settle(self._log, None)
        self._finish_erasures()

    def _finish_erasures(self) -> None:
        """Finish the scrub of an erase stopped behind its event, as a writer in the log mode does
        on its sync (`Follower.finish_erasures`): no write folds the log here, so the store is asked
        which erase events are still pending: rarely, and past the events it already asked about,
        so that only the first question reads the whole log. The rows name the oldest erase their
        build found pending (`FoldedRows.erasing`, read with them): once it is a grace old, the next
        writer asks at once, as the next writer of a log-mode store finds it in its fold."""
        from lamar.state import erasure

        now, erasing = time.monotonic(), self._rows.erasing()
        due = erasing is not None and erasing != self._asked_for and time.time() - erasing >= erasure.GRACE
        if due or now - self._asked >= erasure.GRACE:
            self._asked, self._asked_for = now, erasing if due else self._asked_for
            try:
                # Settled before the question: every event at or below `through` is in its answer.
                through = self._rows.settled()
                self._unscrubbed.update((e.seq, e) for e in self._rows.unscrubbed(self._asked_through))
            except StoreError:
                return  # the write went through: the question waits for the next time
            if through is not None:
                self._asked_through = through
        if self._unscrubbed and erasure.finish(self._log, self._unscrubbed):
            self._log.cache.reset()  # the scrub marked the rows stale: the next read builds them from the scrubbed log

    def report(self, episode_id: str, reward: float, signal: str | None, replace: bool) -> None:
        if not replace and storable_key(episode_id):
            # One transaction in the store: the episode found by key, its eligible lessons'
            # rows locked and folded. A first report ends here; anything else (no episode
            # under that key, an outcome already there) takes the path through the log below.
            data = {"episode": episode_id, "reward": reward, "signal": signal, "replace": False}
            try:
                self._log.wrote = True
                self._rows.append([Event("outcome", data, key=f"outcome:{episode_id}")], strict=True)
            except (UnknownEpisode, EventConflict):
                pass
            else:
                self._finish_erasures()
                return
        if self._replaces(episode_id, replace):
            was_refused = self._replace(episode_id, reward, signal, replace)
        else:
            was_refused = write_outcome(self._log, episode_id, reward, signal, replace)
            if self._rows.lessons([]).tuning is None:
                self._build()  # the outcome could not be folded in the rows (another writer's came first)
        self._finish_erasures()
        if was_refused:
            raise refused(episode_id)

    def _replaces(self, episode_id: str, replace: bool) -> bool:
        """Whether this report replaces an outcome (`write_outcome` decides alike), as the log folded here
        now says. The undo marks are on from before this fold, so that the outcome replaced has one before it."""
        log = self._log
        log.cache.marks.start()
        log.sync()
        record = log.find(episode_id)
        return record is not None and bool(record.reports) and not record.sealed and (
            replace or record.settled is not None or record.reward is None)

    def _replace(self, episode_id: str, reward: float, signal: str | None, replace: bool) -> bool:
        """`write_outcome` of a replacement, then the rows it changed written again: those of the lessons
        whose fold changed from the mark this process's fold went back to, not a build of every row.

        Under the namespace's write lock held exclusively, so that the log folded here (caught up
        under it: a short tail) is what the rows hold when the outcome is written, and nothing else
        is written until the rows are. Where no mark was that old, the whole log was folded again:
        every row is written from that fold. Where the store finds more than this write since the
        lock was taken (a lost connection, a log-mode write), the rows are built from the log."""
        log, cache = self._log, self._log.cache
        with self._rows.exclusive():
            log.scrubs = False  # a scrub, which blanks every row, is left for after (`_finish_erasures`)
            try:
                log.sync()
                cache.track()
                was_refused = write_outcome(log, episode_id, reward, signal, replace, synced=True)
                changed, lessons = cache.changed, cache.lessons
                # A fold of the whole log names no change: every row is written from it, not built by folding it again.
                whole = changed is None and not cache.partial
                states = list(lessons.values()) if whole else [lessons[i] for i in changed or () if i in lessons]
                active = sum(s.experience.status is not Status.RETIRED for s in lessons.values())
                if not cache.settled or (changed is None and not whole) or not self._rows.refresh(
                        self._tuning_text(), states, (cache.reward_n, cache.reward_mean, cache.reward_m2), active,
                        cache.seq, whole=whole):
                    self._build()
            finally:
                log.scrubs = True
                cache.changed = None
        return was_refused

    def rebuild(self) -> None:
        self._log.refold()
        self._build(force=True)

    def exclusive(self) -> AbstractContextManager[None]:
        return self._rows.exclusive()

    def _tuning_text(self) -> str:
        if self._tuning is None:
            self._tuning = json.dumps(tuning_of(self._log.policy), sort_keys=True)
        return self._tuning

    def _other_tuning(self, theirs_text: str) -> None:
        """Say, once per pair of tunings, that rows another engine folded under other tuning are
        built again: engines of two tunings on one namespace build them back and forth, each build
        a fold of the whole log that holds the namespace's writes back."""
        from lamar._errors import warn_caller

        theirs, ours = json.loads(theirs_text), json.loads(self._tuning_text())
        differ = ", ".join(f"{name} {theirs.get(name)!r} there, {ours.get(name)!r} here"
                           for name in sorted(set(theirs) | set(ours)) if theirs.get(name) != ours.get(name))
        warn_caller(f"the lesson rows of {self._log.store.location} were folded under other tuning ({differ}): "
                    "building them again from the whole log under this engine's; an engine still running "
                    "with the other tuning builds them back at its next call. Give every process of the "
                    "namespace the same Lamar(..., tuning) (docs/postgres.md, 'Why the fold mode is the "
                    "default')")

    def _build(self, force: bool = False) -> None:
        """Fold the whole log here and write the result as the store's rows (heavy), unless (not
        `force`) another engine has just built them under this tuning."""
        self._rows.build(self._tuning_text(), self._log.cache.fold_log, force=force)
        self._unscrubbed.update(self._log.cache.unscrubbed)  # the fold found them: kept past its reset
        self._log.cache.reset()  # the log's fold went into the rows; kept here it would only weigh on every call


__all__ = ["Holder", "LocalFold", "StoreRows", "open_state", "report_outcome", "unknown_lesson"]
