"""Model-free consolidation: retire proven harm, promote proven candidates, merge duplicates,
flag contradictions."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

from lamar.experience import Experience, Status
from lamar.policy.verdicts import Verdict
from lamar.sleep.proposals import Proposal

if TYPE_CHECKING:
    from lamar.engine import Lamar

_PUNCT = re.compile(r"[^\w\s]")


def normalize(text: str) -> str:
    """Lower case, punctuation dropped, white space folded: what counts as the same words.

    >>> normalize("  Clear the  DerivedData folder! ")
    'clear the deriveddata folder'
    """
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def consolidate(lam: Lamar) -> list[Proposal]:
    live = [e for e in lam.experiences() if e.status is not Status.RETIRED]
    evidence = {e.id: lam.evidence(e.id) for e in live}
    proposals: list[Proposal] = []

    def snapshot(ids: list[str]) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
        return ({i: evidence[i].to_dict() for i in ids},
                {i: lam.get(i).status.value for i in ids})

    for exp in live:
        ev = evidence[exp.id]
        if ev.verdict is Verdict.HARMS:
            ev_map, expect = snapshot([exp.id])
            proposals.append(Proposal(
                id=Proposal.make_id("retire", [exp.id]), kind="retire", experience_ids=(exp.id,),
                reason=(f"proven harmful: lift {ev.lift:+.3f}, upper bound {ev.upper:+.3f} < 0 "
                        f"over {ev.randomized} randomized episodes"),
                evidence=ev_map, expect=expect))
        elif ev.verdict is Verdict.HELPS and exp.status is Status.CANDIDATE:
            ev_map, expect = snapshot([exp.id])
            proposals.append(Proposal(
                id=Proposal.make_id("promote", [exp.id]), kind="promote", experience_ids=(exp.id,),
                reason=f"candidate proven helpful: lift {ev.lift:+.3f}, lower bound {ev.lower:+.3f} > 0",
                evidence=ev_map, expect=expect))

    proposals += _merges(live, snapshot)
    proposals += _contradictions(live, evidence, snapshot)
    return proposals


def _merges(live: list[Experience], snapshot) -> list[Proposal]:  # type: ignore[no-untyped-def]
    groups: dict[tuple[object, ...], list[Experience]] = defaultdict(list)
    for exp in live:
        groups[(normalize(exp.precondition), normalize(exp.action), exp.scope.items_key)].append(exp)
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        keep, rest = group[0], group[1:]
        ids = [keep.id] + [e.id for e in rest]
        payload = {"into": keep.id, "from": [e.id for e in rest]}
        ev_map, expect = snapshot(ids)
        out.append(Proposal(
            id=Proposal.make_id("merge", ids, payload), kind="merge", experience_ids=tuple(ids),
            reason=f"{len(group)} lessons say the same thing in the same scope; keep {keep.id}, evidence combined",
            evidence=ev_map, payload=payload, expect=expect))
    return out


def _contradictions(live: list[Experience], evidence, snapshot) -> list[Proposal]:  # type: ignore[no-untyped-def]
    groups: dict[tuple[object, ...], dict[str, Experience]] = defaultdict(dict)
    for exp in live:
        groups[(normalize(exp.precondition), exp.scope.items_key)].setdefault(normalize(exp.action), exp)
    out = []
    for by_action in groups.values():
        if len(by_action) < 2:
            continue
        exps = list(by_action.values())
        ids = [e.id for e in exps]
        verdicts = {evidence[i].verdict for i in ids}
        if Verdict.HELPS in verdicts and verdicts - {Verdict.HELPS} <= {Verdict.HARMS}:
            if sum(evidence[i].verdict is Verdict.HELPS for i in ids) == 1:
                continue  # settled: one proven to help, the others not
        ev_map, expect = snapshot(ids)
        sides = "; ".join(f"{e.id}: {e.action!r} ({evidence[e.id].verdict.value}, lift {evidence[e.id].lift:+.3f})"
                          for e in exps)
        out.append(Proposal(
            id=Proposal.make_id("contradiction", ids), kind="contradiction", experience_ids=tuple(ids),
            reason=f"same situation, different actions: {sides}. The engine keeps testing all until one is proven.",
            evidence=ev_map, expect=expect))
    return out
