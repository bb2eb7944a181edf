"""What the callback handler keeps per root run, and the implicit signals it counted."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lamar import InvalidArgument, UnknownEpisode
from lamar.sleep.traces import Trace
from lamar_langchain.trace_text import input_text

if TYPE_CHECKING:
    from lamar import Lamar
    from lamar.signals import Signal

_FIXED = "as LangChain gives a run or config={'run_id': uuid.uuid4()} fixes one"


@dataclasses.dataclass(frozen=True)
class ImplicitSignals:
    """What a run showed without anyone saying so; the app decides what, if anything, it means.

    Attributes:
        tool_calls: tools started.
        tool_errors: tools that raised or returned an error message.
        retries: retry events, `with_retry` attempts after the first, and tool calls repeated
            with the same input.
        model_errors: model calls that raised.
        failed: the root run itself raised.
    """

    tool_calls: int = 0
    tool_errors: int = 0
    retries: int = 0
    model_errors: int = 0
    failed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class RunRecord:
    """One root run: what it was asked, what it tried, what it answered, which episodes it used."""

    def __init__(self, run_id: UUID, name: str, inputs: Any, when: float) -> None:
        self.run_id = run_id
        self.name = name
        self.started = when
        self.input = input_text(inputs)
        self.members: set[UUID] = {run_id}
        self.running: set[UUID] = set()  # members started and not yet ended
        self.episodes: list[str] = []
        self.context: dict[str, str] | None = None
        self.attempted: list[str] = []
        self.tool_errors: list[str] = []
        self.seen_calls: set[str] = set()
        self.counts = {"tool_calls": 0, "tool_errors": 0, "retries": 0, "model_errors": 0}
        self.failed = False
        self.error = ""
        self.output = ""
        self.done = False
        self.outcome: str | None = None
        self.reward: float | None = None
        self.written = False
        self.parents: dict[UUID, UUID] = {}  # member run -> its parent
        self.origin: dict[str, UUID] = {}  # episode -> the run it came from
        self.failed_parts: set[UUID] = set()  # members that raised
        self.thread: str | None = None  # the LangGraph thread, from the root's metadata
        self.interrupted_parts: set[UUID] = set()  # the innermost members that raised `interrupt(...)`
        self.paused = False  # stopped at a static breakpoint (`interrupt_before`, `interrupt_after`)
        self.checkpoint: str | None = None  # the checkpoint it stopped at, where its resume starts
        self.resumes: UUID | None = None  # the interrupted run of the thread that this run resumed
        self.carried: list[str] = []  # episodes taken over from that run
        self.redone: list[str] = []  # carried, but recalled inside a node that runs again on resume
        self.reported: set[str] = set()  # episodes this handler reported

    @property
    def interrupted(self) -> bool:
        return bool(self.interrupted_parts) or self.paused

    def interrupt(self, run_id: UUID, interrupts: Any) -> None:
        """Note a member that raised `GraphInterrupt`. With `interrupt(...)` payloads, its parents
        re-raise it after it, and only the innermost one is the node that LangGraph runs again on
        resume; without (a subgraph's breakpoint), the subgraph resumes from its own checkpoint."""
        if not interrupts:
            self.paused = True
        elif not any(self._inside(part, {run_id}) for part in self.interrupted_parts):
            self.interrupted_parts.add(run_id)

    def abandoned(self) -> list[str]:
        """Episodes recalled inside a part of the run that raised (an attempt the run retried),
        or carried from an interrupted node that ran again: their part never reached the answer."""
        return [e for e in self.episodes if e in self.redone or self._inside(self.origin.get(e), self.failed_parts)]

    def recalled_inside(self, parts: set[UUID]) -> list[str]:
        return [e for e in self.episodes if self._inside(self.origin.get(e), parts)]

    def _inside(self, node: UUID | None, parts: set[UUID]) -> bool:
        while node is not None and node not in parts:
            node = self.parents.get(node)
        return node is not None

    def signals(self) -> ImplicitSignals:
        return ImplicitSignals(**self.counts, failed=self.failed)

    def to_trace(self, context: dict[str, str]) -> Trace:
        """This run in the sleep trace format (the first episode is the trace's episode)."""
        return Trace(
            id=str(self.run_id), time=self.started, context=context, input=self.input,
            attempted=list(self.attempted), tool_errors=list(self.tool_errors), output=self.output,
            outcome=self.outcome, episode_id=self.episodes[0] if self.episodes else None,
            metadata={"run_id": str(self.run_id), "name": self.name, "episodes": list(self.episodes),
                      "implicit": self.signals().to_dict(), "error": self.error, "reward": self.reward,
                      "resumes": str(self.resumes) if self.resumes is not None else None},
        )


def as_uuid(value: Any) -> UUID | None:
    """A run id given as a UUID or its string; None for anything else (an episode id, say)."""
    if isinstance(value, UUID):
        return value
    if isinstance(value, str):
        try:
            return UUID(value)
        except ValueError:
            return None
    return None


def run_key(run_id: Any) -> UUID:
    """`run_id` as `bind` and `unbind` take it: a UUID or its string, else InvalidArgument (in either, a run
    id of another form can name no run, so it is a mistake to hear about, not a binding that is absent)."""
    key = as_uuid(run_id)
    if key is None:
        raise InvalidArgument(f"run_id must be a UUID (or its string), {_FIXED}; got {run_id!r}")
    return key


def handler_key(run_or_episode: Any) -> UUID | str:
    """A run or episode as the handler's `report`, `episodes`, `trace` take it: a run id as a UUID or its string,
    else an episode id (a non-empty string); InvalidArgument for anything else (`5`, `None`), which names neither."""
    key = as_uuid(run_or_episode)
    if key is not None:
        return key
    if isinstance(run_or_episode, str) and run_or_episode:
        return run_or_episode
    raise InvalidArgument(f"the handler takes an episode_id that recall() returned, or a root run's UUID (or its "
                          f"string), {_FIXED}; got {run_or_episode!r} ({type(run_or_episode).__name__})")


def report_one(lam: Lamar, episode_id: str, signal: Signal | float | str, replace: bool) -> list[str]:
    """`lam.report` for an id the handler read as an episode id; when the store holds no such episode, the id
    may as well have been meant as a run (`"run-1"`), so the refusal also says how a run is named."""
    try:
        lam.report(episode_id, signal, replace=replace)
    except UnknownEpisode as exc:
        raise UnknownEpisode(f"{episode_id!r} is no UUID, so it was read as an episode id: {exc.args[0]}; or "
                             f"report a root run by its UUID (or its string), {_FIXED}") from None
    return [episode_id]


def run_name(serialized: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> str:
    """The name a callback event gives its run: its `name`, else the serialized class's."""
    name = kwargs.get("name") or (serialized or {}).get("name")
    if not name and serialized and serialized.get("id"):
        name = serialized["id"][-1]
    return str(name or "run")


__all__ = ["ImplicitSignals", "RunRecord", "as_uuid", "handler_key", "report_one", "run_key", "run_name"]
