"""`Lamar`: add lessons, recall them, report what happened, judge, sleep, apply. Every write is an
event appended to the store; the folded state (lamar/state) is a cache of those events, so
processes sharing a store converge. The engine is the public face over that state."""

from __future__ import annotations

import _thread
import os
import random
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Self, Unpack

from lamar import arguments, listing
from lamar.experience import Experience, Status, check_context
from lamar.policy.choose import choose
from lamar.policy.config import Policy, Tuning
from lamar.policy.verdicts import Evidence, Verdict
from lamar.recall import Recall, chosen, logged_context
from lamar.signals import Signal, to_reward
from lamar.state.episode import EpisodeRecord
from lamar.state.erasure import Erasure, erase
from lamar.state.follower import rewritable
from lamar.state.holder import add_lesson, open_state, report_outcome, unknown_lesson, without_copies
from lamar.state.pending import PendingEpisode, expire, pending, settle
from lamar.store.base import Event, RewritableStore, RowsView, Store

if TYPE_CHECKING:
    from lamar.models.protocol import Model
    from lamar.policy.history import LessonHistory
    from lamar.policy.lesson import LessonState
    from lamar.preview import Preview
    from lamar.sleep.options import SleepOptions
    from lamar.sleep.proposals import ApplyResult, SleepReport
    from lamar.sleep.rejected import Rejection
    from lamar.sleep.traces import TraceSource
    from lamar.state.view import StateView
    from lamar.whatif.report import WhatIfReport


class Lamar:
    """The experience engine.

    Args:
        store: an `ExperienceStore`, any object with the store protocol, or a location
            (":memory:", a .json or .db path, a postgresql:// URL).
        k: most lessons injected per recall, from 0 to 1,000 (`lamar.arguments.MAX_SLOTS`).
        seed: seed of the engine's coins and tie-breaks (None: from the OS).
        **tuning: fields of `lamar.policy.Policy` (explore, warmup, holdout, discount, ...), typed
            by `lamar.policy.config.Tuning`; an unknown one is an InvalidArgument.

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
                 seed: int | None = None, **tuning: Unpack[Tuning]) -> None:
        # The arguments first: a bad one must not leave an opened store (a file made, a pool connected) behind.
        k, seed = arguments.slots(k), arguments.seed(seed)
        self.policy: Policy = arguments.policy(tuning)
        self.store: Store = arguments.engine_store(store)
        self.k = k
        self.seed = seed
        self._rng = random.Random(seed)
        self._lock = _thread.RLock()  # threading.RLock itself; importing threading costs a cold start
        # The log folded in this process (stats, sleep, pending), and where recall, report and
        # evidence read the lessons: that fold, or the rows of a store that folds its own.
        self._log, self._holder = open_state(self.store, self.policy, opened=self.store is not store)
        with self._lock:
            self._holder.open()

    # -- lessons -----------------------------------------------------------------------------

    def add(self, experience: Experience) -> str:
        """Store a lesson; it is eligible at once (as a cold arm). Returns its id. A lesson without an id
        whose precondition, action, rationale and scope a stored lesson has word for word (retired ones
        included) is stored once: `add` returns the stored lesson's id (`sleep` merges near-duplicates)."""
        from lamar.safety.boundary import admitted

        exp = admitted(arguments.experience(experience)).with_identity()  # screened, stored as the prompt shows it
        with self._lock:
            return add_lesson(self._holder, exp, fresh=not experience.id)

    def get(self, exp_id: str) -> Experience:
        """The lesson with that id (retired ones included)."""
        with self._lock:
            return self._lesson(exp_id)[0].experience.copy()

    def _lesson(self, exp_id: str) -> tuple[LessonState, int]:
        """The lesson's current state and the Bonferroni divisor."""
        view = self._holder.lessons([exp_id] if isinstance(exp_id, str) else [])
        if not view.states:
            raise unknown_lesson(self._log, exp_id, self.store.location)
        return view.states[0], view.active

    def experiences(self, status: Status | str | None = None, *, verdict: Verdict | str | None = None,
                    scope: Mapping[str, str] | None = None) -> list[Experience]:
        """Lessons in the order they were added, optionally filtered.

        Args:
            status: keep one status ("candidate", "active", "retired"; any case, as `report` takes).
            verdict: keep one verdict ("helps", "harms", "unknown"; any case).
            scope: keep lessons whose scope has all these fields with these values.
        """
        with self._lock:
            return listing.listed(self._holder.lessons, self.policy, status, verdict, scope)

    def page(self, start: int = 0, limit: int = 20, *, status: Status | str | None = None,
             context: Mapping[str, str] | None = None, text: str | None = None) -> listing.LessonPage:
        """A page of the lessons from place `start`, copying only its own; filters, arguments: `lamar.listing.page`."""
        with self._lock:
            return listing.page(self._holder.lessons, start, limit, status, context, text)

    def evidence(self, exp_id: str) -> Evidence:
        """The lesson's measured lift, its bounds and its verdict."""
        with self._lock:
            state, n = self._lesson(exp_id)
            return state.evidence(self.policy, n)

    def verdicts_of_record(self) -> dict[str, Verdict]:
        """Every active lesson's verdict at this look, by false-discovery control across lessons (e-BH at `alpha_helps`
        and `alpha_harms`): among the lessons called helpful now, the expected share of wrong ones is at most
        alpha. More proof per episode than `evidence()`, whose helps is never wrong (docs/decisions.md)."""
        from lamar.policy.ebh import verdicts_of_record

        with self._lock:
            states = self._holder.lessons().states
            return verdicts_of_record([(s.experience.id, s.ledger) for s in states
                                       if s.experience.status is not Status.RETIRED], self.policy)

    def history(self, exp_id: str) -> LessonHistory:
        """The lesson's evidence over time, its audit trail and how many episodes injected it: noted by the fold
        as outcomes arrived, at a spacing that doubles as the points fill up (`lamar.policy.history`)."""
        with self._lock:
            self._log.sync()
            return self._log.lesson(exp_id).past(self.policy, self._log.cache.n_active)

    def edit(self, exp_id: str, *, precondition: str | None = None, action: str | None = None,
             rationale: str | None = None, scope: Mapping[str, str] | None = None,
             evidence: str = "restart", reason: str = "edited by hand") -> Experience:
        """Store a new version of a lesson under the same id; returns it. The id keeps its audit trail, counts
        and past evidence; `provenance["version"]` counts the versions. The texts pass `add`'s gate. The
        evidence restarts (a new treatment) unless `evidence="keep"` (`lamar.edit`).

        Args:
            exp_id: the lesson to edit (not retired: `revive` it first).
            precondition, action, rationale: the new texts; None keeps the current one.
            scope: the new scope, whole (a mapping of strings); None keeps the current one.
            evidence: "restart" or "keep".
            reason: recorded in the audit trail (at most 6,000 characters).

        Raises:
            UnknownExperience: no lesson has that id.
            InvalidExperience: the lesson is retired, or a new text is one `add` would refuse.
            InvalidArgument: nothing changes; a bad evidence or reason; "keep" with a new action or scope.
            InvalidContext: the scope is not a mapping of strings.
            EventConflict: another writer stored this version first (read it again and retry).
        """
        from lamar.edit import write_edit

        with self._lock:
            write_edit(self._holder, self._lesson(exp_id)[0].experience, precondition=precondition, action=action,
                       rationale=rationale, scope=scope, evidence=evidence, reason=reason)
            return self._lesson(exp_id)[0].experience.copy()

    def retire(self, exp_id: str, reason: str = "retired by hand") -> None:
        """Stop injecting a lesson (kept for the audit trail; `revive` undoes it)."""
        self._change_status(exp_id, Status.RETIRED, reason)

    def revive(self, exp_id: str, reason: str = "revived by hand") -> None:
        """Make a retired lesson eligible again, as an active lesson."""
        self._change_status(exp_id, Status.ACTIVE, reason)

    def erase(self, exp_id: str, *, contexts: bool = False, by: str | None = None,
              reason: str = "erased by hand") -> Erasure:
        """Remove a lesson's text from the store, keeping what its evidence and every verdict rest on.

        Its texts and scope values become "[erased]" in every stored event and checkpoint, and it retires for good
        (with `contexts`, the contexts of the episodes it was eligible in become {} too). Ids, coins and rewards
        stay, so every verdict is what it was; the `erase` event records who, when and why, never the text.

        Args:
            exp_id: the lesson to erase.
            contexts: also blank the contexts of the episodes it was eligible in.
            by: who erases it, for the audit (default: the OS user; at most 6,000 characters).
            reason: why, for the audit (keep the erased text out of it; at most 6,000 characters).

        Returns:
            The `Erasure` the audit event records (of an erased lesson: its cleanup runs again, no event).

        Raises:
            UnknownExperience: no lesson has that id.
            InvalidArgument: `contexts` for a lesson erased without them, a bad or too long argument.
            StoreError: the store cannot rewrite its events (nothing changed), or the rewrite failed.
        """
        contexts, who, why = arguments.flag(contexts, "contexts"), arguments.who(by), arguments.reason(reason)
        with self._lock:
            return erase(self._holder, self.store, self._lesson(exp_id)[0].experience, contexts, who, why)

    def _change_status(self, exp_id: str, status: Status, reason: str) -> None:
        from lamar.edit import status_event

        reason = arguments.reason(reason)
        with self._lock:
            event = status_event(self._lesson(exp_id)[0].experience, status, reason)
            if event is not None:
                self._holder.write([event])

    # -- recall and report -------------------------------------------------------------------

    def recall(self, context: Mapping[str, str], *, k: int | None = None,
               candidates: Iterable[str] | None = None) -> Recall:
        """Choose the lessons to inject for `context` and log the episode.

        Args:
            context: a mapping of strings (project, language, task, ...); logged with credentials scrubbed.
            k: slots for this call (default: the engine's `k`).
            candidates: restrict the choice to these experience ids (e.g. what a
                retriever found); unknown ids are ignored.

        Returns:
            A `Recall`; report its `episode_id` when the outcome is known.
        """
        ctx = check_context(context)
        slots, allowed = self.k if k is None else arguments.slots(k), arguments.candidate_ids(candidates)
        with self._lock:
            view, eligible, logged = self._eligible(ctx, allowed)
            injected, held, p = choose(eligible, slots, logged, view.sigma, view.active, self.policy, self._rng)
            data, recalled = chosen(logged, eligible, injected, held, p)
            self._holder.recall(Event("episode", data, key=f"episode:{recalled.episode_id}"))
            return recalled

    def _eligible(self, ctx: dict[str, str],
                  allowed: set[str] | None) -> tuple[RowsView, list[LessonState], dict[str, str]]:
        """The lessons eligible in `ctx` as given, kept to `allowed` (None: all), and `ctx` as logged (scrubbed)."""
        view: RowsView = self._holder.eligible(ctx)
        return view, without_copies(view.states, allowed), logged_context(ctx)

    def preview(self, context: Mapping[str, str], *, k: int | None = None,
                candidates: Iterable[str] | None = None, draws: int = 200) -> Preview:
        """What `recall(context)` would choose now, and why, without logging an episode.

        Every eligible lesson: whether one draw wants it (as a recall's), the share of `draws` draws that do, its
        estimate here, its evidence coin, its verdict and bounds. The draws use a random source of their own
        (seeded with `seed`), so a preview writes nothing and never changes what the next recall does. `context`,
        `k` and `candidates` are as for `recall` and refused as there; a bad `draws` is an InvalidArgument."""
        from lamar.preview import preview

        ctx = check_context(context)
        slots = self.k if k is None else arguments.slots(k)
        allowed, draws = arguments.candidate_ids(candidates), arguments.draws(draws)
        with self._lock:
            view, eligible, logged = self._eligible(ctx, allowed)
            return preview(eligible, slots, logged, view.sigma, self.policy, random.Random(self.seed), draws)

    async def arecall(self, context: Mapping[str, str], *, k: int | None = None,
                      candidates: Iterable[str] | None = None) -> Recall:
        """`recall` without blocking the event loop (the store may touch disk)."""
        import asyncio  # here, not at module level: `import lamar` stays cheap for hooks and CLIs

        return await asyncio.to_thread(self.recall, context, k=k, candidates=candidates)

    def report(self, episode_id: str, signal: Signal | float | str, *, replace: bool = False) -> None:
        """Record what happened after an episode: a Signal, its name, or a reward in [-1, 1] ("-0.5" too).

        A default outcome or an expiry that the pending policy (or `expire`) recorded stands in for the report
        only: a late report replaces it without `replace=True`.

        Raises:
            UnknownEpisode: no recall in this store produced `episode_id`.
            DuplicateReport: the episode has an outcome and `replace` is False, or writers overtook it at every try.
            InvalidReward: the signal is not a Signal, its name, or a number in [-1, 1].
            InvalidArgument: `replace` is not True or False (a "false" read from a config would replace).
        """
        (reward, parsed), replace, where = to_reward(signal), arguments.flag(replace, "replace"), self.store.location
        with self._lock:
            report_outcome(self._holder, episode_id, reward, parsed.value if parsed else None, replace, where)

    async def areport(self, episode_id: str, signal: Signal | float | str, *, replace: bool = False) -> None:
        """`report` without blocking the event loop."""
        import asyncio

        await asyncio.to_thread(self.report, episode_id, signal, replace=replace)

    def pending(self, older_than: float | None = None, *, now: float | None = None,
                only: Iterable[str] | None = None) -> list[PendingEpisode]:
        """Episodes still waiting for their outcome, oldest first, each with its age.

        Args:
            older_than: keep those at least this many seconds old.
            now: the clock to measure ages against (default: `time.time()`).
            only: keep these episode ids (a thread's, say); one read of the store however many.
        """
        ids = arguments.pending_filter(older_than, now, only)
        with self._lock:
            self._log.sync()
            return pending(self._log, older_than, now, ids)

    def settle_pending(self, *, now: float | None = None) -> list[str]:
        """Apply the `pending_after` policy now, as recall does (docs/langgraph.md, "Pending episodes").

        Every episode pending `pending_after` seconds or more gets `pending_outcome` as a default outcome (None:
        expired), an outcome event that a late report still replaces. Returns the ids of those it settled."""
        arguments.seconds(now, "now")
        with self._lock:
            self._log.sync()
            return settle(self._log, now)

    def expire(self, episode_id: str, reason: str = "expired by hand") -> bool:
        """Record that an episode will get no outcome (its run failed, say): an outcome event with no reward, so
        it stops being pending and teaches nothing. A late report still replaces it. False when it had an outcome.

        Raises:
            UnknownEpisode: no recall in this store produced `episode_id`.
        """
        with self._lock:
            self.episode(episode_id)
            return expire(self._log, episode_id, arguments.reason(reason))

    def episode(self, episode_id: str) -> EpisodeRecord:
        """A copy of the logged episode (context, eligible, injected, held-out, propensities, outcome)."""
        with self._lock:
            self._log.sync()
            return self._log.episode(episode_id).copy()

    # -- sleep -------------------------------------------------------------------------------

    def sleep(self, traces: TraceSource | None = None, model: Model | None = None,
              **options: Unpack[SleepOptions]) -> SleepReport:
        """Propose changes (retire proven harm, merge duplicates, ...); changes nothing.

        Args:
            traces: sessions to mine for new lessons (needs `model`).
            model: anything with `complete(prompt, *, max_tokens) -> str`.
            **options: `lamar.sleep.options.SleepOptions` (similarity, keep_last, ...; see `run_sleep`).

        Raises:
            InvalidArgument: an unknown option, or one of the wrong type or out of range.
        """
        from lamar.sleep import run_sleep
        from lamar.sleep.options import known

        known(options)
        with self._lock:
            return run_sleep(self._view(whole=True), traces=arguments.traces(traces), model=model, **options)

    def apply(self, report: SleepReport, only: Iterable[str] | None = None) -> ApplyResult:
        """Carry out a sleep report's proposals (all, or the ids in `only`)."""
        from lamar.sleep import apply_report

        report, only = arguments.sleep_report(report), arguments.proposal_ids(only)
        with self._lock:
            result = apply_report(self._view(), report, only=only)  # it ends synced with the log
            kinds = {p.id: p.kind for p in report.proposals}
            if any(kinds.get(pid) == "compact" for pid in result.applied) and isinstance(self.store, RewritableStore):
                self.checkpoint()  # the log shrinks too, not only the cache
            return result

    def reject(self, report: SleepReport, only: Iterable[str]) -> list[str]:
        """Remember a person's no to these proposals: sleep leaves each out until what it rests on changes
        (docs/sleep.md, "Rejected proposals"). Returns the ids recorded now (not those held already)."""
        from lamar.sleep.rejected import reject

        with self._lock:
            return reject(self._view(), arguments.sleep_report(report), arguments.proposal_ids(only) or [])

    def rejections(self) -> list[Rejection]:
        """The rejections in force, oldest first."""
        from lamar.sleep.rejected import described, in_force

        with self._lock:
            return described(view := self._view(), in_force(view))

    def unreject(self, proposal_id: str) -> list[Rejection]:
        """Forget the rejections of `proposal_id` (sleep may ask again); those undone, [] when none was in force."""
        from lamar.sleep.rejected import unreject

        with self._lock:
            return unreject(self._view(), arguments.proposal_id(proposal_id))

    def would_skip(self, report: SleepReport) -> dict[str, str]:
        """What `apply` would skip now, and why (applied already, stale, refused), by id; writes nothing."""
        from lamar.sleep import would_skip

        with self._lock:
            return would_skip(self._view(), arguments.sleep_report(report))

    def _view(self, whole: bool = False) -> StateView:
        """The view sleep and apply read: the whole log folded now, or when it is first asked for every episode."""
        from lamar.state.view import StateView

        self._log.sync()
        return StateView(self._log, self._lock, whole=whole)

    def whatif(self, policy: Any = None, since: float | None = None,
               scope: Mapping[str, str] | None = None) -> WhatIfReport:
        """Estimate what other policies (no memory, without a lesson, proven lessons only, another holdout or k)
        would have got over the logged episodes, from their logged propensities (`lamar.whatif.whatif`)."""
        from lamar.whatif import whatif

        return whatif(self, policy, since=since, scope=scope)

    def checkpoint(self) -> bool:
        """Replace the stored log, up to the last event folded, by one snapshot of this state; applying a
        compact proposal calls this, other writers go on, and the outcomes folded into it are final:
        `report(..., replace=True)` refuses them (docs/sleep.md). False when another process had checkpointed
        this far, or erased a lesson after the events this engine folded (nothing changed); StoreError when
        the store cannot rewrite its log (it has no `rewrite` method)."""
        store = rewritable(self.store)
        # In the fold mode no write may commit below the snapshot's seq once it is folded.
        with self._lock:
            return self._log.checkpoint(store, self._holder.exclusive)

    def rebuild(self) -> None:
        """Forget the cache and fold every stored event again (in the fold mode, the lesson rows too)."""
        with self._lock:
            self._holder.rebuild()

    def stats(self) -> dict[str, Any]:
        """Counts of lessons, episodes and reports, by status and verdict; `events` is the seq of the last event
        folded: the log's length, except in PostgreSQL's fold mode (docs/postgres.md)."""
        from lamar.state.summary import summary

        with self._lock:
            self._log.sync()
            return summary(self._log.cache, self.policy, self.store.location)

    def close(self) -> None:
        """Save the folded state if it is worth it (so the next process folds a short tail), then close the store."""
        with self._lock:
            self._log.save_if_worth()
            self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Lamar(store={self.store.location!r}, k={self.k}, lessons={len(self._log.cache.lessons)})"


__all__ = ["EpisodeRecord", "Erasure", "Lamar"]
