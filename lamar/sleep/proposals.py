"""Sleep's output: proposals a person reviews, and the result of applying some of them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

PROPOSAL_KINDS = ("retire", "narrow", "merge", "contradiction", "candidate", "promote", "compact")


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One change sleep suggests.

    Attributes:
        id: stable id, the same for the same change against the same lessons.
        kind: retire | narrow | merge | contradiction | candidate | promote | compact.
        experience_ids: the lessons it touches.
        reason: one human-readable sentence.
        evidence: each touched lesson's evidence when the proposal was made.
        payload: what the change needs (merge: into/from; candidate: the lesson; narrow: key,
            value and the new scope; ...).
        expect: each touched lesson's status when proposed; apply refuses if it changed.
    """

    id: str
    kind: str
    experience_ids: tuple[str, ...]
    reason: str
    evidence: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    payload: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    expect: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @staticmethod
    def make_id(kind: str, experience_ids: Sequence[str], payload: Mapping[str, Any] | None = None) -> str:
        blob = json.dumps([kind, list(experience_ids), payload or {}], sort_keys=True, default=str)
        return f"{kind}_{hashlib.sha256(blob.encode()).hexdigest()[:12]}"

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["experience_ids"] = list(self.experience_ids)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Proposal:
        return cls(
            id=str(data["id"]),
            kind=str(data["kind"]),
            experience_ids=tuple(data.get("experience_ids", ())),
            reason=str(data.get("reason", "")),
            evidence=dict(data.get("evidence", {})),
            payload=dict(data.get("payload", {})),
            expect=dict(data.get("expect", {})),
        )


@dataclasses.dataclass(frozen=True)
class Dropped:
    """Something sleep looked at and refused (a malformed mined lesson, say), and why."""

    item: Any
    reason: str


@dataclasses.dataclass(frozen=True)
class SleepReport:
    """Proposals made against the store as of event `made_at`; nothing is changed yet.

    Attributes:
        proposals: the changes sleep suggests, in the order apply takes them.
        dropped: what mining refused (a malformed or unsupported lesson, ...), each with its reason.
        made_at: the store's last event when the report was made; apply re-checks what changed since.
        created: unix time of the report.
        summary: figures of the run (lessons looked at; traces, batches, model calls, ...).
    """

    proposals: list[Proposal]
    dropped: list[Dropped] = dataclasses.field(default_factory=list)
    made_at: int = 0
    created: float = dataclasses.field(default_factory=time.time)
    summary: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.proposals)

    def __len__(self) -> int:
        return len(self.proposals)

    def of_kind(self, kind: str) -> list[Proposal]:
        return [p for p in self.proposals if p.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "lamar-sleep-report",
            "made_at": self.made_at,
            "created": self.created,
            "proposals": [p.to_dict() for p in self.proposals],
            "dropped": [{"item": d.item, "reason": d.reason} for d in self.dropped],
            "summary": dict(self.summary),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SleepReport:
        return cls(
            proposals=[Proposal.from_dict(p) for p in data.get("proposals", [])],
            dropped=[Dropped(d.get("item"), d.get("reason", "")) for d in data.get("dropped", [])],
            made_at=int(data.get("made_at", 0)),
            created=float(data.get("created", 0.0)),
            summary=dict(data.get("summary", {})),
        )


@dataclasses.dataclass(frozen=True)
class ApplyResult:
    """Which proposals were carried out, and which were skipped with the reason."""

    applied: list[str]
    skipped: list[tuple[str, str]]

    def to_dict(self) -> dict[str, Any]:
        return {"applied": list(self.applied), "skipped": [list(pair) for pair in self.skipped]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApplyResult:
        return cls(applied=[str(i) for i in data.get("applied", [])],
                   skipped=[(str(i), str(why)) for i, why in data.get("skipped", [])])
