"""The sleep graph's record of a reviewer's no: the decision's `reject` ids go in the store, as `lamar review`'s
`n` does, so the next sleep leaves them out until what they rest on changes (docs/sleep.md, "Rejected proposals")."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from lamar import Lamar, LamarError, SleepReport

log = logging.getLogger("lamar_langgraph.sleep_graph")


def remembered(lamar: Lamar, report: SleepReport, decision: Any) -> list[str]:
    """The ids of the decision's rejections the store recorded now (one rejected already on the same
    grounds, or applied, is not). Fails open: the review ran in LangGraph's loop and its decision stands
    in the state; a store that cannot record the no is logged, and the proposal may come back."""
    rejects = decision.get("reject") if isinstance(decision, Mapping) else None
    if not rejects:
        return []
    held = {p.id for p in report.proposals}
    try:
        return lamar.reject(report, [pid for pid in rejects if pid in held])
    except LamarError as exc:
        log.warning("Lamar's sleep review did not record the rejection of %s (the next sleep may propose "
                    "it again; lam.reject(SleepReport.from_dict(state['report']), ids) records it): %s",
                    ", ".join(map(str, rejects)), exc)
        return []


__all__ = ["remembered"]
