"""`ReviewDecision`: the typed answer a reviewer resumes the sleep graph's interrupt with, and
`first_decision`, which makes the first of two reviewers resuming one review the one that stands."""

from __future__ import annotations

import logging
import threading
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lamar.integration import echoed

log = logging.getLogger(__name__)

# The task id and channel of the decision a review records on its interrupted checkpoint. Every
# checkpointer stores a task's write under (checkpoint, task id, index) once and ignores a second
# one there (INSERT OR IGNORE, ON CONFLICT DO NOTHING), so the first reviewer's write stands.
CLAIM = "lamar_sleep_review_decision"
_CLAIMING = threading.Lock()  # InMemorySaver checks, then writes: two threads must not interleave
# LangGraph keeps a reviewer's resume value, this class, in the checkpoint, and reading it back
# warns of a class missing from its list of safe ones (strict mode blocks it). It is plain data
# Lamar reads back itself: the sleep graph's checkpointer allows it by name (what strict mode
# reads), and lamar_langgraph.checkpoint_types hides the default mode's warning about it.
DECISION_TYPE = (__name__, "ReviewDecision")


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
        reject: proposal id -> why it was turned down (kept in the graph state for the audit), or a list
            of ids; the store remembers each no, so the next sleep leaves it out until what it rests on
            changes. A proposal neither approved nor rejected is undecided: the next sleep proposes it again.
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

    @field_validator("reject", mode="before")
    @classmethod
    def _ids_alone(cls, value: Any) -> Any:
        # A form's checkboxes post the ids alone: each is a no with no reason given.
        ids = isinstance(value, (list, tuple)) and all(isinstance(pid, str) for pid in value)
        return dict.fromkeys(value, "") if ids else value

    @model_validator(mode="after")
    def _consistent(self) -> ReviewDecision:
        if self.approve_all and self.approve:
            raise ValueError("approve_all=True approves every proposal: leave approve empty")
        both = set(self.approve) & set(self.reject)
        if both:
            raise ValueError(f"proposals both approved and rejected: {_listed(sorted(both))}")
        return self

    def approved(self, ids: list[str]) -> list[str]:
        """The approved ids among `ids`, in the report's order (raises ValueError on an unknown id)."""
        for pid in [*self.approve, *self.reject]:
            if pid not in ids:
                raise ValueError(f"no proposal {echoed(pid)} in this report; its ids are {_listed(ids)}")
        return list(ids) if self.approve_all else [pid for pid in ids if pid in self.approve]


def _listed(ids: list[str]) -> str:
    """`ids` as a message quotes them, as `Lamar.apply` does: each one by its ends when long, the
    first five of many, so an answer pasted into an id, or a report of hundreds, stays readable."""
    shown = ", ".join(map(echoed, ids[:5]))
    return f"[{shown}, ... ({len(ids)} in all)]" if len(ids) > 5 else f"[{shown}]"


def _place(part: str | int) -> str:
    # A field of the decision is named bare; anything else in the path (a key of `reject`, a field
    # the model lacks) is what the reviewer sent, quoted as any id is.
    return str(part) if isinstance(part, int) or part in ReviewDecision.model_fields else echoed(part)


def read_decision(answer: Any, ids: list[str]) -> tuple[ReviewDecision | None, list[str], str]:
    """The decision in a resume value, the ids it approves, and "" or what is wrong with it."""
    try:
        decision = answer if isinstance(answer, ReviewDecision) else ReviewDecision.model_validate(answer)
        return decision, decision.approved(ids), ""
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(_place, e['loc'])) or 'answer'}: {e['msg']}" for e in exc.errors())
        return None, [], f"the answer is not a review decision ({problems})"
    except ValueError as exc:
        return None, [], str(exc)


def first_decision(saver: Any, mine: dict[str, Any]) -> dict[str, Any]:
    """The decision that stands for the review this node is resuming: `mine` when no reviewer
    recorded one before, else the first one recorded (`mine` is then recorded nowhere).

    Called inside the review node once the answer is valid. The record sits on the checkpoint
    the review was interrupted at, which every resume of that interrupt runs from, as a pending
    write of a task no node has, which LangGraph leaves alone. Fails open: without a checkpointer
    object, or when it cannot be written or read, `mine` stands, as it did without this record.
    """
    if not isinstance(saver, BaseCheckpointSaver):
        return mine
    try:
        configurable = get_config()["configurable"]
        graph_ns = str(configurable.get("checkpoint_ns", "")).rpartition("|")[0]
        interrupted = configurable.get("checkpoint_map", {}).get(graph_ns)
        if not interrupted:
            return mine
        where = {"configurable": {"thread_id": configurable["thread_id"], "checkpoint_ns": graph_ns,
                                  "checkpoint_id": interrupted}}
        with _CLAIMING:
            saver.put_writes(where, [(CLAIM, mine)], task_id=CLAIM)
            saved = saver.get_tuple(where)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - any checkpointer's failure: the decision stands as before
        log.warning("Lamar could not record the review's decision on its checkpoint (it stands): %s", exc)
        return mine
    writes = (saved.pending_writes or []) if saved is not None else []
    recorded = [value for task, channel, value in writes if task == CLAIM and channel == CLAIM]
    return recorded[0] if recorded and isinstance(recorded[0], dict) else mine


__all__ = ["DECISION_TYPE", "ReviewDecision", "first_decision", "read_decision"]
