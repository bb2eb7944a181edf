"""`LamarTraceHandler` on the real instrumentation dispatcher: one valid sleep trace per query."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.llms import MockLLM

from lamar import Experience, Lamar, Scope, Signal
from lamar.sleep.traces import TraceWriter, load_traces
from lamar_llamaindex import LamarPostprocessor, LamarTraceHandler, lessons_to_nodes, report_response

CONTEXT = {"project": "shop", "language": "kotlin"}


@pytest.fixture
def traces_path(tmp_path: Path) -> Path:
    return tmp_path / "traces" / "llamaindex.jsonl"


@pytest.fixture
def handler(traces_path: Path) -> Iterator[LamarTraceHandler]:
    registered = LamarTraceHandler(traces_path, context={"app": "helpdesk"}).register()
    try:
        yield registered
    finally:
        registered.unregister()


def build(holdout: float = 1e-9) -> tuple[Lamar, LamarPostprocessor, object]:
    lam = Lamar(":memory:", k=2, seed=2, holdout=holdout)
    for i in range(2):
        lam.add(Experience(f"the Gradle build fails with E{i}", f"apply fix {i}",
                           scope=Scope(project="shop")))
    post = LamarPostprocessor(lam, top_n=2, context=CONTEXT)
    query_engine = VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(similarity_top_k=2,
                                                                           node_postprocessors=[post])
    return lam, post, query_engine


def test_one_trace_per_query_in_the_shared_format(handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, post, query_engine = build()

    response = query_engine.query("why does the Gradle build fail?")  # type: ignore[attr-defined]

    (trace,) = load_traces(traces_path)  # validated by the sleep side's own loader
    assert trace.input == "why does the Gradle build fail?"
    assert trace.context == {"app": "helpdesk", **CONTEXT}
    assert trace.episode_id == post.last_episode_id
    assert trace.output == str(response) and "apply fix" in trace.output
    injected = lam.episode(post.last_episode_id).injected
    assert trace.metadata["experience_ids"] == injected
    assert [line.split(":")[0] for line in trace.attempted] == [f"lesson {e}" for e in injected]
    assert trace.outcome is None and trace.tool_errors == ()
    assert report_response(lam, response, Signal.SHIPPED) == [trace.episode_id]  # the join sleep can make


async def test_async_queries_and_all_held_out_episodes(handler: LamarTraceHandler, traces_path: Path) -> None:
    _, post, query_engine = build(holdout=0.999999)  # every wanted lesson held out

    response = await query_engine.aquery("Gradle build fails")  # type: ignore[attr-defined]

    assert response.source_nodes == []  # the response itself carries no episode
    (trace,) = load_traces(traces_path)
    assert trace.episode_id == post.last_episode_id is not None
    assert trace.attempted == () and trace.metadata["experience_ids"] == []
    assert trace.context == {"app": "helpdesk", **CONTEXT}


def test_a_streaming_answer_is_left_for_the_caller(handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, post, _ = build()
    query_engine = VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(
        streaming=True, node_postprocessors=[post])

    response = query_engine.query("Gradle build fails")
    (trace,) = load_traces(traces_path)
    assert trace.output == "" and trace.episode_id == post.last_episode_id

    text = "".join(response.response_gen)  # type: ignore[union-attr]
    assert "apply fix" in text  # the stream was still whole for the caller


class DownLLM(MockLLM):
    """A model that fails: with `error`, or, awaited, waits in the call until the test cancels it."""

    _error: Exception = PrivateAttr(default_factory=lambda: ConnectionError("the model is down"))
    _entered: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise self._error

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        self._entered.set()
        await asyncio.Event().wait()  # never set: the caller's cancel ends it


def test_a_failing_query_is_traced_with_its_error(handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, post, _ = build()
    query_engine = VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(llm=DownLLM(), node_postprocessors=[post])

    with pytest.raises(ConnectionError):
        query_engine.query("anything")

    (trace,) = load_traces(traces_path)
    assert trace.tool_errors == ("the model is down",)
    assert trace.input == "anything" and trace.output == "" and trace.episode_id == post.last_episode_id
    assert trace.context == {"app": "helpdesk", **CONTEXT}


def test_an_error_without_a_message_is_traced_by_its_type(handler: LamarTraceHandler, traces_path: Path) -> None:
    # A cancelled call (a timeout, task.cancel()) fails with a CancelledError, whose text is empty: the
    # trace said its error was "", which reads as no error at all.
    lam, post, _ = build()
    index = VectorStoreIndex(lessons_to_nodes(lam))
    silent = DownLLM()
    silent._error = ConnectionError()
    with pytest.raises(ConnectionError):
        index.as_query_engine(llm=silent, node_postprocessors=[post]).query("sync")

    async def cancelled() -> None:
        model = DownLLM()
        task = asyncio.create_task(index.as_query_engine(llm=model, node_postprocessors=[post]).aquery("async"))
        await model._entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert [(t.input, t.tool_errors) for t in load_traces(traces_path)] == [
        ("sync", ("ConnectionError",)), ("async", ("CancelledError",))]


def test_a_trace_file_that_cannot_be_written_costs_one_warning_line_not_the_query(tmp_path: Path, caplog) -> None:
    lam, _, query_engine = build()
    handler = LamarTraceHandler(tmp_path).register()  # a folder, not a file: every write fails
    try:
        with caplog.at_level("WARNING", logger="lamar_llamaindex.instrumentation"):
            response = query_engine.query("the Gradle build fails")  # type: ignore[attr-defined]
    finally:
        handler.unregister()
    assert response.source_nodes and lam.stats()["episodes"] == 1  # the query went on
    (record,) = [r for r in caplog.records if r.name == "lamar_llamaindex.instrumentation"]
    assert record.levelname == "WARNING" and record.exc_info is None  # no traceback per query
    assert "could not record a QueryEndEvent" in record.getMessage()
    assert f"cannot append a trace to {tmp_path}" in record.getMessage()


def test_unregister_stops_recording(traces_path: Path) -> None:
    _, _, query_engine = build()
    handler = LamarTraceHandler(TraceWriter(traces_path)).register()
    twin = LamarTraceHandler(TraceWriter(traces_path)).register()  # equal fields, another object
    query_engine.query("first")  # type: ignore[attr-defined]
    handler.unregister()
    query_engine.query("second")  # type: ignore[attr-defined]
    twin.unregister()
    query_engine.query("third")  # type: ignore[attr-defined]

    assert [t.input for t in load_traces(traces_path)] == ["first", "first", "second"]
    assert all(h is not handler and h is not twin for h in get_dispatcher().event_handlers)


@pytest.mark.parametrize("context", [{"app": 7}, 5])
def test_a_context_that_cannot_make_a_trace_is_refused_when_the_handler_is_made(
        traces_path: Path, context: object) -> None:
    """Accepted, it would cost every query its trace, with only a logged error per query."""
    from lamar import LamarError

    with pytest.raises(LamarError, match="must be a string|mapping of strings"):
        LamarTraceHandler(traces_path, context=context)  # type: ignore[arg-type]


@pytest.mark.parametrize("context", [5, "helpdesk", ["app", "helpdesk"]])
def test_a_context_that_is_no_mapping_is_the_invalid_context_every_piece_raises(
        traces_path: Path, context: object) -> None:
    """The page says a context that is not a mapping raises InvalidContext; the handler and the
    postprocessor raised InvalidArgument, where the memory block, the tools and the nodes raise it."""
    from lamar import InvalidContext, Lamar
    from lamar_llamaindex import LamarMemoryBlock, LamarPostprocessor, create_lamar_tools

    lam = Lamar(":memory:")
    for make in (lambda: LamarTraceHandler(traces_path, context=context),  # type: ignore[arg-type]
                 lambda: LamarPostprocessor(lam, context=context),  # type: ignore[arg-type]
                 lambda: LamarMemoryBlock(lam, context=context),  # type: ignore[arg-type]
                 lambda: create_lamar_tools(lam, context=context)):  # type: ignore[arg-type]
        with pytest.raises(InvalidContext, match="mapping of strings"):
            make()
    assert not traces_path.exists()


def _context_service_down(bundle: object) -> dict[str, str]:
    raise RuntimeError("the context service is down")


@pytest.mark.parametrize("context", [_context_service_down, lambda bundle: None, lambda bundle: {"attempt": 3}])
def test_a_context_function_that_fails_costs_the_traces_fields_not_the_trace(
        traces_path: Path, context: object, caplog) -> None:
    # The function runs inside the instrumentation's callback: it cost the whole trace, with a traceback
    # logged at every query, where a trace file that cannot be written costs one warning line.
    _, post, query_engine = build()
    handler = LamarTraceHandler(traces_path, context=context).register()  # type: ignore[arg-type]
    try:
        with caplog.at_level("WARNING", logger="lamar_llamaindex.instrumentation"):
            response = query_engine.query("the Gradle build fails")  # type: ignore[attr-defined]
    finally:
        handler.unregister()
    (trace,) = load_traces(traces_path)
    assert trace.episode_id == post.last_episode_id and trace.output == str(response)
    assert trace.context == CONTEXT  # the recall's own fields: the function's are left out
    (record,) = [r for r in caplog.records if r.name == "lamar_llamaindex.instrumentation"]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert "context function" in record.getMessage() and "without its fields" in record.getMessage()


def test_a_handler_registered_twice_writes_one_trace_and_leaves_no_log_open(traces_path: Path) -> None:
    """Registered twice (``register()`` again, or ``add_event_handler`` by hand), the handler hears
    each event twice; the second start must not open a second episode log, which no end would
    close and which would keep every later episode of the caller's context for good."""
    import contextvars

    from lamar_llamaindex.outcomes import _OPEN_LOGS

    lam, _, query_engine = build()
    handler = LamarTraceHandler(traces_path).register().register()
    get_dispatcher().add_event_handler(handler)
    context = contextvars.copy_context()
    try:
        for i in range(3):
            context.run(query_engine.query, f"why does the Gradle build fail? {i}")  # type: ignore[attr-defined]
    finally:
        handler.unregister()
    assert [h for h in get_dispatcher().event_handlers if h is handler] == []
    assert context.run(_OPEN_LOGS.get) == ()
    traces = load_traces(traces_path)
    episodes = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
    assert len(traces) == 3 and [t.episode_id for t in traces] == episodes


def test_a_long_context_and_query_are_clipped_in_the_trace(traces_path: Path) -> None:
    ticket = "customer says " + "the app crashes on login " * 4000
    registered = LamarTraceHandler(traces_path, context=lambda bundle: {"ticket": ticket}).register()
    try:
        _, _, query_engine = build()
        query_engine.query("why does the Gradle build fail? " * 140)  # type: ignore[attr-defined]
    finally:
        registered.unregister()
    (trace,) = load_traces(traces_path)
    assert trace.context["ticket"] == ticket[:4000 - len(" [...clipped]")] + " [...clipped]"
    assert len(trace.input) == 4000 and trace.input.endswith(" [...clipped]")
    assert trace.context["project"] == "shop"


@pytest.mark.parametrize("cut", [9, 21, 33])
def test_a_credential_cut_by_the_trace_clip_leaves_none_of_it_in_the_file(
        handler: LamarTraceHandler, traces_path: Path, cut: int) -> None:
    """A query is cut to a length before the trace file scrubs it: a cut inside a credential
    must not leave the file a prefix too short for the scrubber to recognise."""
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    _, _, query_engine = build()
    query_engine.query("x" * (4000 - 7 - cut) + " token " + key + " tail")  # type: ignore[attr-defined]
    assert key[:8] not in traces_path.read_text()


def test_a_llamaindex_llm_handed_to_sleep_is_refused_with_the_way_to_wrap_it(
        handler: LamarTraceHandler, traces_path: Path) -> None:
    # A LlamaIndex app has Settings.llm at hand; its complete() returns a CompletionResponse, so sleep
    # ran, logged that mining failed and returned an empty report: a nightly job found no lesson, unsaid.
    from llama_index.core.llms import MockLLM

    from lamar import InvalidArgument

    lam, _, query_engine = build()
    query_engine.query("the Gradle build fails with E1")  # type: ignore[attr-defined]
    with pytest.raises(InvalidArgument) as info:
        lam.sleep(traces=str(traces_path), model=MockLLM())
    message = str(info.value)
    assert "MockLLM" in message and "CompletionResponse" in message and "docs/llamaindex.md" in message
