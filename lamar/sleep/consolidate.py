"""Model-free consolidation: retire proven harm, merge duplicates and near-duplicates,
flag contradictions, promote proven candidates."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lamar.experience import Experience, Status
from lamar.policy.verdicts import Evidence, Verdict, no_evidence_yet
from lamar.sleep.proposals import Proposal
from lamar.sleep.similarity import NEAR_DUPLICATE, lesson_similarity, normalize, overlap

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView

Snapshot = Callable[[Sequence[str]], tuple[dict[str, dict[str, object]], dict[str, str]]]


def consolidate(lam: SleepView, *, similarity: float = NEAR_DUPLICATE) -> list[Proposal]:
    """Proposals from the store alone (no model, no traces); nothing is written.

    Proposals come out in the order apply should take them: retirements, merges,
    contradictions, promotions. A proven-harmful lesson is only ever proposed for retirement,
    so no other proposal of the same report touches it and a report applies cleanly whole.

    Args:
        lam: the engine, already synced.
        similarity: near-duplicate threshold for merges and contradictions, in (0, 1];
            1.0 merges only lessons with the same content words.
    """
    if not 0.0 < similarity <= 1.0:
        raise ValueError(f"similarity must be in (0, 1]; got {similarity!r}")
    live = [e for e in lam.experiences() if e.status is not Status.RETIRED]
    evidence = {e.id: lam.evidence(e.id) for e in live}

    def snapshot(ids: Sequence[str]) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
        # The version too: apply refuses a proposal about a text that was edited since.
        return ({i: {**evidence[i].to_dict(), "version": lam.get(i).version} for i in ids},
                {i: lam.get(i).status.value for i in ids})

    retire, promote = [], []
    for exp in live:
        ev = evidence[exp.id]
        if ev.verdict is Verdict.HARMS:
            ev_map, expect = snapshot([exp.id])
            retire.append(Proposal(
                id=Proposal.make_id("retire", [exp.id]), kind="retire", experience_ids=(exp.id,),
                reason=(f"proven harmful: lift {ev.lift:+.3f}, upper bound {ev.upper:+.3f} < 0 "
                        f"over {ev.randomized} randomized episodes"),
                evidence=ev_map, expect=expect))
        elif ev.verdict is Verdict.HELPS and exp.status is Status.CANDIDATE:
            ev_map, expect = snapshot([exp.id])
            promote.append(Proposal(
                id=Proposal.make_id("promote", [exp.id]), kind="promote", experience_ids=(exp.id,),
                reason=f"candidate proven helpful: lift {ev.lift:+.3f}, lower bound {ev.lower:+.3f} > 0",
                evidence=ev_map, expect=expect))

    # Retirement is the only proposal for proven harm; merging its evidence into a sibling
    # or arguing it as one side of a contradiction would only muddy that.
    unharmful = [e for e in live if evidence[e.id].verdict is not Verdict.HARMS]
    by_scope: dict[tuple[tuple[str, str], ...], list[Experience]] = defaultdict(list)
    for exp in unharmful:
        by_scope[exp.scope.items_key].append(exp)
    merges: list[Proposal] = []
    contradictions: list[Proposal] = []
    added = {e.id: n for n, e in enumerate(live)}
    for group in by_scope.values():
        clusters = _clusters(sorted(group, key=lambda e: _keeper_rank(e, evidence[e.id])), similarity)
        merges += [_merge(c, similarity, snapshot) for c in clusters if len(c) > 1]
        # In the order the lessons were added, not by evidence: a contradiction's id is made from its
        # lessons in order, and an acknowledged one must keep its id while their evidence moves.
        keepers = sorted((c[0] for c in clusters), key=lambda e: added[e.id])
        contradictions += _contradictions(keepers, evidence, similarity, snapshot, lam.applied)
    return retire + merges + contradictions + promote


def _keeper_rank(exp: Experience, ev: Evidence) -> tuple[int, int, int, float]:
    """Which of several duplicates survives a merge: one that names the file it came from (a rule's file and
    line, which an export or a removal points at) first, then active, then most evidence, then oldest."""
    return (0 if exp.provenance.get("file") else 1, 0 if exp.status is Status.ACTIVE else 1, -ev.randomized,
            exp.created_at)


def _clusters(ranked: list[Experience], threshold: float) -> list[list[Experience]]:
    """Greedy clusters around keepers: a lesson joins the first keeper it nearly duplicates.

    Comparing with the keeper only (not any member) stops chains A~B~C from merging an A
    and a C that do not resemble each other.
    """
    clusters: list[list[Experience]] = []
    for exp in ranked:
        for cluster in clusters:
            keeper = cluster[0]
            if lesson_similarity(keeper.precondition, keeper.action, exp.precondition, exp.action) >= threshold:
                cluster.append(exp)
                break
        else:
            clusters.append([exp])
    return clusters


def _merge(cluster: list[Experience], threshold: float, snapshot: Snapshot) -> Proposal:
    keep, rest = cluster[0], cluster[1:]
    ids = [keep.id] + [e.id for e in rest]
    payload: dict[str, object] = {"into": keep.id, "from": [e.id for e in rest]}
    if keep.status is not Status.ACTIVE and any(e.status is Status.ACTIVE for e in rest):
        payload["activate"] = True  # a twin was already a belief: keeping the candidate must not demote it
    exact = all((normalize(e.precondition), normalize(e.action)) == (normalize(keep.precondition),
                                                                     normalize(keep.action)) for e in rest)
    how = ("say the same thing" if exact
           else f"say nearly the same thing (word overlap >= {threshold:g})")
    ev_map, expect = snapshot(ids)
    return Proposal(
        id=Proposal.make_id("merge", ids, payload), kind="merge", experience_ids=tuple(ids),
        reason=f"{len(cluster)} lessons {how} in the same scope; keep {keep.id} ({keep.render()!r}), evidence combined",
        evidence=ev_map, payload=payload, expect=expect)


def _contradictions(keepers: list[Experience], evidence: dict[str, Evidence], threshold: float,
                    snapshot: Snapshot, applied: Callable[[str], bool]) -> list[Proposal]:
    """Lessons for the same situation (preconditions alike) that prescribe different actions.

    A lesson imported from a rules file has the project (and the rule's heading), or the condition the
    rule states, as its precondition. The rules of one file are not alternatives to each other, so
    such a lesson joins a situation another lesson names and never starts one.
    """
    from lamar.rules.importing import PROVENANCE_SOURCE
    from lamar.sleep.acknowledged import acknowledged_id, acknowledged_within

    lessons = {e.id: e for e in keepers}

    def from_rules(exp: Experience) -> bool:
        return exp.provenance.get("source") == PROVENANCE_SOURCE

    situations: list[list[Experience]] = []
    for exp in sorted(keepers, key=from_rules):  # stable: the others first, in their order
        for situation in situations:
            if overlap(situation[0].precondition, exp.precondition) >= threshold:
                situation.append(exp)
                break
        else:
            if not from_rules(exp):
                situations.append([exp])
    out = []
    for situation in situations:
        for exps, how in _disputes(situation, from_rules):
            helps = [e.id for e in exps if evidence[e.id].verdict is Verdict.HELPS]
            if len(helps) == 1:
                continue  # settled: one side proven to help, the others not
            ids = acknowledged_id([e.id for e in exps], applied)
            # Acknowledged with more lessons (a whole situation, grouped as one): its own id, noted as such.
            within = None if ids is not None else acknowledged_within([e.id for e in situation],
                                                                      [e.id for e in exps], applied)
            ids = ids or [e.id for e in exps]
            sides = "; ".join(f"{i}: {lessons[i].action!r} ({_measure(evidence[i])})" for i in ids)
            ev_map, expect = snapshot(ids)
            out.append(Proposal(
                id=Proposal.make_id("contradiction", ids), kind="contradiction", experience_ids=tuple(ids),
                reason=(f"same situation, {how} actions: {sides}. The engine keeps testing each until "
                        "one is proven; retire one by hand to settle it sooner."),
                evidence=ev_map, expect=expect, payload={"acknowledged": within} if within else {}))
    return out


def _disputes(situation: list[Experience],
              from_rules: Callable[[Experience], bool]) -> list[tuple[list[Experience], str]]:
    """The lessons of one situation that argue with each other, each group with how their actions differ.

    Lessons for something that happened ("the deploy fails") are rival answers to it, all of them. Lessons
    for a standing context ("working on shop", `standing`) are instructions about many things at once, so only those
    whose actions conflict are (`actions_conflict`), in groups of lessons that conflict with one another.
    """
    from lamar.sleep.conflict import ActionWords, standing

    if len(situation) < 2 or not standing(situation[0].precondition, situation[0].scope):
        return [(situation, "different")] if len(situation) > 1 else []
    words = {e.id: ActionWords.of(e.action) for e in situation}
    groups: list[list[Experience]] = []
    for exp in situation:
        joined = [g for g in groups if any(not (from_rules(exp) and from_rules(other))
                                           and words[exp.id].conflicts(words[other.id]) for other in g)]
        if not joined:
            groups.append([exp])
            continue
        for other in joined[1:]:  # exp conflicts with both: one dispute, where the first stood
            joined[0] += other
            groups.remove(other)
        joined[0].append(exp)
    order = {e.id: n for n, e in enumerate(situation)}
    return [(sorted(g, key=lambda e: order[e.id]), "conflicting") for g in groups if len(g) > 1]


def _measure(ev: Evidence) -> str:
    """A side's evidence as a reviewer reads it: no lift while its interval spans every lift there can be."""
    if not ev.measured:
        return f"{ev.verdict.value}, lift n/a: {no_evidence_yet(ev.randomized)}"
    return f"{ev.verdict.value}, lift {ev.lift:+.3f}, {ev.randomized} randomized"

__all__ = ["consolidate", "normalize"]
