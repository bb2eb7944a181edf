"""Sleep as its own LangGraph graph: load traces -> sleep -> review (a human interrupt) -> apply."""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer, interrupt
from typing_extensions import TypedDict  # the one LangGraph uses: mixing both kinds fails

from lamar import Lamar, SleepReport
from lamar.cancel import in_thread
from lamar.sleep import already_applied
from lamar.sleep.options import check_model, known
from lamar.sleep.traces import load_traces
from lamar_langgraph.nodes import engine
from lamar_langgraph.rejecting import remembered
from lamar_langgraph.review import DECISION_TYPE, ReviewDecision, first_decision, read_decision
from lamar_langgraph.warned import held_back

log = logging.getLogger(__name__)

REVIEW_KIND = "lamar_sleep_review"
_QUESTION = ("Approve which proposals? Resume with Command(resume=ReviewDecision(approve=[ids], "
             "reject={id: why})) or the same fields as JSON (see answer_schema); 'all' and 'none' work too.")


class SleepState(TypedDict, total=False):
    """The sleep graph's state.

    Attributes:
        traces: input (optional): a JSON Lines path, or a list of trace dicts, to mine.
        trace_count: how many traces were loaded.
        report: the sleep report as a JSON dict (`SleepReport.to_dict()`, non-finite numbers as None).
        approved: the proposal ids the reviewer approved.
        rejected: the proposal ids the decision's `reject` names that the store recorded as rejected in this
            run, so the next sleep leaves them out (one applied, or rejected already, is not listed).
        decision: the reviewer's `ReviewDecision` as JSON (approvals, reasons for rejections, reviewer).
        applied: the report's proposal ids the store holds as applied, whoever applied them.
        skipped: ``[proposal id, reason]`` pairs: approved proposals apply refused (stale, refused).
        held_back: ``[proposal id, warning]`` pairs: approved warned candidates the review did not
            name by id (an "all", or approvals set with no review step), left out of apply.
        overtaken: "" or why this resume's decision is not the one carried out: another reviewer
            resumed the same review and decided first (`approved` and `decision` are then theirs),
            or the store holds as applied what the decision did not approve.
    """

    traces: str | list[dict[str, Any]] | None
    trace_count: int
    report: dict[str, Any]
    approved: list[str]
    rejected: list[str]
    decision: dict[str, Any]
    applied: list[str]
    skipped: list[list[str]]
    held_back: list[list[str]]
    overtaken: str


def build_sleep_graph(lamar: Lamar, model: Any = None, *, checkpointer: Checkpointer = None,
                      name: str = "lamar_sleep", **sleep_options: Any) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Sleep with a human review step, as a compiled graph.

    The report travels in graph state as plain JSON, so with a persistent checkpointer the
    review can come hours later, from another process; apply re-checks the store as it is then.

    ``invoke({"traces": "traces.jsonl"}, config)`` runs sleep and stops at the review
    interrupt, whose value is a JSON dict: ``{"kind": "lamar_sleep_review", "question",
    "proposals": [...], "summary", "made_at", "answer_schema"}``. Resume the same thread with
    ``Command(resume=ReviewDecision(approve=[...], reject={...}))`` (or its fields as JSON, or
    the shorthands "all" / "none" / a list of ids); nothing changes without approval. A run
    with nothing to propose ends without interrupting. An answer that is not a decision, or
    names an unknown proposal, is asked again, with the problem in the interrupt's ``"problem"``.

    Args:
        lamar: the engine whose store is consolidated.
        model: a model (`complete(prompt, *, max_tokens) -> str`) to mine traces with; without
            one, give no traces.
        checkpointer: where the paused review is kept. Default: an `InMemorySaver` (review in
            this process). A `SqliteSaver` or `PostgresSaver` lets another process resume later.
        name: the graph's name.
        **sleep_options: passed to `Lamar.sleep` (similarity, keep_last, min_support, ...).

    Returns:
        The compiled graph (state: `SleepState`).
    """

    engine(lamar, "build_sleep_graph")
    # Checked here, where the mistake is written, rather than in the first (maybe nightly) run.
    check_model(model)
    known(sleep_options)
    saver = InMemorySaver() if checkpointer is None else checkpointer
    if hasattr(saver, "with_allowlist"):  # the decision a reviewer resumes with is read back
        saver = saver.with_allowlist({DECISION_TYPE})

    def load(state: SleepState) -> dict[str, Any]:
        source = state.get("traces")
        # Validated now, so a broken trace file fails before any model call. Only the count
        # is kept: traces stay where they are rather than being copied into every checkpoint.
        return {"trace_count": len(load_traces(source)) if source is not None else 0}

    def sleep(state: SleepState) -> dict[str, Any]:
        # Sleep leaves out what the store holds as applied (an acknowledged contradiction, found again
        # every night): a nightly thread does not wait on a proposal nobody is left to decide.
        report = lamar.sleep(traces=state.get("traces"), model=model, **sleep_options)
        # A thread run again starts with no decision: an earlier night's must not confirm tonight's candidates.
        return {"report": plain_json(report.to_dict()), "approved": [], "rejected": [], "decision": {}, "applied": [],
                "skipped": [], "held_back": [], "overtaken": ""}

    def review(state: SleepState) -> dict[str, Any]:
        report = state["report"]
        ids = [p["id"] for p in report["proposals"]]
        if not ids:
            return {"approved": []}
        question: dict[str, Any] = {"kind": REVIEW_KIND, "question": _QUESTION,
                                    "proposals": report["proposals"], "summary": report.get("summary", {}),
                                    "made_at": report.get("made_at", 0),
                                    "answer_schema": ReviewDecision.model_json_schema()}
        while True:  # each interrupt() after the first asks again, after a bad answer
            decision, approved, problem = read_decision(interrupt(question), ids)
            if decision is not None and not problem:
                return _standing(saver, {"approved": approved, "decision": decision.model_dump(mode="json")})
            question = {**question, "problem": problem}

    def apply(state: SleepState) -> dict[str, Any]:
        # Checkpointers do not lock a thread: another reviewer may have resumed this review and
        # applied another decision. The store says what is applied, whoever applied it.
        report, approved = SleepReport.from_dict(state["report"]), state.get("approved") or []
        skipped: list[list[str]] = []
        warned: list[list[str]] = []
        # The no first, as `lamar apply` records it: it holds whatever the approvals meet.
        rejected = remembered(lamar, report, state.get("decision"))
        if approved and not _overtaken(_held_applied(lamar, report), approved):
            warned = held_back(lamar, report, approved, state.get("decision"))
            if chosen := [pid for pid in approved if pid not in {pair[0] for pair in warned}]:
                result = lamar.apply(report, only=chosen)
                skipped = [[pid, why] for pid, why in result.skipped if result.codes.get(pid) != "applied"]
        held = _held_applied(lamar, report)
        if not (others := _overtaken(held, approved)):
            return {"applied": held, "rejected": rejected, "skipped": skipped, "held_back": warned,
                    "overtaken": state.get("overtaken", "")}
        why = (f"another reviewer decided first: the store holds {', '.join(others)} of this report as applied, "
               f"which this decision did not approve; state['applied'] says what the store holds, and "
               f"nothing of this decision was applied unless it is listed there")
        log.warning("Lamar's sleep review: %s", why)
        return {"applied": held, "rejected": rejected, "skipped": skipped, "held_back": warned, "overtaken": why}

    async def asleep(state: SleepState) -> dict[str, Any]:
        return await in_thread(sleep, state)

    async def aapply(state: SleepState) -> dict[str, Any]:
        return await in_thread(apply, state)

    graph = StateGraph(SleepState)
    graph.add_node("load_traces", load)
    # Under ainvoke, a cancelled run stops these at their next model call or proposal (lamar.cancel):
    # as plain functions they would run on in LangGraph's thread, and apply what nobody waits for.
    graph.add_node("sleep", RunnableLambda(sleep, afunc=asleep, name="sleep"))
    graph.add_node("review", review)
    graph.add_node("apply", RunnableLambda(apply, afunc=aapply, name="apply"))
    graph.add_edge(START, "load_traces")
    graph.add_edge("load_traces", "sleep")
    graph.add_edge("sleep", "review")
    graph.add_edge("review", "apply")
    graph.add_edge("apply", END)
    return graph.compile(checkpointer=saver, name=name)


def _held_applied(lamar: Lamar, report: SleepReport) -> list[str]:
    """The ids of the report's proposals the store holds as applied (by anyone), in its order."""
    return already_applied(report, lamar.would_skip(report))


def _overtaken(held: list[str], approved: list[str]) -> list[str]:
    return [pid for pid in held if pid not in approved]


def _standing(saver: Any, mine: dict[str, Any]) -> dict[str, Any]:
    """The review's update: the first decision recorded for this interrupt, whoever made it. Two
    reviewers may resume one interrupt at once, or one after the other before either run ends;
    each run carries out the first decision, and the later reviewer hears that theirs was not."""
    first = first_decision(saver, mine)
    if first == mine:  # this reviewer's, or the same decision made twice: no conflict
        return {**mine, "overtaken": ""}
    why = (f"another reviewer decided first ({_said(first['decision'])}); that decision stands and this "
           f"run carried it out; this resume's decision ({_said(mine['decision'])}) was not carried out")
    log.warning("Lamar's sleep review: %s", why)
    return {**first, "overtaken": why}


def _said(decision: dict[str, Any]) -> str:
    """A recorded decision in a few words: who, and what it approved."""
    what = ("approve all" if decision.get("approve_all") else
            f"approve {', '.join(decision['approve'])}" if decision.get("approve") else "approve none")
    return f"{decision['reviewer']}: {what}" if decision.get("reviewer") else what


def approved_ids(answer: Any, ids: list[str]) -> tuple[list[str], str]:
    """The proposal ids a review answer approves, and "" or what is wrong with the answer
    (the answer read as a `ReviewDecision`).

    >>> approved_ids("all", ["a", "b"]), approved_ids(False, ["a"]), approved_ids(["b"], ["a", "b"])
    ((['a', 'b'], ''), ([], ''), (['b'], ''))
    >>> approved_ids(["c"], ["a", "b"])[1]
    "no proposal 'c' in this report; its ids are ['a', 'b']"
    """
    _, approved, problem = read_decision(answer, ids)
    return approved, problem


def plain_json(value: Any) -> Any:
    """`value` with tuples as lists and non-finite floats as None: strict JSON for any reader.

    >>> plain_json({"upper": float("inf"), "ids": ("a",)})
    {'upper': None, 'ids': ['a']}
    """
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain_json(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for plain in (str, int, float):
        if isinstance(value, plain):
            return plain(value)
    return str(value)
