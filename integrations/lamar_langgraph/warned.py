"""The sleep graph's hold on warned candidates: a mined lesson that would have the agent do harm goes
in only when the review named it, as `lamar apply` holds it until --confirm-warned."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from lamar import Lamar, SleepReport
from lamar.sleep.printed import printed_id, printed_reason
from lamar.sleep.warned import unconfirmed

log = logging.getLogger("lamar_langgraph.sleep_graph")


def held_back(lamar: Lamar, report: SleepReport, approved: list[str], decision: Any) -> list[list[str]]:
    """``[id, warning]`` of each approved warned candidate that apply leaves out, logged as it is.

    Naming it in the decision's `approve`, beside its warning in the interrupt, is the confirmation,
    as `lamar ui`'s Approve on its card is. An "all" is not: it is what a script sends, unread. Nor
    are approvals set with no review step (``update_state(..., as_node="review")``): no one saw it.
    One the store holds as applied already goes on, for apply to list it as applied.
    """
    named = set(decision.get("approve") or ()) if isinstance(decision, Mapping) else set()
    held = [[pid, why] for pid, why in unconfirmed(
        lamar, report, [p.id for p in report.proposals if p.id in approved and p.id not in named])]
    for pid, why in held:
        log.warning("Lamar's sleep review held back %s: WARNING, this lesson tells the agent to do harm (%s); "
                    "a review that names it applies it, as does Lamar.apply(SleepReport.from_dict(state['report']), "
                    "only=[%r])", printed_id(pid), printed_reason(why), pid)
    return held


__all__ = ["held_back"]
