"""`lamar apply`'s hold on warned candidates: a mined lesson that would have the agent do harm goes in
only with --confirm-warned, whoever approved it and however the report was applied."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lamar.sleep.printed import printed_id, printed_reason
from lamar.sleep.proposals import SleepReport
from lamar.sleep.warned import unconfirmed

if TYPE_CHECKING:
    from lamar.engine import Lamar


def hold_warned(lam: Lamar, report: SleepReport, only: Sequence[str] | None,
                confirmed: bool) -> tuple[list[str] | None, list[tuple[str, str]]]:
    """The ids apply goes on to (None: all, as given), and the warned ones held back with their warnings.

    An approval in `lamar review` is not the confirmation: a report applied unreviewed, in full (a
    cron job), or approved in a hurry would otherwise let such a lesson in with no one deciding on it.
    One the store holds as applied (confirmed before, or in `lamar ui`) goes on, for apply to say so.
    """
    chosen = [p.id for p in report.proposals] if only is None else list(only)
    held = [] if confirmed else unconfirmed(lam, report, chosen)
    if not held:
        return (None if only is None else chosen), []
    warned = {pid for pid, _ in held}
    return [pid for pid in chosen if pid not in warned], held


def held_lines(held: Sequence[tuple[str, str]]) -> list[str]:
    """How `lamar apply` lists what it held back, under its applied and skipped lines."""
    return [f"  held back  {printed_id(pid)}: WARNING, this lesson tells the agent to do harm "
            f"({printed_reason(why)}); apply it with --confirm-warned --only {printed_id(pid)}" for pid, why in held]


__all__ = ["held_lines", "hold_warned"]
