"""Sleep's output: proposals a person reviews, and the result of applying some of them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from lamar._errors import InvalidReport, echoed
from lamar.policy.verdicts import Verdict
from lamar.storable import finite_number, whole_number

PROPOSAL_KINDS = ("retire", "narrow", "merge", "contradiction", "candidate", "promote", "compact", "retire_dropped")


@dataclasses.dataclass(frozen=True)
class Proposal:
    """One change sleep suggests.

    Attributes:
        id: stable id, the same for the same change against the same lessons.
        kind: retire | narrow | merge | contradiction | candidate | promote | compact | retire_dropped.
        experience_ids: the lessons it touches.
        reason: one human-readable sentence.
        evidence: each touched lesson's evidence when the proposal was made.
        payload: what the change needs (merge: into/from; candidate: the lesson; narrow: key,
            value and the new scope; ...).
        expect: each touched lesson's status when proposed; apply refuses if it changed.
        warning: why a mined candidate's text would have the agent do harm (a force push, `rm -rf ~`,
            switching off tests; `lamar.safety.instructs`), or ""; review shows it and `lamar apply`
            asks for --confirm-warned (docs/sleep.md).

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(seed=0)
    >>> kept = lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    >>> twin = lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    >>> (proposal,) = lam.sleep().proposals
    >>> proposal.kind, sorted(proposal.experience_ids) == sorted([kept, twin])
    ('merge', True)
    >>> proposal.id.startswith("merge_"), Proposal.from_dict(proposal.to_dict()) == proposal
    (True, True)
    """

    id: str
    kind: str
    experience_ids: tuple[str, ...]
    reason: str
    evidence: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    payload: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    expect: Mapping[str, str] = dataclasses.field(default_factory=dict)
    warning: str = ""

    @staticmethod
    def make_id(kind: str, experience_ids: Sequence[str], payload: Mapping[str, Any] | None = None) -> str:
        blob = json.dumps([kind, list(experience_ids), payload or {}], sort_keys=True, default=str)
        return f"{kind}_{hashlib.sha256(blob.encode()).hexdigest()[:12]}"

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["experience_ids"] = list(self.experience_ids)
        if not self.warning:  # only a warned candidate carries it: a report reads as before otherwise
            del data["warning"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Proposal:
        """The proposal `to_dict` wrote; InvalidReport names the field that is missing or mistyped."""
        if not isinstance(data, Mapping):
            raise InvalidReport(f"a proposal is a JSON object; got {type(data).__name__}")
        pid, kind = data.get("id"), data.get("kind")
        if not isinstance(pid, str) or not pid:
            raise InvalidReport(f"a proposal needs an 'id' string; got {pid!r}")
        if not isinstance(kind, str) or not kind:
            raise InvalidReport(f"proposal {echoed(pid)}: 'kind' must be a string; got {kind!r}")
        ids = data.get("experience_ids", [])
        if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) for i in ids):
            raise InvalidReport(f"proposal {echoed(pid)}: 'experience_ids' must be a list of lesson ids; got {ids!r}")
        reason = data.get("reason", "")
        if not isinstance(reason, str):
            raise InvalidReport(f"proposal {echoed(pid)}: 'reason' must be a string")
        warning = data.get("warning") or ""  # a report made before warnings has none
        if not isinstance(warning, str):
            raise InvalidReport(f"proposal {echoed(pid)}: 'warning' must be a string; got {_short(warning)}")
        fields = {}
        for name in ("evidence", "payload", "expect"):
            value = data.get(name) if data.get(name) is not None else {}
            if not isinstance(value, Mapping):
                raise InvalidReport(f"proposal {echoed(pid)}: {name!r} must be a JSON object; "
                                    f"got {type(value).__name__}")
            fields[name] = dict(value)
        if not all(isinstance(v, str) for v in fields["expect"].values()):
            raise InvalidReport(f"proposal {echoed(pid)}: 'expect' maps lesson ids to statuses (strings)")
        if not all(isinstance(v, Mapping) for v in fields["evidence"].values()):
            raise InvalidReport(f"proposal {echoed(pid)}: 'evidence' maps lesson ids to JSON objects")
        for lesson, ev in fields["evidence"].items():
            problem = evidence_problem(ev)
            if problem:
                raise InvalidReport(f"proposal {echoed(pid)}: the evidence of {lesson!r}: {problem}")
        return cls(id=pid, kind=kind, experience_ids=tuple(ids), reason=reason, warning=warning, **fields)


_VERDICTS = frozenset(v.value for v in Verdict)
_BOUNDS = ("lift", "lower", "upper", "estimate")  # infinite (no evidence yet) in memory, None in a file
_COUNTS = ("randomized", "injected", "held_out", "eligible", "restarts", "traces", "sessions",
           "with_tool_errors")


def evidence_problem(ev: Mapping[str, Any], *, slices: bool = True) -> str | None:
    """Why a report's evidence (`Evidence.to_dict`, or a slice of it) cannot be shown as it is, or
    None. Review and the UI print these fields: a hand-edited one must not reach them as text, a
    bool or an int past a float's range."""
    verdict = ev.get("verdict")
    if verdict is not None and not (isinstance(verdict, str) and verdict in _VERDICTS):
        return f"'verdict' must be one of {', '.join(sorted(_VERDICTS))}; got {_short(verdict)}"
    for name in _BOUNDS:
        value = ev.get(name)
        if value is not None and not (finite_number(value) or (isinstance(value, float) and math.isinf(value))):
            return f"{name!r} must be a number or null; got {_short(value)}"
    for name in _COUNTS:
        value = ev.get(name)
        if value is not None and not whole_number(value, low=0):
            return f"{name!r} must be a whole number >= 0; got {_short(value)}"
    outcomes = ev.get("outcomes")  # a mined lesson's sessions by outcome (traces, in a report without "sessions")
    if outcomes is not None and not (isinstance(outcomes, Mapping)
                                     and all(whole_number(n, low=0) for n in outcomes.values())):
        return "'outcomes' maps each outcome to a whole number of sessions >= 0"
    # Apply's check that the lesson was not edited since reads it; a report made before versions were
    # noted has none, and sleep never writes a null one.
    version = ev.get("version")
    if slices and "version" in ev and not whole_number(version, low=1):
        return f"'version' must be a whole number >= 1 (the lesson's version when proposed); got {_short(version)}"
    parts = ev.get("slices")
    if parts is not None:
        if not slices or not isinstance(parts, Mapping) or not all(isinstance(v, Mapping) for v in parts.values()):
            return "'slices' maps slice names to JSON objects"
        for name, part in parts.items():
            problem = evidence_problem(part, slices=False)
            if problem:
                return f"slice {name!r}: {problem}"
    return None


def _short(value: Any) -> str:
    text = (repr(value) if not isinstance(value, int) or abs(value) < 2**63
            else f"an integer of {value.bit_length()} bits")
    return text if len(text) <= 60 else text[:57] + "..."


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
        summary: figures of the run (lessons looked at; traces, batches, model calls, ...);
            when a model call failed, mining proposed nothing and `mining_error` says why;
            `mining_lost` says what mining could not read of the model's output.

    >>> import json
    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(seed=0)
    >>> kept = lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    >>> twin = lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    >>> report = lam.sleep()  # proposes; nothing changes until it is applied
    >>> len(report), [p.kind for p in report], report.made_at
    (1, ['merge'], 2)
    >>> saved = json.dumps(report.to_dict())  # to review, and apply later
    >>> lam.apply(SleepReport.from_dict(json.loads(saved))).applied == [report.proposals[0].id]
    True
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

    @property
    def mining_error(self) -> str:
        """Why mining failed (a model call that timed out or errored), or "" when it did not."""
        mining = self.summary.get("mining")
        error = mining.get("error") if isinstance(mining, Mapping) else None
        return error if isinstance(error, str) else ""

    @property
    def mining_lost(self) -> str:
        """What mining could not read of the model's output (replies without a lesson list beside
        readable ones, lessons too malformed to read), and how much, or "" when it read it all."""
        mining = self.summary.get("mining")
        lost = mining.get("lost") if isinstance(mining, Mapping) else None
        return lost if isinstance(lost, str) else ""

    def to_dict(self) -> dict[str, Any]:
        """The report as standard JSON data: a number that is not finite (a NaN or an infinity in a
        model's dropped item) is None, which `json.dumps` writes as null, never as NaN."""
        data = {
            "format": "lamar-sleep-report",
            "made_at": self.made_at,
            "created": self.created,
            "proposals": [p.to_dict() for p in self.proposals],
            "dropped": [{"item": d.item, "reason": d.reason} for d in self.dropped],
            "summary": dict(self.summary),
        }
        return {key: _finite(value) for key, value in data.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SleepReport:
        """The report `to_dict` wrote (read back from a file); InvalidReport says what is wrong."""
        if not isinstance(data, Mapping):
            raise InvalidReport(f"a sleep report is a JSON object; got {type(data).__name__}")
        raw = data.get("proposals", [])
        if not isinstance(raw, list):
            raise InvalidReport(f"'proposals' must be a list; got {type(raw).__name__}")
        proposals = [Proposal.from_dict(p) for p in raw]
        seen: set[str] = set()
        for p in proposals:
            if p.id in seen:
                raise InvalidReport(f"proposal id {echoed(p.id)} appears twice; each proposal needs its own id")
            seen.add(p.id)
        dropped = data.get("dropped", [])
        if not isinstance(dropped, list) or not all(isinstance(d, Mapping) for d in dropped):
            raise InvalidReport("'dropped' must be a list of JSON objects")
        made_at, created = data.get("made_at", 0), data.get("created", 0.0)
        if not whole_number(made_at, low=0):
            raise InvalidReport(f"'made_at' must be a whole number >= 0 (an event number); got {made_at!r}")
        if not finite_number(created):
            raise InvalidReport(f"'created' must be a unix time; got {created!r}")
        summary = data.get("summary") or {}
        if not isinstance(summary, Mapping):
            raise InvalidReport("'summary' must be a JSON object")
        return cls(
            proposals=proposals,
            dropped=[Dropped(d.get("item"), str(d.get("reason", ""))) for d in dropped],
            made_at=made_at,
            created=float(created),
            summary=dict(summary),
        )


def _finite(value: Any) -> Any:
    """`value` with every float that is not finite replaced by None: JSON has no NaN or infinity
    (Python's json writes them, other readers refuse them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_finite(item) for item in value)
    return value


SkipCode = Literal["applied", "refused", "stale"]
SKIP_CODES: tuple[SkipCode, ...] = ("applied", "refused", "stale")


def skip_code(why: str) -> SkipCode:
    """The code of a skip reason as `apply` and `would_skip` word it: "applied" (applied already,
    by anyone: nothing to do), "refused" (the proposal itself is wrong for this store or this
    Lamar), or "stale" (a lesson it touches changed since the report: run sleep again)."""
    if why.startswith("already applied"):
        return "applied"
    return "refused" if why.startswith("refused") else "stale"


def already_applied(report: SleepReport, skips: Mapping[str, str]) -> list[str]:
    """The report's proposal ids, in its order, that `would_skip`'s answer (`skips`) says the store
    holds as applied, whoever applied them: nothing is left to decide about those. Sleep finds an
    acknowledged contradiction again, by the same id, for as long as its lessons stand, and leaves it
    out by this check unless asked to `include_applied`.

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(seed=0)
    >>> first = lam.add(Experience("a UI test times out on CI", "raise the test timeout"))
    >>> other = lam.add(Experience("a UI test times out on CI", "run the failing test alone first"))
    >>> acknowledged = lam.apply(lam.sleep()).applied  # the contradiction, seen and kept
    >>> report = lam.sleep(include_applied=True)  # finds it again, by the same id
    >>> [p.kind for p in report], already_applied(report, lam.would_skip(report)) == acknowledged
    (['contradiction'], True)
    >>> len(lam.sleep()), lam.sleep().summary["already_applied"] == acknowledged  # left out by default
    (0, True)
    """
    return [p.id for p in report.proposals if p.id in skips and skip_code(skips[p.id]) == "applied"]


@dataclasses.dataclass(frozen=True)
class ApplyResult:
    """Which proposals were carried out, and which were skipped with the reason, in words
    (`skipped`) and as a code to branch on (`codes`: `SKIP_CODES`, see `skip_code`).

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(seed=0)
    >>> kept = lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    >>> twin = lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    >>> report = lam.sleep()
    >>> result = lam.apply(report)
    >>> result.applied == [report.proposals[0].id], result.skipped
    (True, [])
    >>> again = lam.apply(report)
    >>> again.skipped == [(report.proposals[0].id, "already applied")], again.codes[report.proposals[0].id]
    (True, 'applied')
    """

    applied: list[str]
    skipped: list[tuple[str, str]]
    codes: Mapping[str, SkipCode] = dataclasses.field(default_factory=dict)  # by the skipped proposal's id

    def __post_init__(self) -> None:
        # A result built from the words alone (by a caller, or from an older saved dict) still has its codes.
        missing = {pid: skip_code(why) for pid, why in self.skipped if pid not in self.codes}
        if missing:
            object.__setattr__(self, "codes", {**self.codes, **missing})

    def to_dict(self) -> dict[str, Any]:
        return {"applied": list(self.applied), "skipped": [list(pair) for pair in self.skipped],
                "codes": dict(self.codes)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApplyResult:
        codes = data.get("codes")
        return cls(applied=[str(i) for i in data.get("applied", [])],
                   skipped=[(str(i), str(why)) for i, why in data.get("skipped", [])],
                   codes={str(i): cast(SkipCode, c) for i, c in (codes if isinstance(codes, Mapping) else {}).items()
                          if c in SKIP_CODES})
