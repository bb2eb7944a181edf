"""`ReviewDecision`: the typed answer a reviewer resumes the sleep graph's interrupt with."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ReviewDecision(BaseModel):
    """Which sleep proposals a reviewer approves, and why the others were turned down.

    Resume the review with ``Command(resume=ReviewDecision(approve=[...]))`` or with the
    same fields as a JSON object (what a web form posts). The interrupt's value carries this
    model's JSON schema under ``"answer_schema"`` so a review UI can build its form from it.
    The shorthands ``"all"``/``True``, ``"none"``/``False``/``[]`` and a list of proposal ids
    are read as the decisions they mean.

    Attributes:
        approve: ids of the proposals to carry out.
        approve_all: carry out every proposal of the report (`approve` must then be empty).
        reject: proposal id -> why it was turned down (kept in the graph state for the audit).
        reviewer: who decided (kept in the graph state).

    >>> ReviewDecision.model_validate("all").approve_all
    True
    >>> ReviewDecision.model_validate(["p1"]).approve
    ['p1']
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    approve: list[str] = Field(default_factory=list)
    approve_all: bool = False
    reject: dict[str, str] = Field(default_factory=dict)
    reviewer: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if value is True or (isinstance(value, str) and value.strip().lower() == "all"):
            return {"approve_all": True}
        if value is False or value is None or (isinstance(value, str) and value.strip().lower() == "none"):
            return {}
        if isinstance(value, str):
            return {"approve": [value]}
        if isinstance(value, (list, tuple)):
            return {"approve": list(value)}
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ReviewDecision:
        if self.approve_all and self.approve:
            raise ValueError("approve_all=True approves every proposal: leave approve empty")
        both = set(self.approve) & set(self.reject)
        if both:
            raise ValueError(f"proposals both approved and rejected: {sorted(both)}")
        return self

    def approved(self, ids: list[str]) -> list[str]:
        """The approved ids among `ids`, in the report's order (raises ValueError on an unknown id)."""
        for pid in [*self.approve, *self.reject]:
            if pid not in ids:
                raise ValueError(f"no proposal {pid!r} in this report; its ids are {ids}")
        return list(ids) if self.approve_all else [pid for pid in ids if pid in self.approve]


def read_decision(answer: Any, ids: list[str]) -> tuple[ReviewDecision | None, list[str], str]:
    """The decision in a resume value, the ids it approves, and "" or what is wrong with it."""
    try:
        decision = answer if isinstance(answer, ReviewDecision) else ReviewDecision.model_validate(answer)
        return decision, decision.approved(ids), ""
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors())
        return None, [], f"the answer is not a review decision ({problems})"
    except ValueError as exc:
        return None, [], str(exc)


__all__ = ["ReviewDecision", "read_decision"]
