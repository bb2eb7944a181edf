"""`whatif(lam, ...)`: the entry point behind `Lamar.whatif`, the CLI, the MCP tool and the UI."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from lamar._errors import InvalidArgument, InvalidContext, LamarError, UnknownExperience, advised, echoed
from lamar.arguments import unknown
from lamar.experience import check_context
from lamar.listing import named
from lamar.storable import finite_number
from lamar.whatif.alternatives import STANDARD, Alternative, Beliefs, Without, form, name_of, parse
from lamar.whatif.log import ADVICE, Log, check_log, lessons_in, read_log
from lamar.whatif.report import WhatIfReport, evaluate
from lamar.whatif.slate import Slate

if TYPE_CHECKING:
    from lamar.engine import Lamar
    from lamar.store.base import Store

MIN_EPISODES = 30  # fewer reported episodes than this give intervals no one should read


def beliefs_of(lam: Lamar, k: int | None = None) -> Beliefs:
    """Today's lift and verdict of every lesson that is not retired, through the public API, with
    `k` slots (default: the engine's)."""
    from lamar.experience import Status
    from lamar.policy import Verdict

    lift: dict[str, float] = {}
    proven: set[str] = set()
    for experience in lam.experiences():
        if experience.status is Status.RETIRED:
            continue
        evidence = lam.evidence(experience.id)
        lift[experience.id] = evidence.lift
        if evidence.verdict is Verdict.HELPS:
            proven.add(experience.id)
    from lamar.policy.choose import DECIDED

    policy = lam.policy  # a decided lesson's coin is a fraction of the holdout (lamar.policy.choose.coin)
    return Beliefs(lift, frozenset(proven), lam.k if k is None else k, policy.holdout, policy.holdout * DECIDED)


def spelt_out(lam: Lamar, policies: Iterable[str]) -> list[str]:
    """The policy names with the id of each `without:ID` spelt out where it is a prefix only one
    lesson's id starts with, as the command line, the MCP tool and the UI take an id; any other
    name, and an id no lesson starts with (which `whatif` refuses), unchanged.

    Raises:
        InvalidArgument: a prefix that several lesson ids start with.
    """
    ids: list[str] | None = None
    out = []
    for spec in policies:
        head, _, arg = spec.strip().partition(":")
        if head.lower() == "without" and arg:
            ids = [experience.id for experience in lam.experiences()] if ids is None else ids
            try:
                found = named(ids, arg)
            except InvalidArgument as exc:
                raise InvalidArgument(f"policy {echoed(spec)}: {exc}") from None
            spec = spec if found is None or found == arg else f"without:{found}"
        out.append(spec)
    return out


def _distinct(specs: list[str | Alternative]) -> list[str | Alternative]:
    """The policies asked for, each checked for form (a misspelt name is the first thing to hear
    about, whatever the log holds) and each named once: a repeat of a name is dropped. A name and
    an Alternative under one name both stay until the name is parsed (`_one_row_each`).

    Raises:
        InvalidArgument: no policy, a malformed one, or two different alternatives under one name.
    """
    if not specs:
        raise InvalidArgument("policy is an empty list: name at least one (such as 'none' or 'k:1'), "
                              "or leave it out for the usual set")
    named: dict[str, str | Alternative] = {}
    mixed: list[str | Alternative] = []
    for spec in specs:
        if isinstance(spec, str):
            name = name_of(spec)
        elif callable(getattr(spec, "changes", None)) and isinstance(getattr(spec, "name", None), str):
            name = spec.name
        else:
            raise InvalidArgument(f"a policy is a name (such as 'none' or 'k:1') or an Alternative with a name "
                                  f"and changes(slate); got {type(spec).__name__}")
        first = named.setdefault(name, spec)
        if first is spec or isinstance(first, str) and isinstance(spec, str):
            continue
        if isinstance(first, str) or isinstance(spec, str):
            mixed.append(spec)  # `proven`, `today` and `k:K` need the log's beliefs to be compared
        elif first != spec:
            raise _two_named(name)
    return [*named.values(), *mixed]


def _one_row_each(alternatives: list[Alternative]) -> list[Alternative]:
    """One alternative per name: an equal repeat (`Holdout(0.3)` and "holdout:0.3") is dropped.

    Raises:
        InvalidArgument: two different alternatives under one name.
    """
    named: dict[str, Alternative] = {}
    for alternative in alternatives:
        first = named.setdefault(alternative.name, alternative)
        if first is not alternative and first != alternative:
            raise _two_named(alternative.name)
    return list(named.values())


def _two_named(name: str) -> InvalidArgument:
    return InvalidArgument(f"two different policies are named {echoed(name)}: give each Alternative a name "
                           "of its own, the report has one row per name")


def _check_lesson(spec: str, lam: Lamar, log: Log, selected: bool) -> None:
    """Refuse `without:ID` for a lesson no selected episode had eligible, saying which of the two it
    is: an id the store does not hold, or a lesson that was never eligible in these episodes.

    Raises:
        InvalidArgument: the lesson of a `without:ID` was not eligible in any episode of the log.
    """
    if not _check_held(spec, lam, log):
        return
    lesson = form(spec)[1]
    head = f"policy {echoed(spec)}: lesson {echoed(lesson)} was not eligible in "
    if selected and lesson in lessons_in(read_log(lam.store).slates):
        raise advised(InvalidArgument, head, ADVICE["eligible"])
    raise InvalidArgument(f"{head}any reported episode ({_never_eligible(lam, lesson)}), so leaving it out would "
                          "change nothing")


def _check_held(spec: str, lam: Lamar, log: Log) -> bool:
    """Refuse `without:ID` for an id the store does not hold; True when it is a lesson the log never had
    eligible (for `_check_lesson` to refuse), False when there is nothing to refuse.

    Raises:
        InvalidArgument: the store holds no lesson of that id.
    """
    head, lesson = form(spec)
    if head != "without" or lesson in lessons_in(log.slates):
        return False
    try:
        lam.get(lesson)
    except UnknownExperience as exc:
        # The engine's own refusal, which knows an episode's id passed here; each front words its advice.
        said = unknown(UnknownExperience, lesson, lam.store.location, None, exc.held_as, what="lesson")
        raise advised(InvalidArgument, f"policy {echoed(spec)}: {str(said).removesuffix(said.advice)}",
                      said.advice) from said
    return True


def unknown_lesson(exc: LamarError) -> UnknownExperience | None:
    """The engine's refusal behind `exc` when `exc` is whatif's refusal of `without:ID` for no lesson the store
    holds (each front words its own advice from it), else None."""
    cause = exc.__cause__
    return cause if isinstance(exc, InvalidArgument) and isinstance(cause, UnknownExperience) and exc.advice else None


def _never_eligible(lam: Lamar, lesson: str) -> str:
    """Why a lesson the store holds was eligible in no episode its log holds: a scope that matches the
    logged contexts is no reason, and widening since or scope then helps nothing."""
    from lamar.whatif.cache import fold_store

    experience = lam.get(lesson)
    into = experience.provenance.get("merged_into")
    merged = isinstance(into, str)
    if lam.evidence(lesson).eligible:  # counted by the engine, compacted episodes included
        since = f"; it was merged into {echoed(into)} since, which without:{into} asks about" if merged else ""
        return ("the episodes it was eligible in were compacted by sleep, and the log no longer holds their "
                f"coins{since}")
    if merged:
        return f"it was merged into {echoed(into)}: ask for without:{into} instead"
    folded = fold_store(lam.store)
    matched = [when for when, c, live, reward in zip(folded.times, folded.context, folded.alive, folded.reward,
                                                     strict=True)
               if live and reward is not None and experience.scope.matches(folded.contexts[c])]
    if not matched:
        return "no context matched its scope"
    if experience.created_at > max(matched):
        return "it was added after the last reported episode its scope matches"
    return f"it was not active in the reported episodes its scope matches: `lamar show {lesson}` has its trail"


def _check_scope(store: Store, scope: Mapping[str, str], shown: int = 10) -> None:
    """Refuse a scope pair that no logged episode's context has (a typo), naming the values its key
    has there, or the keys there are; a scope whose pairs each match some episode passes.

    Raises:
        InvalidArgument: the pair, with what the logged contexts hold instead.
    """
    from lamar.whatif.cache import fold_store

    folded = fold_store(store)
    contexts = [folded.contexts[c] for c in sorted({c for c, live in zip(folded.context, folded.alive) if live})]
    for key, value in scope.items():
        if not contexts or any(ctx.get(key) == value for ctx in contexts):
            continue
        values = sorted({ctx[key] for ctx in contexts if key in ctx})
        found, what = (values, f"the values of {echoed(key)} there") if values else (
            sorted({k for ctx in contexts for k in ctx}), f"none has the key {echoed(key)}; the keys there")
        listed = ", ".join(map(echoed, found[:shown])) + (f" and {len(found) - shown} more" if len(found) > shown
                                                             else "")
        raise InvalidArgument(f"scope {key}={echoed(value)} matches none of the logged episodes' contexts "
                              f"({what}: {listed or 'none'}): pass one of them, or leave the scope out")


def logged_k(slates: Iterable[Slate], default: int) -> int:
    """The slots the logged recalls had, as the log shows them: the most lessons any episode
    wanted (a recall's k is not logged, and may differ from the engine's default)."""
    return max((slate.slots_used for slate in slates), default=0) or default


def whatif(lam: Lamar, policy: str | Alternative | Iterable[str | Alternative] | None = None,
           since: float | None = None, scope: Mapping[str, str] | None = None, *,
           minimum: int = MIN_EPISODES) -> WhatIfReport:
    """Estimate what alternative policies would have got over the logged episodes.

    Args:
        lam: the engine whose store holds the log (and whose beliefs `proven`, `today` and
            `k:K` use). The logged k is read from the log: the most lessons an episode wanted.
        policy: one alternative or several: a name (logged, none, proven, today, without:ID,
            holdout:Q, k:K) or an `Alternative`. Default: logged, none, proven, today, holdout:0, k:1.
            Each is one row, named as it can be asked for again (` K:1 ` is the row `k:1`).
        since: only episodes logged at or after this time (seconds since the epoch).
        scope: only episodes whose context has these key=value pairs (strings).
        minimum: refuse a selection with fewer reported episodes than this.

    Raises:
        LamarError: too few reported episodes, or none with a logged coin.
        InvalidArgument: no policy, an unknown policy name or a malformed one, two different
            alternatives under one name, a scope key or value that is not a string.
    """
    if since is not None and not finite_number(since):
        # NaN or an infinity would filter out every episode and be reported as "too few episodes"
        raise InvalidArgument(f"since is a time in seconds since the epoch, got {echoed(since)}")
    if scope is not None:
        if not isinstance(scope, Mapping):
            raise InvalidArgument(f"scope is a mapping of context keys to values, got {type(scope).__name__}")
        try:
            scope = check_context(scope)  # a value no logged context can hold would select nothing
        except InvalidContext as exc:
            raise InvalidArgument(f"scope selects episodes by their context, and {exc}") from None
    # bytes are refused whole, not int by int
    specs = _distinct(list(STANDARD) if policy is None else
                      [policy] if isinstance(policy, (str, bytes)) or not isinstance(policy, Iterable)
                      else list(policy))
    log = read_log(lam.store, since, scope)
    if scope and not log.logged:
        _check_scope(lam.store, scope)
    for named_spec in specs:  # a mistyped id is a thing to hear about before how few outcomes are reported
        if isinstance(named_spec, (str, Without)):
            _check_held(named_spec if isinstance(named_spec, str) else named_spec.name, lam, log)
    selected = since is not None or bool(scope)
    check_log(log, minimum, lam.store.location, (lambda: read_log(lam.store)) if selected else None,
              holdout=lam.policy.holdout)
    slots = logged_k(log.slates, lam.k)
    beliefs: Beliefs | None = None  # read from the engine once, if a name needs it
    alternatives: list[Alternative] = []
    for spec in specs:
        if isinstance(spec, str):
            _check_lesson(spec, lam, log, selected)
            beliefs = beliefs or beliefs_of(lam, slots)
            spec = parse(spec, beliefs, log)
        elif isinstance(spec, Without):
            _check_lesson(spec.name, lam, log, selected)  # refused as its name is
        alternatives.append(spec)
    alternatives = _one_row_each(alternatives)
    if policy is None and slots <= 1:
        alternatives = [a for a in alternatives if a.name != "k:1"]
    # The estimators' own values (which the coverage check reads through `evaluate`) may leave the
    # outcome's range; a report shows each inside its interval, the estimate as made kept as `raw`.
    rows = [row.inside() for row in evaluate(log, alternatives)]
    return WhatIfReport(lam.store.location, log.logged, len(log.slate), log.randomized, tuple(rows))
