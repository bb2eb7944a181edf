"""Sleep: the offline step. It proposes; `apply` carries out what a reviewer approved."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from lamar._errors import EventConflict, InvalidArgument, LamarError, UnknownProposal, echoed
from lamar.cancel import Cancelled, stop_point
from lamar.experience import Experience, Status
from lamar.last_sleep import keep_sleep
from lamar.models.protocol import DEFAULT_TIMEOUT
from lamar.policy.fold import merged_elsewhere
from lamar.policy.verdicts import Verdict
from lamar.sleep.acknowledged import acknowledged_with
from lamar.sleep.compaction import KEEP_LAST, KEEP_UNREPORTED, propose_compaction, still_folds
from lamar.sleep.consolidate import consolidate, normalize
from lamar.sleep.dropped import KIND as RETIRE_DROPPED
from lamar.sleep.dropped import propose_retiring_dropped, still_dropped
from lamar.sleep.kinds import candidate_lesson, kind_of
from lamar.sleep.mining import MAX_PROMPT_TOKENS
from lamar.sleep.narrow import propose_narrowing, still_splits
from lamar.sleep.options import check_sleep_options
from lamar.sleep.printed import printed_id
from lamar.sleep.proposals import (
    SKIP_CODES,
    ApplyResult,
    Dropped,
    Proposal,
    SkipCode,
    SleepReport,
    already_applied,
    skip_code,
)
from lamar.sleep.rejected import said_yes, without_rejected
from lamar.sleep.similarity import NEAR_DUPLICATE
from lamar.sleep.traces import Trace, TraceSource, TraceWriter, load_traces
from lamar.store import Event

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView


def run_sleep(lam: SleepView, *, traces: TraceSource | None = None, model: Any = None,
              similarity: float = NEAR_DUPLICATE, keep_last: int | None = KEEP_LAST,
              older_than: float | None = None, keep_unreported: int | None = KEEP_UNREPORTED,
              max_prompt_tokens: int = MAX_PROMPT_TOKENS,
              max_tokens: int = 2048, min_support: int = 2,
              model_timeout: float | None = DEFAULT_TIMEOUT, max_model_calls: int | None = None,
              include_applied: bool = False, include_rejected: bool = False) -> SleepReport:
    """Look at the store (and traces, with a model) and propose; write nothing.

    Args:
        lam: the folded state, synced.
        traces: sessions to mine (a JSON Lines path or an iterable; needs `model`).
        model: anything with `complete(prompt, *, max_tokens) -> str`.
        similarity: word-overlap threshold for near-duplicates, in (0, 1] (1.0: the same content words only).
        keep_last: compaction never folds the newest this many episodes (None: no count window).
        older_than: compaction never folds episodes younger than this many seconds (None: no age window).
        keep_unreported: compaction folds an unreported episode once this many newer episodes
            were recalled (None: never).
        max_prompt_tokens: budget of one mining prompt (estimated as characters / 4).
        max_tokens: the model's output limit per call.
        min_support: distinct traces a mined lesson must cite, of as many sessions (>= 2).
        model_timeout: seconds one model call may take before it counts as failed (None: no limit).
        max_model_calls: the most model calls mining may make; traces that need more are not
            mined at all, and `report.mining_error` says so (None: no limit).
        include_applied: list too the proposals the store holds as applied (a contradiction acknowledged
            on an earlier night is found again, by the same id, for as long as both lessons stand); by
            default they are left out and `report.summary["already_applied"]` lists their ids.
        include_rejected: list too the proposals a person rejected, while what they rest on is unchanged
            (`lamar.sleep.rejected`); by default they are left out and `report.summary["rejected"]` lists their ids.

    Raises:
        InvalidArgument: an option of the wrong type or out of range.
    """
    check_sleep_options(similarity=similarity, keep_last=keep_last, older_than=older_than,
                        keep_unreported=keep_unreported, max_prompt_tokens=max_prompt_tokens,
                        max_tokens=max_tokens, min_support=min_support, model_timeout=model_timeout,
                        max_model_calls=max_model_calls, model=model)
    for name, flag in (("include_applied", include_applied), ("include_rejected", include_rejected)):
        if not isinstance(flag, bool):
            raise InvalidArgument(f"{name} must be True or False; got {flag!r}")
    made_at = lam.position
    proposals = consolidate(lam, similarity=similarity)
    narrow = propose_narrowing(lam)
    if narrow:
        # A lesson harmful overall but helpful in one slice is narrowed, not retired.
        narrowed = {p.experience_ids[0] for p in narrow}
        proposals = [p for p in proposals if not (p.kind == "retire" and p.experience_ids[0] in narrowed)]
        at = sum(1 for p in proposals if p.kind == "retire")
        proposals[at:at] = narrow
    # After the rest: a lesson a narrowing or a merge would change is judged again once that is done.
    touched = frozenset(i for p in proposals for i in p.experience_ids)
    proposals += propose_retiring_dropped(lam, skip=touched)
    compact = propose_compaction(lam, keep_last=keep_last, older_than=older_than, keep_unreported=keep_unreported)
    if compact is not None:
        proposals.append(compact)
    dropped: list[Dropped] = []
    summary: dict[str, Any] = {"lessons": len(lam.experiences()), "episodes": len(lam.episodes())}
    if traces is not None or model is not None:
        from lamar.sleep.mining import mine

        mined, refused, figures = mine(lam, traces=traces, model=model, max_prompt_tokens=max_prompt_tokens,
                                       max_tokens=max_tokens, min_support=min_support, similarity=similarity,
                                       model_timeout=model_timeout, max_model_calls=max_model_calls)
        proposals += mined
        dropped += refused
        summary["mining"] = figures
    report = SleepReport(proposals=proposals, dropped=dropped, made_at=made_at, summary=summary)
    report = report if include_applied else _left_to_decide(lam, report)
    report = report if include_rejected else without_rejected(lam, report)
    keep_sleep(lam.store.location, report, lam.store)  # for `lamar stats`, however the sleep was called
    return report


def _left_to_decide(lam: SleepView, report: SleepReport) -> SleepReport:
    """The report without the proposals the store holds as applied, by the check `lamar sleep` and
    `lamar review` hide them with; their ids go in the summary (None: the store could not say)."""
    try:
        done = already_applied(report, would_skip(lam, report))
    except LamarError as exc:  # the hiding is a courtesy: it must not cost a report whose mining cost model calls
        logging.getLogger(__name__).warning("Lamar's sleep lists every proposal, applied or not: %s", exc)
        return dataclasses.replace(report, summary={**report.summary, "already_applied": None})
    left = [p for p in report.proposals if p.id not in done]
    return dataclasses.replace(report, proposals=left, summary={**report.summary, "already_applied": done})


def apply_report(lam: SleepView, report: SleepReport, *, only: Iterable[str] | None = None) -> ApplyResult:
    """Apply the chosen proposals, each re-checked against the store as it is now.

    A proposal is skipped (with the reason) when it was applied already, when a lesson it
    touches was retired, merged away or changed status since the report was made, or when
    the evidence behind a retirement or promotion no longer holds; `ApplyResult.codes` gives each
    skip's code ("applied", "refused" or "stale", as `skip_code` words them).
    """
    by_id = {p.id: p for p in report.proposals}
    if only is None:
        chosen = list(report.proposals)
    else:
        wanted = [only] if isinstance(only, str) else list(only)
        missing = [pid for pid in wanted if pid not in by_id]
        if missing:
            ids = sorted(by_id)
            shown = ", ".join(map(echoed, ids[:5])) + (f", ... ({len(ids)} in all)" if len(ids) > 5 else "")
            raise UnknownProposal(f"the report has no proposal {echoed(missing[0])}; its ids are [{shown}]")
        chosen = [by_id[pid] for pid in dict.fromkeys(wanted)]
    applied: list[str] = []
    skipped: list[tuple[str, str]] = []
    codes: dict[str, SkipCode] = {}

    def skip(pid: str, code: SkipCode, why: str) -> None:
        skipped.append((pid, why))
        codes[pid] = code

    lam.sync()
    removed = _removed_since(lam.store.read(report.made_at), report.made_at)
    held = _Held(lam)
    current, wrote = "", False
    try:
        for proposal in chosen:
            current, wrote = proposal.id, False
            stop_point()  # cancelled by an async caller: the proposals before are written whole, the rest wait
            lam.sync()
            code, why, events = _checked(lam, proposal, removed)
            if code is None and (why := _said_since(proposal, held)):
                code = "applied"  # in effect: the store says it, and nothing is left to decide
            if code is not None:
                skip(proposal.id, code, why)
                continue
            events.append(Event("applied", {"proposal": proposal.id, "kind": proposal.kind},
                                key=f"proposal:{proposal.id}"))
            try:
                stored = lam.append(events)
                wrote = True
            except EventConflict:
                skip(proposal.id, "applied", "already applied (by another writer)")
                continue
            if proposal.kind == "merge" and not _merged_now(lam, proposal):
                skip(proposal.id, "refused", "refused: another writer merged one of its lessons just now")
                continue
            removed.update(_removed_since(stored))
            applied.append(proposal.id)
        current = ""
        said_yes(lam, [by_id[pid] for pid in applied])  # a no it was applied over is over (`lamar rejections`)
        lam.sync()
    # The store's own message (a full disk: "its previous contents are intact") speaks of one write;
    # the person needs to know which proposals went in before it.
    except LamarError as exc:
        exc.args = (f"{exc}; {_stopped_at(current, wrote, applied)}", *exc.args[1:])
        raise
    except (KeyboardInterrupt, Cancelled) as exc:
        said = exc if isinstance(exc, Cancelled) else "interrupted"
        raise type(exc)(f"{said}; {_stopped_at(current, wrote, applied)}") from exc
    return ApplyResult(applied=applied, skipped=skipped, codes=codes)


def _stopped_at(pid: str, wrote: bool, applied: Sequence[str]) -> str:
    """What an apply that failed at proposal `pid` ("": past the last one; `wrote`: once it was
    stored) had carried out, and how to finish it."""
    ids = f" ({', '.join(map(printed_id, applied))})" if applied else ""
    if not pid:
        return f"apply failed after carrying out every proposal it could: {len(applied)} applied{ids}"
    at = f"after writing proposal {printed_id(pid)}" if wrote else f"at proposal {printed_id(pid)}"
    return (f"apply stopped {at}, {len(applied) or 'none'} applied before it{ids}: apply the report again "
            "to carry out the rest (what is in the store already is skipped as applied)")


def would_skip(lam: SleepView, report: SleepReport) -> dict[str, str]:
    """Why `apply_report` would skip each proposal it would skip now, by id; writes nothing.

    Each proposal is checked alone against the store as it is, as apply checks it.
    """
    lam.sync()
    removed = _removed_since(lam.store.read(report.made_at), report.made_at)
    held = _Held(lam)
    return {p.id: why for p in report.proposals if (why := _checked(lam, p, removed)[1] or _said_since(p, held))}


class _Held:
    """The lessons held, by what they say (`_says`): read once per apply, and only for a candidate."""

    def __init__(self, lam: SleepView) -> None:
        self._lam = lam
        self._by: dict[tuple[object, ...], Experience] | None = None

    def saying(self, exp: Experience) -> Experience | None:
        if self._by is None:
            self._by = {}
            for held in self._lam.experiences():  # in the order they were added: the first one is named
                self._by.setdefault(_says(held), held)
        return self._by.get(_says(exp))


def _says(exp: Experience) -> tuple[object, ...]:
    """What makes two lessons the same lesson to mining (a candidate's id is made of it)."""
    return normalize(exp.precondition), normalize(exp.action), exp.scope.items_key


def _checked(lam: SleepView, proposal: Proposal,
             removed: dict[str, str]) -> tuple[SkipCode | None, str, list[Event]]:
    """Why apply skips the proposal now, as a code and in words, or (None, "") and the events
    that carry it out."""
    if lam.applied(proposal.id):
        return "applied", "already applied", []
    if within := acknowledged_with(lam, proposal):
        return "applied", within, []
    try:
        kind = kind_of(proposal)
        kind.check(proposal)  # a candidate is re-screened here, whatever the report says
        touched = kind.touches(proposal)
        missing = [i for i in touched if lam.lesson(i) is None]
        events = kind.events(proposal)
    except LamarError as exc:
        return "refused", f"refused: {exc}", []
    if missing:
        return "refused", f"refused: lesson {echoed(missing[0])} is not in this store", []
    # Sleep notes each touched lesson's status; the staleness checks below read only the lessons noted.
    unsaid = [i for i in touched if i not in proposal.expect]
    if unsaid:
        return "refused", (f"refused: the report does not say what status lesson {unsaid[0]} had when it was "
                           "proposed ('expect' was edited): run sleep again for a new report"), []
    stale = _stale(lam, proposal, removed)
    return ("stale" if stale else None), stale, events


def _said_since(proposal: Proposal, held: _Held) -> str:
    """Why a candidate `_checked` passed is not added: a lesson that says the same was added after
    the report (by hand, or by another report), which mining would have found; "" when none was."""
    if proposal.kind != "candidate":
        return ""
    exp = candidate_lesson(proposal)
    same = held.saying(exp)
    if same is None or same.id == exp.id:
        return ""
    return (f"already applied in effect: the store holds lesson {same.id} ({same.status.value}), which says the "
            f"same: {same.render()!r}")


def _merged_now(lam: SleepView, proposal: Proposal) -> bool:
    """Whether the fold took a merge just stored: it refuses one whose lessons another writer's
    merge, checked at the same time, took first (`lamar.policy.fold.merge`)."""
    lam.sync()
    into = proposal.payload["into"]
    return not any(state is not None and merged_elsewhere(state, into)
                   for state in map(lam.lesson, (into, *proposal.payload["from"])))


def _removed_since(events: Iterable[Event], made_at: int = 0) -> dict[str, str]:
    """Lessons retired or merged away by these events (even if revived later), and how; a
    snapshot among them stands for the events it replaced, those after `made_at` counted."""
    out: dict[str, str] = {}
    for event in events:
        if event.kind == "snapshot":
            for exp_id, (seq, how) in event.data.get("removed", {}).items():
                if seq > made_at:
                    out[exp_id] = how
        elif event.kind == "status" and event.data.get("status") == Status.RETIRED.value:
            out[event.data["id"]] = "retired"
        elif event.kind == "merge":
            for exp_id in event.data.get("from", []):
                out[exp_id] = f"merged into {event.data.get('into')}"
    return out


# Kinds judged on the lessons' evidence alone: an edit that kept the evidence (a wording fix)
# leaves their judgement standing, and apply re-checks that evidence anyway.
_ON_EVIDENCE = frozenset({"retire", "promote", "narrow", RETIRE_DROPPED})


def _edited_since(proposal: Proposal, exp_id: str, version: int, restarts: int) -> str:
    """Why the proposal no longer fits the lesson's current version, or "" when it does (or when
    the report, made before proposals noted versions, cannot tell)."""
    seen = proposal.evidence.get(exp_id, {})
    was = seen.get("version")
    if not isinstance(was, int) or isinstance(was, bool) or version == was:
        return ""
    if proposal.kind in _ON_EVIDENCE and seen.get("restarts") == restarts:
        return ""  # every edit since kept the evidence the proposal was judged on
    return (f"lesson {exp_id} was edited after the report was made (version {was} then, {version} now): "
            "run sleep again to judge the new version")


def _stale(lam: SleepView, proposal: Proposal, removed: dict[str, str]) -> str:
    """Why the proposal no longer fits the store, or "" when it still does."""
    for exp_id, status in proposal.expect.items():
        state = lam.lesson(exp_id)
        if state is None:
            return f"lesson {echoed(exp_id)} is not in this store"
        if exp_id in removed:
            return f"lesson {exp_id} was {removed[exp_id]} after the report was made"
        if state.experience.status.value != status:
            return f"lesson {exp_id} is {state.experience.status.value} now (was {printed_id(status)} when proposed)"
        edited = _edited_since(proposal, exp_id, state.experience.version, state.restarts)
        if edited:
            return edited
    if proposal.kind in ("retire", "promote"):
        # Re-check, not refuse: the lesson is unchanged but its evidence may have moved on.
        want = Verdict.HARMS if proposal.kind == "retire" else Verdict.HELPS
        for exp_id in proposal.experience_ids:
            state = lam.lesson(exp_id)
            assert state is not None  # checked above, under the same lock
            verdict = state.judge(lam.policy, lam.active_count())[0]
            if verdict is not want:
                return f"lesson {exp_id} is no longer proven to {'harm' if want is Verdict.HARMS else 'help'} " \
                       f"(verdict now {verdict.value})"
    if proposal.kind == "narrow":
        return still_splits(lam, proposal)
    if proposal.kind == RETIRE_DROPPED:
        return still_dropped(lam, proposal)
    if proposal.kind == "compact":
        return still_folds(lam, proposal)
    if proposal.kind == "candidate":
        new_id = proposal.experience_ids[0] if proposal.experience_ids else ""
        if lam.lesson(new_id) is not None:
            return f"lesson {new_id} is already in the store"
    return ""


__all__ = [
    "SKIP_CODES", "ApplyResult", "Dropped", "Proposal", "SkipCode", "SleepReport", "Trace", "TraceWriter",
    "already_applied", "apply_report", "load_traces", "normalize", "run_sleep", "skip_code", "would_skip",
]
