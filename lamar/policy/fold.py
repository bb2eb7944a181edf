"""How each event changes the lessons it names, written once for both holders of the folded state
(the engine's in-process cache and PostgreSQL's lesson rows in the fold mode). The callers keep
their own indexes; nothing here knows where a lesson is stored."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lamar.experience import Experience, Scope, Status
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState

# What an erased lesson's text reads in every event and copy that held it (`Lamar.erase`).
ERASED = "[erased]"
# The provenance the folds themselves write (ids and scopes): kept by an erasure, which drops the
# rest (the source a person or a trace gave, which may quote the text).
FOLD_PROVENANCE = ("merged_into", "merged_from", "narrowed_from", "version")
# The sources Lamar itself names a lesson by (a word of its own, never text it was given): kept too,
# so that an erased lesson still says how it came, not the "manual" of a lesson without one.
_SOURCES = frozenset({"manual", "agent", "mined", "rules", "langchain-retriever"})

PRIOR_SIGMA = 0.75  # reward spread assumed before outcomes arrive (a coin between +-0.75)
PRIOR_WEIGHT = 10.0


def spread(n: int, m2: float) -> float:
    """Spread of `n` rewards whose squared deviations sum to `m2`, shrunk towards a prior
    while outcomes are few (the sigma every fold, every draw and every coin uses)."""
    return math.sqrt((m2 + PRIOR_WEIGHT * PRIOR_SIGMA**2) / (n + PRIOR_WEIGHT))


def welford(n: int, mean: float, m2: float, reward: float) -> tuple[int, float, float]:
    """(n, mean, m2) after one more reward (Welford's update)."""
    n += 1
    delta = reward - mean
    mean += delta / n
    return n, mean, m2 + delta * (reward - mean)


def fold_outcome(lesson: Callable[[str], LessonState | None], eligible: Iterable[str], injected: Iterable[str],
                 p: Mapping[str, float], context: Mapping[str, str], reward: float, sigma: float, policy: Policy,
                 n_active: int) -> list[LessonState]:
    """Fold one reward into every non-retired lesson the episode found eligible; returns them.

    Args:
        lesson: finds a lesson's state by id (None: unknown, e.g. not yet added here).
        eligible, injected, p, context: the episode's, as its event logged them.
    """
    chosen = set(injected)
    touched = []
    for exp_id in eligible:
        state = lesson(exp_id)
        if state is not None and state.experience.status is not Status.RETIRED:
            state.observe(reward, exp_id in chosen, p.get(exp_id, 0.0), sigma, policy, n_active, context)
            touched.append(state)
    return touched


def set_status(state: LessonState, status: Status) -> None:
    state.experience = dataclasses.replace(state.experience, status=status)


def narrow(state: LessonState, key: str, value: str, continued: Mapping[str, Any] | None = None) -> bool:
    """A scope event: the lesson now applies only where `key` is `value`, its evidence that of
    the event's `continued` slice when it keeps one (`lamar.state.erasure`). False (nothing
    changed) when the scope already fixes `key` (the event folded twice)."""
    exp = state.experience
    if key in exp.scope:
        return False
    old = exp.scope
    # An erased lesson's scope holds no value; the slice its evidence continues is still `value`'s.
    shown = ERASED if exp.provenance.get("erased") else value
    state.experience = dataclasses.replace(exp, scope=Scope({**dict(old), key: shown}), provenance={
        **exp.provenance, "narrowed_from": dict(old)})
    state.narrow(key, value, continued)
    return True


def edit(state: LessonState, data: Mapping[str, Any]) -> Scope | None:
    """An edit event: the lesson's text and scope become the event's, as its next version.

    Its evidence restarts (`LessonState.renew`) unless the event says "keep" (a wording fix the
    engine allowed: the action and the scope unchanged). Returns the scope before, or None
    (nothing changed) when the event is not the lesson's next version (the event folded twice).
    """
    exp = state.experience
    version = int(data["version"])
    if version != exp.version + 1:
        return None
    if exp.provenance.get("erased"):  # an edit stored after the erase, made from the text before it
        data = erased_text(data)
    # The event holds the whole scope as its editor read it; only an edit of the scope sets it, so
    # that a narrowing (a scope event) stored while the editor changed a text is not undone.
    scope = Scope(data["scope"]) if "scope" in data.get("changed", ("scope",)) else exp.scope
    state.experience = dataclasses.replace(
        exp, precondition=str(data["precondition"]), action=str(data["action"]),
        rationale=str(data["rationale"]), scope=scope, provenance={**exp.provenance, "version": version})
    if data.get("evidence", "restart") != "keep":
        state.renew()
    return exp.scope


def merge(into: LessonState | None, others: Iterable[LessonState | None], names: list[str]) -> list[LessonState]:
    """A merge event: `into` absorbs each other lesson's evidence, and they retire.

    Returns the lessons retired by this call (a merge folded twice absorbs nothing twice).
    `names` are the ids the event lists, recorded in `into`'s provenance. A lesson merged away
    already (and not revived since) neither absorbs nor is absorbed: two merges applied at once
    by two writers, each checked before the other was stored, then fold as if the later one had
    been refused, and no evidence is counted twice or moved into a retired lesson.
    """
    if into is not None and _merged_away(into):
        return []
    others = list(others)
    elsewhere = {id(o) for o in others if o is not None and merged_elsewhere(o, into.experience.id if into else None)}
    retired = []
    for other in others:
        if into is None or other is None or other is into or _merged_away(other):
            continue
        into.absorb(other)
        other.experience = dataclasses.replace(other.experience, provenance={
            **other.experience.provenance, "merged_into": into.experience.id})
        set_status(other, Status.RETIRED)
        retired.append(other)
    if into is not None:
        kept = [name for name, other in zip(names, others, strict=False) if id(other) not in elsewhere]
        merged = list(into.experience.provenance.get("merged_from", [])) + kept
        into.experience = dataclasses.replace(into.experience, provenance={
            **into.experience.provenance, "merged_from": merged})
    return retired


def erased_text(data: Mapping[str, Any]) -> dict[str, Any]:
    """A lesson's texts in `data` (an experience's or an edit event's) read ERASED, and so does
    each value of its scope (a value may be a person's name; the keys stay); an empty rationale
    stays empty, so that what was never written is not claimed erased."""
    rationale = ERASED if data.get("rationale") else ""
    out = {**data, "precondition": ERASED, "action": ERASED, "rationale": rationale}
    if isinstance(data.get("scope"), Mapping):
        out["scope"] = erased_scope(data["scope"])
    return out


def erased_scope(scope: Mapping[str, Any]) -> dict[str, Any]:
    """A scope with every value ERASED and its keys kept: an erased lesson retires for good, so no
    recall matches it again, and nothing that reads its evidence reads its scope."""
    return {key: ERASED for key in scope}


def erased_lesson(data: Mapping[str, Any], by: str, at: float) -> dict[str, Any]:
    """An experience's dict (`Experience.to_dict`) with its text erased: precondition, action and
    a non-empty rationale and each value of its scope (and of the scope it was narrowed from) read
    ERASED, the provenance keeps only what the folds wrote, the source when it is one Lamar names,
    and who erased it and when. Id, scope keys, status and creation time stay. The same for the
    log's events and for a folded lesson, so that folding the scrubbed log gives the lesson the
    fold of the erase event gives it."""
    provenance = data.get("provenance") or {}
    out = erased_text(data)
    source = provenance.get("source")
    out["provenance"] = {**({"source": source} if isinstance(source, str) and source in _SOURCES else {}),
                         **{k: provenance[k] for k in FOLD_PROVENANCE if k in provenance},
                         "erased": {"by": by, "time": at}}
    if isinstance(provenance.get("narrowed_from"), Mapping):
        out["provenance"]["narrowed_from"] = erased_scope(provenance["narrowed_from"])
    return out


def erase(state: LessonState, by: str, at: float) -> None:
    """An erase event: the lesson's text is erased (`erased_lesson`) and it retires. Its evidence
    stays as it is: no count, coin or reward it was folded from changes."""
    state.experience = Experience.from_dict(erased_lesson(state.experience.to_dict(), by, at))
    # A fold that read the narrowing before the scrub noted its value: a checkpoint or saved state
    # taken from this fold would keep it, where the fold of the scrubbed log notes ERASED.
    state.history.trail = [(t, erased_note(note)) for t, note in state.history.trail]
    set_status(state, Status.RETIRED)


def erased_note(note: str) -> str:
    """An audit note of an erased lesson with the value a narrowing named erased."""
    head, sep, _ = note.partition("=")
    return f"{head}={ERASED}" if sep and head.startswith("scope narrowed to ") else note


def _merged_away(state: LessonState) -> bool:
    """Whether the lesson was merged into another and is still retired."""
    exp = state.experience
    return exp.status is Status.RETIRED and bool(exp.provenance.get("merged_into"))


def merged_elsewhere(state: LessonState, into_id: str | None) -> bool:
    """Whether the lesson was merged into a lesson other than `into_id` and is still retired: a
    merge of it, or into it, is then refused."""
    return _merged_away(state) and state.experience.provenance.get("merged_into") != into_id


__all__ = ["ERASED", "FOLD_PROVENANCE", "PRIOR_SIGMA", "PRIOR_WEIGHT", "edit", "erase", "erased_lesson",
           "erased_note", "erased_scope", "erased_text", "fold_outcome", "merge", "merged_elsewhere", "narrow",
           "set_status", "spread", "welford"]
