"""Mining: a model reads batches of scrubbed traces and proposes lessons; Lamar checks each one."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lamar._errors import InvalidArgument, ModelError
from lamar.cancel import stop_point
from lamar.experience import Experience, Scope, Status
from lamar.models.protocol import DEFAULT_TIMEOUT, call_model
from lamar.safety.boundary import kinds_by_lines, prompt_form
from lamar.sleep.mining_lost import lost_message, unreadable_lesson
from lamar.sleep.mining_pool import Pool
from lamar.sleep.mining_prompt import ParsedLesson, TraceBatch, batch_traces, parse_reply
from lamar.sleep.options import check_model
from lamar.sleep.proposals import Dropped, Proposal
from lamar.sleep.sessions import few_sessions, session_outcomes, sessions_of, support_words
from lamar.sleep.similarity import NEAR_DUPLICATE, LessonWords, normalize
from lamar.sleep.traces import Trace, TraceSource, load_traces
from lamar.storable import storable_copy, storable_problem, whole_number

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView

MAX_PROMPT_TOKENS = 8_000
"""Default budget of one mining prompt, in estimated tokens (characters / 4)."""
FAILED = "sleep: mining failed, no lesson was mined: %s"
"""The warning of a failed mining, for a caller that reads only the proposals (`lamar sleep` says it itself)."""
CITED_TRACES = 100
"""Most trace ids a mined lesson's provenance cites: past them, or past half the size a provenance may have, it
cites the first (by id) and counts them all under "trace_count", so it stays within what apply stores."""
LOST = "sleep: mining lost part of the model's output: %s"
"""The warning of a mining that could read only part of the model's output (`SleepReport.mining_lost`)."""


def mine(lam: SleepView, *, traces: TraceSource | None, model: Any, max_prompt_tokens: int = MAX_PROMPT_TOKENS,
         max_tokens: int = 2048, min_support: int = 2, similarity: float = NEAR_DUPLICATE,
         model_timeout: float | None = DEFAULT_TIMEOUT,
         max_model_calls: int | None = None) -> tuple[list[Proposal], list[Dropped], dict[str, Any]]:
    """Ask `model` for lessons in `traces`; return candidate proposals, what was dropped, and figures.

    A mined lesson is only a candidate (a cold arm the bandit tries), never a belief, and it
    must survive strict checks first: well-formed output, trace ids the model was shown, at
    least two distinct supporting traces of as many sessions (episodes), a scope that fits those traces, no secrets, no
    injected instructions, and no duplicate of a lesson already stored.

    A model call that fails (a timeout, an HTTP error, an answer that is not text) ends mining:
    it proposes nothing, and the figures hold the failure under "error", so the proposals that
    need no model still reach the reviewer. Output read only in part (a reply without a lesson list
    beside readable ones, lessons too malformed to read) is no failure: what was read is proposed,
    and the figures say what was lost and how much under "lost" (`SleepReport.mining_lost`).

    Args:
        lam: the engine (read only, to skip lessons it already holds).
        traces: a JSON Lines path or an iterable of traces (see `load_traces`).
        model: anything with `complete(prompt, *, max_tokens) -> str`.
        max_prompt_tokens: budget of one prompt; larger trace sets are split into batches.
        max_tokens: the model's output limit per call.
        min_support: distinct traces a lesson must cite, of as many sessions (at least 2).
        similarity: word-overlap threshold above which a lesson duplicates a stored one.
        model_timeout: seconds one model call may take (None: no limit).
        max_model_calls: the most calls mining may make; more batches than that make none (None: no limit).

    Raises:
        ValueError: traces without a model, or a bad option.
        InvalidTrace: a trace breaks the trace format.
    """
    if traces is not None and model is None:
        raise InvalidArgument("mining traces needs a model: pass model=... (see lamar.models), or leave traces out")
    check_model(model)
    if not whole_number(min_support, low=2):
        raise InvalidArgument("min_support must be a whole number >= 2 (no single trace mints a lesson); "
                              f"got {min_support!r}")
    loaded = [_with_outcome(lam, trace) for trace in (load_traces(traces) if traces is not None else [])]
    summary: dict[str, Any] = {"traces": len(loaded), "batches": 0, "model_calls": 0, "prompt_tokens": 0,
                               "secrets_scrubbed": 0, "lessons_proposed": 0, "candidates": 0}
    if not loaded:
        return [], [], summary

    from lamar.safety import scrub  # written alongside; imported when first needed
    from lamar.safety.secrets import REACH

    batches, oversized, scrubbed = batch_traces(loaded, scrub, max_prompt_tokens, REACH)
    summary["secrets_scrubbed"] = scrubbed
    # The report is shown and saved, and a candidate's provenance is stored: each names a trace by
    # its id scrubbed, so a secret in an id stays out, and an ordinary id still finds the trace.
    named = {trace_id: scrub(trace_id)[0] for trace_id in oversized}
    dropped = [Dropped({"trace": named[trace_id]}, f"trace does not fit max_prompt_tokens={max_prompt_tokens} even "
                                            "with its long fields clipped; raise max_prompt_tokens")
               for trace_id in oversized]
    if max_model_calls is not None and len(batches) > max_model_calls:
        # Refused before the first call: a cap met part-way would have paid for lessons judged
        # on part of their support, which mining never proposes.
        tokens = sum(batch.tokens for batch in batches)
        summary["error"] = (f"mining {len(loaded)} traces takes {len(batches)} model calls (about {tokens} prompt "
                            f"tokens), more than max_model_calls={max_model_calls}; no call was made: raise "
                            "max_model_calls (lamar sleep --max-model-calls), or mine fewer traces at a time")
        logging.getLogger(__name__).warning(FAILED, summary["error"])
        return [], dropped, summary
    pool = Pool(similarity)
    unreadable: list[str] = []  # why each reply held no lesson list at all
    unmined: list[str] = []  # the traces of those replies' batches
    malformed: list[str] = []  # why each lesson a read reply held could not be read
    misread: list[str] = []  # the traces of the replies that held those lessons
    for batch in batches:
        stop_point()  # an async caller that cancelled pays for no call more (lamar.cancel)
        summary["batches"] += 1
        summary["model_calls"] += 1
        summary["prompt_tokens"] += batch.tokens
        try:
            with lam.released():  # other threads recall and report while the model answers
                reply = call_model(model, batch.prompt, max_tokens=max_tokens, timeout=model_timeout)
        except ModelError as exc:
            # Lessons pooled from the batches before would be judged on part of their support.
            summary["error"] = str(exc)
            # A caller that reads only the proposals would take "nothing mined" for "nothing to mine".
            logging.getLogger(__name__).warning(FAILED, exc)
            return [], dropped[:len(oversized)], summary
        lessons, refused, seen = parse_reply(reply, batch)
        whole = [d.reason for d in refused if isinstance(d.item, dict) and "batch" in d.item]
        unreadable += whole
        unmined += list(batch.trace_ids) if whole else []
        unread_lessons = [d.reason for d in refused if unreadable_lesson(d.reason)]
        malformed += unread_lessons
        misread += list(batch.trace_ids) if unread_lessons else []
        # Text `add` would refuse is refused here too, before the prompt form could mend it.
        unstorable = [(lesson, storable_problem([lesson.precondition, lesson.action, lesson.rationale,
                                                 dict(lesson.scope)]) or _lined_secret(lesson)) for lesson in lessons]
        refused += [Dropped(lesson.as_dict(), f"its text {problem}") for lesson, problem in unstorable if problem]
        lessons = [_in_prompt_form(lesson) for lesson, problem in unstorable if not problem]
        dropped += [_scrubbed_drop(d, scrub) for d in refused]
        summary["lessons_proposed"] += seen
        for lesson in lessons:
            pool.add(lesson)  # a near-copy seen before, in this batch or another, adds its traces to it

    if batches and len(unreadable) == len(batches):
        # No reply could be read: that is the model failing, not traces with nothing to teach, and
        # a caller that moves its traces away on success would never mine them.
        summary["error"] = (f"no reply of the model held a lesson list ({len(batches)} of {len(batches)} "
                            f"unreadable; the last: {unreadable[-1]}): check the model, then run sleep again")
        logging.getLogger(__name__).warning(FAILED, summary["error"])
        return [], dropped, summary
    lost = lost_message(len(batches), unreadable, [scrub(i)[0] for i in unmined], summary["lessons_proposed"],
                        [scrub(reason)[0] for reason in malformed], [scrub(i)[0] for i in misread])
    if lost:  # as a failure is, for a caller that reads only the proposals: a part of the traces taught nothing
        summary |= {"lost": lost, "unreadable_replies": len(unreadable), "unreadable_lessons": len(malformed)}
        logging.getLogger(__name__).warning(LOST, lost)
    by_id = {t.id: t for t in loaded}
    named |= {i: scrub(i)[0] for item in pool.items for i in item.trace_ids if i not in named}
    proposals: list[Proposal] = []
    # Each lesson's words are read once: a reply can hold thousands of lessons, checked pairwise
    # while sleep holds the engine. The pool compared the mined ones with one another already.
    held: dict[tuple[tuple[str, str], ...], list[tuple[Experience, LessonWords]]] = {}
    for exp in lam.experiences():
        held.setdefault(exp.scope.items_key, []).append((exp, LessonWords.of(exp.precondition, exp.action)))
    name = _model_name(model)
    for item in pool.items:
        lesson, ids, words = item.lesson, sorted(item.trace_ids), item.words
        reason = item.refused or _refusal(lesson, words, [by_id[i] for i in ids], held, min_support, similarity,
                                          named)
        if reason:
            drop = Dropped({**lesson.as_dict(), "trace_ids": [named[i] for i in ids]}, reason)
            dropped.append(_scrubbed_drop(drop, scrub))
            continue
        proposals.append(_candidate(lesson, [by_id[i] for i in ids], name, named))
    summary["candidates"] = len(proposals)
    return proposals, dropped, summary


def _refusal(lesson: ParsedLesson, words: LessonWords, support: Sequence[Trace],
             held: Mapping[tuple[tuple[str, str], ...], Sequence[tuple[Experience, LessonWords]]],
             min_support: int, similarity: float, named: Mapping[str, str]) -> str:
    """Why the lesson, its text accepted (`text_refusal`), cannot become a candidate, or "" when it can; `named`
    maps a trace's id to its id as shown."""
    if len(support) < min_support:
        return (f"supported by {len(support)} distinct trace(s) ({', '.join(named[t.id] for t in support)}); "
                f"a lesson needs at least {min_support}")
    too_few = few_sessions(support, min_support, named)
    if too_few:
        return too_few
    scope_problem = _scope_problem(lesson.scope, support, named)
    if scope_problem:
        return scope_problem
    for exp, exp_words in held.get(tuple(sorted(lesson.scope.items())), ()):
        score = exp_words.similarity(words)
        if score >= similarity:
            return f"duplicates lesson {exp.id} ({exp.status.value}): {exp.render()!r} (word overlap {score:.2f})"
    return ""


def _scope_problem(scope: Mapping[str, str], support: Sequence[Trace], named: Mapping[str, str]) -> str:
    """A lesson's scope must hold in every trace it cites, and not be wider than they are.

    An empty scope applies everywhere; when all the supporting traces share some context
    (the same project, say) that would carry a lesson to places it was never seen.
    """
    for key, value in scope.items():
        for trace in support:
            if trace.context.get(key) != value:
                seen = trace.context.get(key)
                return (f"scope {key}={value!r} does not fit trace {named[trace.id]} "
                        f"({key}={seen!r} there)" if seen is not None else
                        f"scope {key}={value!r} does not fit trace {named[trace.id]} (it has no {key!r})")
    if not scope:
        shared = dict(set.intersection(*(set(t.context.items()) for t in support)))
        if shared:
            return (f"scope is empty (everywhere) but every supporting trace has {shared}; "
                    "scope the lesson to where it was seen")
    return ""


def _candidate(lesson: ParsedLesson, support: Sequence[Trace], model_name: str, named: Mapping[str, str]) -> Proposal:
    from lamar.safety import scrub
    from lamar.sleep.warned import lesson_warning

    ids = [named[t.id] for t in support]
    provenance: dict[str, Any] = {"source": "mined", "traces": ids, "model": model_name}
    cited = _cited(ids, provenance)
    scope = Scope(lesson.scope)
    # The id follows from the lesson's words, so the same lesson mined twice is one arm.
    digest = hashlib.sha256(json.dumps([normalize(lesson.precondition), normalize(lesson.action),
                                        list(scope.items_key)]).encode()).hexdigest()[:16]
    exp = Experience(
        precondition=lesson.precondition, action=lesson.action, rationale=lesson.rationale, scope=scope,
        status=Status.CANDIDATE, id=f"exp_{digest}",
        provenance={**provenance, "traces": cited, **({} if len(cited) == len(ids) else {"trace_count": len(ids)})},
    )
    # Counted by session: a run stopped for a review and its resume are one correction, not two.
    outcomes, with_errors = session_outcomes(support)
    evidence = {exp.id: {"traces": len(ids), "sessions": len(sessions_of(support)), "outcomes": outcomes,
                         "with_tool_errors": with_errors}}
    count, listed = support_words(support, named, scrub, cited=len(cited))
    return Proposal(
        id=Proposal.make_id("candidate", [exp.id]), kind="candidate", experience_ids=(exp.id,),
        reason=(f"mined from {count}: {exp.render()} "
                f"Enters as a candidate that exploration tries; outcomes decide. {listed}"),
        evidence=evidence, payload={"experience": exp.to_dict()},
        warning=lesson_warning(exp.precondition, exp.action, exp.rationale))


def _cited(ids: Sequence[str], provenance: Mapping[str, Any]) -> list[str]:
    """The first of `ids` a provenance like `provenance` (its other keys, and a count beside) has room for."""
    from lamar.safety.boundary import MAX_PROVENANCE_CHARS

    rest = {**provenance, "traces": [], "trace_count": len(ids)}
    room = min(MAX_PROVENANCE_CHARS // 2, MAX_PROVENANCE_CHARS - len(json.dumps(rest, ensure_ascii=False)))
    cited: list[str] = []
    for trace_id in ids[:CITED_TRACES]:
        room -= len(json.dumps(trace_id, ensure_ascii=False)) + 2  # quoted, and the ", " before the next
        if room < 0:
            break
        cited.append(trace_id)
    return cited


def _scrubbed_drop(dropped: Dropped, scrub: Any) -> Dropped:
    """The report is shown and stored: keep secrets the model echoed out of it, and those a reason
    quotes (a context value of a trace, an id the model made up)."""
    return Dropped(storable_copy(dropped.item, lambda text: scrub(text)[0]), scrub(dropped.reason)[0])


def _lined_secret(lesson: ParsedLesson) -> str:
    # Read before the prompt form joins the lines: a .pgpass line or a table's cell is known by its own line.
    kinds = kinds_by_lines([lesson.precondition, lesson.action, lesson.rationale])
    return f"contains what looks like a secret ({', '.join(sorted(kinds))})" if kinds else ""


def _in_prompt_form(lesson: ParsedLesson) -> ParsedLesson:
    """Screened and stored as the prompt will show it (see lamar.safety.boundary)."""
    return dataclasses.replace(lesson, precondition=prompt_form(lesson.precondition),
                               action=prompt_form(lesson.action), rationale=prompt_form(lesson.rationale))


def _model_name(model: Any) -> str:
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else type(model).__name__


__all__ = ["CITED_TRACES", "FAILED", "MAX_PROMPT_TOKENS", "TraceBatch", "mine"]


def _with_outcome(lam: SleepView, trace: Trace) -> Trace:
    """A trace that names its episode carries the outcome the store holds for it: a trace written
    before the outcome was final (accepted, then shipped by a later commit) is brought up to date.
    The trace's own outcome stands where the store has none."""
    if not trace.episode_id:
        return trace
    episode = lam.episodes().get(trace.episode_id)
    if episode is None or episode.signal is None or episode.signal == trace.outcome:
        return trace
    return dataclasses.replace(trace, outcome=episode.signal)

