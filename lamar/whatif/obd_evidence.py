"""Lamar's per-lesson evidence on real noise: the Open Bandit Dataset's random log folded as
episodes (one lesson per item, every item eligible at its logged propensity, the shown item
injected, the click the reward), each verdict checked against the Thompson sampling log."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

from lamar.whatif.estimators import Z95
from lamar.whatif.obd_data import POSITIONS, Round, load_rounds


@dataclasses.dataclass(frozen=True)
class ItemCheck:
    """One item: Lamar's verdict and bounds from the random log, and the other log's estimate of
    the same lift (click rate when shown minus when another item is shown, positions weighed
    equally as the random policy weighs them), with its normal 95% interval."""

    item: int
    verdict: str
    lower: float
    upper: float
    reference: float | None
    reference_lower: float | None
    reference_upper: float | None

    @property
    def contradicted(self) -> bool:
        """A verdict the other log's 95% interval puts on the wrong side of zero."""
        if self.reference_upper is None or self.reference_lower is None:
            return False
        return ((self.verdict == "helps" and self.reference_upper < 0.0)
                or (self.verdict == "harms" and self.reference_lower > 0.0))


def fold_evidence(rounds: Sequence[Round], campaign: str) -> dict[int, tuple[str, float, float]]:
    """Each item's (verdict, lower, upper) after Lamar folds the rounds as episodes.

    The episodes are written to an in-memory store as `recall` and `report` would write them
    (every item eligible with its logged probability of being shown, the shown item injected,
    reward 1 for a click and 0 otherwise), then read back through the engine's public `evidence`.
    A round shows exactly one item, so the per-item coins are not independent; each lesson's
    evidence needs only its own inclusion probability, which is what the log gives.
    """
    from lamar.engine import Lamar
    from lamar.experience import Experience
    from lamar.store.base import Event

    items = 1 + max(row.item for row in rounds)
    lam = Lamar(":memory:", k=1, seed=0)
    ids = [lam.add(Experience(f"recommending in the {campaign} campaign", f"show item {i}", id=f"item-{i}"))
           for i in range(items)]
    events = []
    for j, row in enumerate(rounds):
        episode = f"ep_obd_{campaign}_{j}"
        data = {"id": episode, "context": {"campaign": campaign}, "eligible": ids,
                "injected": [ids[row.item]], "held_out": [], "p": dict.fromkeys(ids, row.propensity)}
        events.append(Event("episode", data, key=f"episode:{episode}"))
        events.append(Event("outcome", {"episode": episode, "reward": float(row.click), "signal": None,
                                        "replace": False}, key=f"outcome:{episode}"))
    lam.store.append(events)
    out = {}
    for i, exp_id in enumerate(ids):
        evidence = lam.evidence(exp_id)
        out[i] = (evidence.verdict.value, evidence.lower, evidence.upper)
    return out


def reference_lifts(rounds: Sequence[Round], items: int) -> list[tuple[float, float, float] | None]:
    """Per item, from another log: the lift with its 95% interval, or None when some position
    lacks rounds showing it (a lift needs every position the random policy uses)."""
    shown = [[0] * POSITIONS for _ in range(items)]
    clicks = [[0] * POSITIONS for _ in range(items)]
    for row in rounds:
        shown[row.item][row.position] += 1
        clicks[row.item][row.position] += row.click
    totals = [sum(shown[i][c] for i in range(items)) for c in range(POSITIONS)]
    total_clicks = [sum(clicks[i][c] for i in range(items)) for c in range(POSITIONS)]
    out: list[tuple[float, float, float] | None] = []
    for i in range(items):
        lift = variance = 0.0
        usable = True
        for c in range(POSITIONS):
            n1, n0 = shown[i][c], totals[c] - shown[i][c]
            if n1 < 2 or n0 < 2:
                usable = False
                break
            r1 = clicks[i][c] / n1
            r0 = (total_clicks[c] - clicks[i][c]) / n0
            lift += (r1 - r0) / POSITIONS
            # A click rate of 0 in a cell has no spread of its own: Agresti-Caffo's one added
            # click and non-click keep the interval from collapsing there.
            a1, a0 = (clicks[i][c] + 1) / (n1 + 2), (total_clicks[c] - clicks[i][c] + 1) / (n0 + 2)
            variance += (a1 * (1 - a1) / (n1 + 2) + a0 * (1 - a0) / (n0 + 2)) / POSITIONS ** 2
        half = Z95 * math.sqrt(variance)
        out.append((lift, lift - half, lift + half) if usable else None)
    return out


def check_items(directory: Path, campaign: str) -> list[ItemCheck]:
    random_log = load_rounds(directory, "random", campaign)
    evidence = fold_evidence(random_log, campaign)
    reference = reference_lifts(load_rounds(directory, "bts", campaign), len(evidence))
    checks = []
    for item, (verdict, lower, upper) in evidence.items():
        ref = reference[item]
        checks.append(ItemCheck(item, verdict, lower, upper, *(ref if ref is not None else (None, None, None))))
    return checks


def evidence_table(directory: Path, campaigns: Sequence[str]) -> str:
    title = ("Lamar's per-item evidence over the random log (one lesson per item), against the Thompson "
             "sampling log's estimate of each item's lift:")
    head = ("campaign | items | helps | harms | unknown | with a reference | verdicts contradicted | "
            "reference outside Lamar's bounds")
    lines = [title, "", head, "---|---|---|---|---|---|---|---"]
    for campaign in campaigns:
        checks = check_items(directory, campaign)
        judged = [c for c in checks if c.verdict != "unknown"]
        referenced = [c for c in checks if c.reference is not None]
        outside = [c for c in referenced if c.reference is not None and not c.lower <= c.reference <= c.upper]
        lines.append(f"{campaign} | {len(checks)} | {sum(c.verdict == 'helps' for c in checks)} | "
                     f"{sum(c.verdict == 'harms' for c in checks)} | {len(checks) - len(judged)} | "
                     f"{len(referenced)} | {sum(c.contradicted for c in judged)} of {len(judged)} | "
                     f"{len(outside)} of {len(referenced)}")
    return "\n".join(lines)
