"""One lesson's past as the fold saw it: evidence points at a bounded resolution, its audit trail, counts."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lamar.policy.verdicts import Verdict

POINTS = 48  # evidence points kept per lesson: when full, every other one goes and the spacing doubles
TRAIL = 40  # audit-trail entries kept per lesson (the first, "added", and the latest)
UNKNOWN = (-1, 0.0)  # when a lesson was last chosen, in a state that did not record it


@dataclasses.dataclass(frozen=True)
class EvidencePoint:
    """The lesson's evidence right after the outcome (or merge) stored at `seq`."""

    seq: int
    time: float
    verdict: str
    lift: float
    lower: float
    upper: float
    randomized: int
    eligible: int
    restarts: int = 0  # how often the evidence had restarted by then (the world changed)

    def to_dict(self) -> dict[str, Any]:
        """Its fields, the lift None while the interval spans every lift (as `Evidence.to_dict` gives it)."""
        from lamar.policy.verdicts import measured

        data = dataclasses.asdict(self)
        data["measured"] = measured(self.lower, self.upper)
        if not data["measured"]:
            data["lift"] = None
        return data


@dataclasses.dataclass(frozen=True)
class LessonHistory:
    """What `Lamar.history` returns: evidence points ending at the evidence now, the audit trail
    (oldest first; `trail_dropped` entries after the first were let go), episode counts."""

    points: tuple[EvidencePoint, ...]
    trail: tuple[tuple[float, str], ...]
    trail_dropped: int
    injected_in: int
    held_out_in: int
    stride: int  # the points are spaced by this many reported eligible episodes (the first and last apart)


class History:
    """Evidence points taken whenever the lesson's reported eligible episodes reach a multiple of
    `stride` (1, then 2, 4, ... as the points fill up), the first one always kept; plus the
    audit trail and how many episodes injected it or held it out (reported or not).

    `lamar show` and `lamar ui` draw a lesson's evidence over time. Rather than replay the whole
    log for that (a cost that grows with every episode), the fold notes the evidence as it goes,
    and the notes travel with the lesson's state (persisted state, checkpoint snapshots).
    """

    __slots__ = ("points", "stride", "trail", "trail_dropped", "injected_in", "held_out_in", "last_seq",
                 "last_time", "chosen", "fell")

    def __init__(self) -> None:
        # Rows as stored (see _point_row): made EvidencePoints only when viewed, so that opening an
        # engine (which loads every lesson's history with its state) stays cheap. Tuples, never
        # edited: a copy shares them (a fold's undo marks copy a lesson at each of its changes).
        self.points: list[tuple[Any, ...]] = []
        self.stride = 1
        self.trail: list[tuple[float, str]] = []
        self.trail_dropped = 0
        self.injected_in = 0
        self.held_out_in = 0
        self.last_seq = 0  # the last outcome that moved the evidence (the "now" point is dated by it)
        self.last_time = 0.0
        # (reported eligible episodes, time) at the last one that chose the lesson (injected it or held it
        # out by its coin) and at the last fall of its injected rewards: what says that the selection has
        # dropped it, and since when (lamar.policy.dropped). 0: none yet; UNKNOWN: not recorded.
        self.chosen: tuple[int, float] = (0, 0.0)
        self.fell: tuple[int, float] = (0, 0.0)

    def observed(self, eligible: int, seq: int, time: float) -> bool:
        """Note an outcome that moved the evidence; True when a point is due (then call `add`)."""
        self.last_seq, self.last_time = seq, time
        # The fold's observe marked this episode's count (it knows nothing of time): dated here.
        if self.chosen[0] == eligible:
            self.chosen = (eligible, time)
        if self.fell[0] == eligible:
            self.fell = (eligible, time)
            self.note(time, "its injected rewards fell: the selection restarted from the episodes since, and its "
                            "evidence restarts")
        return eligible == 1 or eligible % self.stride == 0

    def since_chosen(self, eligible: int) -> dict[str, Any]:
        """`Evidence`'s unchosen, chosen_at and fell_at for a lesson with `eligible` reported episodes; none
        when they are not known (`UNKNOWN`)."""
        chosen, fell = self.chosen, self.fell
        if chosen[0] < 0:
            return {}
        return {"unchosen": eligible - chosen[0], "chosen_at": chosen[1] if chosen[0] and chosen[1] else None,
                "fell_at": fell[1] if fell[0] > 0 and fell[1] else None}

    def add(self, point: EvidencePoint) -> None:
        self.points.append(_point_row(point))
        if len(self.points) > POINTS:
            self.stride *= 2
            first, *rest = self.points
            self.points = [first, *(row for row in rest if row[_ELIGIBLE] % self.stride == 0)]

    def note(self, time: float, text: str) -> None:
        self.trail.append((time, text))
        if len(self.trail) > TRAIL:
            del self.trail[1]
            self.trail_dropped += 1

    def view(self, now: EvidencePoint) -> LessonHistory:
        """The history, its last point replaced by `now` (the evidence as it reads today)."""
        points = [p for p in map(_point_of, self.points) if p.seq != now.seq]
        if self.last_seq:
            points.append(now)
        return LessonHistory(tuple(points), tuple(self.trail), self.trail_dropped, self.injected_in,
                             self.held_out_in, self.stride)

    def to_dict(self) -> dict[str, Any]:
        return {"points": [list(row) for row in self.points], "stride": self.stride,
                "trail": [list(entry) for entry in self.trail], "trail_dropped": self.trail_dropped,
                "counts": [self.injected_in, self.held_out_in], "last": [self.last_seq, self.last_time],
                "chosen": list(self.chosen), "fell": list(self.fell)}

    def copy(self) -> History:
        """An independent copy, equal in `to_dict` (its lists are copied; their rows and entries
        are tuples of numbers and strings, shared)."""
        out = History.__new__(History)
        out.points, out.trail = list(self.points), list(self.trail)
        out.stride, out.trail_dropped = self.stride, self.trail_dropped
        out.injected_in, out.held_out_in, out.last_seq, out.last_time = (
            self.injected_in, self.held_out_in, self.last_seq, self.last_time)
        out.chosen, out.fell = self.chosen, self.fell
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> History:
        history = cls()
        history.points = [tuple(row) for row in data["points"]]
        if any(len(row) != len(_FIELDS) for row in history.points):
            raise ValueError("a history point is not a row of 9 values")
        history.stride = int(data["stride"])
        if history.stride < 1:
            raise ValueError(f"a history's stride is {history.stride}")
        history.trail = [(float(t), str(text)) for t, text in data["trail"]]
        history.trail_dropped = int(data["trail_dropped"])
        history.injected_in, history.held_out_in = (int(n) for n in data["counts"])
        seq, time = data["last"]
        history.last_seq, history.last_time = int(seq), float(time)
        for name in ("chosen", "fell"):  # absent from a state saved before they were kept: not known
            at, when = data.get(name, UNKNOWN)
            setattr(history, name, (int(at), float(when)))
        return history


def point(seq: int, time: float, judged: tuple[Verdict, float, float], lift: float, randomized: int,
          eligible: int, restarts: int) -> EvidencePoint:
    verdict, lower, upper = judged
    return EvidencePoint(seq=seq, time=time, verdict=verdict.value, lift=lift, lower=lower, upper=upper,
                         randomized=randomized, eligible=eligible, restarts=restarts)


_FIELDS = ("seq", "time", "verdict", "lift", "lower", "upper", "randomized", "eligible", "restarts")
_ELIGIBLE = _FIELDS.index("eligible")


def _point_row(p: EvidencePoint) -> tuple[Any, ...]:
    # An open bound is stored as null: a checkpoint snapshot is an event, and events hold no Infinity.
    return (p.seq, p.time, p.verdict, p.lift, *(b if math.isfinite(b) else None for b in (p.lower, p.upper)),
            p.randomized, p.eligible, p.restarts)


def _point_of(row: tuple[Any, ...]) -> EvidencePoint:
    seq, time, verdict, lift, lower, upper, randomized, eligible, restarts = row
    return EvidencePoint(seq=int(seq), time=float(time), verdict=str(verdict), lift=float(lift),
                         lower=-math.inf if lower is None else float(lower),
                         upper=math.inf if upper is None else float(upper),
                         randomized=int(randomized), eligible=int(eligible), restarts=int(restarts))


__all__ = ["POINTS", "TRAIL", "UNKNOWN", "EvidencePoint", "History", "LessonHistory", "point"]
