"""LamarCallbackHandler in async runs (no file I/O on the loop), with bindings that never start,
and on runs that fail (no episode left pending)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableLambda

from lamar import DuplicateReport, Experience, InvalidArgument, Lamar, Scope, Signal, UnknownEpisode
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler, LamarRetriever
from lamar_langgraph import LamarState, recall_node
from tests.integrations.langgraph.graphs import in_line


def engine() -> Lamar:
    lam = Lamar(":memory:", k=2, seed=9, holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    return lam


async def test_async_runs_write_traces_off_the_event_loop(tmp_path: Path) -> None:
    lam = engine()
    path = tmp_path / "traces.jsonl"
    handler = LamarCallbackHandler(lam, trace_path=path, raise_error=True)
    writes: list[int] = []
    write = handler._writer.write  # type: ignore[union-attr]

    def recording(trace: Any) -> None:
        writes.append(threading.get_ident())
        write(trace)

    handler._writer.write = recording  # type: ignore[union-attr, method-assign]
    chain = LamarRetriever(lam, k=1, context={"project": "trace"}) | RunnableLambda(lambda docs: len(docs))
    loop_thread = threading.get_ident()
    results = await asyncio.gather(*(chain.ainvoke(f"q{i}", config={"callbacks": [handler]}) for i in range(3)))
    assert results == [1, 1, 1]
    handler.flush()
    assert len(writes) == 3 and loop_thread not in writes
    assert len(load_traces(path)) == 3
    handler.close()


def test_bindings_for_runs_that_never_start_are_freed() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, max_runs=2)
    episodes = [lam.recall({"project": "trace"}).episode_id for _ in range(3)]
    runs = [uuid.uuid4() for _ in episodes]
    for run_id, episode_id in zip(runs, episodes):
        handler.bind(run_id, episode_id)
    assert list(handler._pending) == runs[1:]  # at most max_runs wait; the oldest went first
    assert handler.unbind(runs[1]) == [episodes[1]]
    expiring = LamarCallbackHandler(lam, bind_ttl=0.0)
    expiring.bind(runs[0], episodes[0])
    RunnableLambda(lambda x: x).invoke(1, config={"callbacks": [expiring]})  # another run ends
    assert len(expiring._pending) == 0
    # the engine still lists the episodes as pending: nothing stored is lost
    assert {p.episode_id for p in lam.pending()} == set(episodes)


def test_unbind_refuses_what_bind_refuses_and_drops_nothing_else() -> None:
    # A run id that is no UUID names no run: unbind("run-1") returned [] as if there were simply nothing
    # bound, while bind("run-1", ...) raised; the mistake (an episode id, a name) is now heard from both.
    lam = engine()
    handler = LamarCallbackHandler(lam)
    episode = lam.recall({"project": "trace"}).episode_id
    run = uuid.uuid4()
    handler.bind(str(run), episode)
    for wrong in ("run-1", episode, None, 7):
        with pytest.raises(InvalidArgument, match=r"run_id must be a UUID") as unbound:
            handler.unbind(wrong)
        with pytest.raises(InvalidArgument) as bound:
            handler.bind(wrong, episode)
        assert str(unbound.value) == str(bound.value) and "config={'run_id'" in str(bound.value)
    assert list(handler._pending) == [run]  # the refusals dropped nothing
    assert handler.unbind(uuid.uuid4()) == []  # a run id never bound (or forgotten): nothing waits for it
    assert handler.unbind(str(run)) == [episode] and handler.unbind(run) == []


def test_report_refuses_a_run_id_that_is_neither_an_episode_id_nor_a_uuid_by_what_it_takes() -> None:
    # report("run-1") and report(5) were read as episode ids: the refusal spoke of a missing episode only.
    lam = engine()
    handler = LamarCallbackHandler(lam)
    episode = lam.recall({"project": "trace"}).episode_id
    for wrong in (5, None, 2.5, b"run-1", ""):  # no string, or an empty one: neither kind of id, refused up front
        with pytest.raises(InvalidArgument) as refused:
            handler.report(wrong, Signal.SHIPPED)
        said = str(refused.value)
        assert f"got {wrong!r} ({type(wrong).__name__})" in said
        assert "episode_id that recall() returned" in said and "root run's UUID" in said
        for ask in (handler.episodes, handler.implicit_signals, handler.trace):  # its other ways in by run or episode
            with pytest.raises(InvalidArgument) as asked:
                ask(wrong)
            assert str(asked.value) == said
    with pytest.raises(UnknownEpisode) as unknown:  # a string may be an episode id: only the store can say
        handler.report("run-1", Signal.SHIPPED)
    said = str(unknown.value)
    assert "'run-1' is no UUID, so it was read as an episode id" in said and "report a root run by its UUID" in said
    assert "no episode 'run-1' in store" in said  # the store's own word, with why an episode may be gone
    assert lam.episode(episode).signal is None and lam.pending()[0].episode_id == episode  # nothing was reported
    assert handler.report(episode, Signal.SHIPPED) == [episode] and lam.episode(episode).signal == "shipped"


@pytest.mark.parametrize("limit", [{"max_runs": "10"}, {"max_runs": 0}, {"max_runs": 2.5}, {"max_runs": True},
                                   {"bind_ttl": float("nan")}, {"bind_ttl": -1}, {"bind_ttl": float("inf")},
                                   {"bind_ttl": None}])
def test_bad_limits_are_refused_when_the_handler_is_made(limit: dict[str, Any]) -> None:
    """Inside a run a bad limit fails every callback, quietly: with max_runs="10" no finished run
    was ever forgotten."""
    with pytest.raises(InvalidArgument, match=f"{next(iter(limit))} is how"):
        LamarCallbackHandler(engine(), **limit)


def test_max_runs_bounds_the_finished_runs_kept() -> None:
    handler = LamarCallbackHandler(engine(), max_runs=10)
    for _ in range(30):
        RunnableLambda(lambda x: x).invoke(1, config={"callbacks": [handler]})
    assert len(handler._runs) == 10


class State(LamarState, total=False):
    question: str


def failing_graph(lam: Lamar) -> Any:
    def work(state: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("the build server is down")

    graph = in_line(State, ("recall", recall_node(lam, context={"project": "trace"})), ("work", work))
    return graph.compile()


@pytest.mark.parametrize("outcome", [None, Signal.REVERTED])
def test_a_failed_langgraph_run_leaves_no_pending_episode(outcome: Signal | None) -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, failed_outcome=outcome)
    with pytest.raises(ValueError, match="build server is down"):
        failing_graph(lam).invoke({"question": "q"}, config={"callbacks": [handler]})
    assert lam.stats()["episodes"] == 1 and lam.pending() == []
    (event,) = [e for e in lam.store.read(0) if e.kind == "outcome"]
    if outcome is None:
        assert event.data["expired"] is True and "ValueError" in event.data["reason"]
    else:
        assert event.data["signal"] == "reverted"


async def test_a_failed_async_run_settles_off_the_loop() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam)
    with pytest.raises(ValueError):
        await failing_graph(lam).ainvoke({"question": "q"}, config={"callbacks": [handler]})
    handler.flush()
    assert lam.stats()["episodes"] == 1 and lam.pending() == []
    handler.close()


def test_a_failed_retriever_chain_leaves_no_pending_episode() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam)

    def explode(docs: Any) -> Any:
        raise RuntimeError("the model is down")

    chain = LamarRetriever(lam, k=1, context={"project": "trace"}) | RunnableLambda(explode)
    with pytest.raises(RuntimeError):
        chain.invoke("q", config={"callbacks": [handler]})
    assert lam.stats()["episodes"] == 1 and lam.pending() == []


def test_a_trace_file_that_cannot_be_written_still_settles_the_failed_run(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The trace write fails (its folder is a file); the failed run's episode is expired all
    the same, and the write failure is a logged warning, as it is in async runs."""
    (tmp_path / "not-a-folder").write_text("")
    lam = engine()
    handler = LamarCallbackHandler(lam, trace_path=tmp_path / "not-a-folder" / "traces.jsonl")

    def explode(docs: Any) -> Any:
        raise RuntimeError("the model is down")

    chain = LamarRetriever(lam, k=1, context={"project": "trace"}) | RunnableLambda(explode)
    with pytest.raises(RuntimeError, match="the model is down"):
        chain.invoke("q", config={"callbacks": [handler]})
    assert lam.stats()["episodes"] == 1 and lam.pending() == []
    assert "cannot append a trace" in caplog.text
    assert len(handler.traces()) == 1  # kept in memory all the same


@pytest.mark.parametrize("late", ["report", "areport"])
async def test_a_report_after_a_failed_async_run_meets_its_failed_outcome(late: str) -> None:
    """The failed run's outcome is still queued on the worker (held there by a gate) when the app
    reports: the report waits for it and is refused as a second report, as in a sync run, instead
    of landing first and dropping the failed outcome."""
    lam = engine()
    handler = LamarCallbackHandler(lam, failed_outcome=Signal.REVERTED)
    gate = threading.Event()
    settle = handler._settle_failed

    def held(*args: Any) -> None:
        assert gate.wait(10)
        settle(*args)

    handler._settle_failed = held  # type: ignore[method-assign]

    def explode(docs: Any) -> Any:
        raise RuntimeError("the model is down")

    run_id = uuid.uuid4()
    chain = LamarRetriever(lam, k=1, context={"project": "trace"}) | RunnableLambda(explode)
    with pytest.raises(RuntimeError):
        await chain.ainvoke("q", config={"callbacks": [handler], "run_id": run_id})
    threading.Timer(0.2, gate.set).start()  # the worker gets to the failed outcome only after a while
    with pytest.raises(DuplicateReport, match="reverted"):
        if late == "report":
            handler.report(run_id, Signal.SHIPPED)
        else:
            await handler.areport(run_id, Signal.SHIPPED)
    assert lam.episode(handler.episodes(run_id)[0]).signal == "reverted"
    handler.close()



class _HeldExecutor(concurrent.futures.ThreadPoolExecutor):
    """The handler's worker, on which the first call of `report` or `flush` to wait for the queue stops a
    while between being called and queueing its marker, for `close` to come in between."""

    def __init__(self, reporter: str) -> None:
        super().__init__(1)
        self.reporter, self.entered, self.closed = reporter, threading.Event(), threading.Event()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == self.reporter and not self.entered.is_set():
            self.entered.set()
            self.closed.wait(0.5)  # a close that can come in meanwhile has ended by now
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("call", ["report", "flush"])
def test_a_report_while_another_thread_closes_the_handler_is_taken(call: str) -> None:
    """A server thread reports a run (or flushes) while another closes the handler (a request done
    with it, or a shutdown): the call waits for the worker's queue, and a worker shut down under it
    is no reason to fail; the handler goes on being usable, as `close` says."""
    lam = engine()
    handler = LamarCallbackHandler(lam)
    run_id = uuid.uuid4()
    chain = LamarRetriever(lam, k=1, context={"project": "trace"}) | RunnableLambda(lambda docs: len(docs))
    chain.invoke("q", config={"callbacks": [handler], "run_id": run_id})
    handler._io = held = _HeldExecutor("reporter")
    failures: list[BaseException] = []

    def reporting() -> None:
        try:
            if call == "report":
                handler.report(run_id, Signal.SHIPPED)
            else:
                handler.flush()
        except BaseException as exc:  # noqa: BLE001 - the test asserts there is none
            failures.append(exc)

    reporter = threading.Thread(target=reporting, name="reporter")
    reporter.start()
    assert held.entered.wait(10)
    handler.close()
    held.closed.set()
    reporter.join(10)
    assert failures == []
    assert lam.episode(handler.episodes(run_id)[0]).signal == ("shipped" if call == "report" else None)


def streaming_chain(lam: Lamar) -> Any:
    """A retrieval chain whose model streams its answer word by word."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.output_parsers import StrOutputParser

    model = GenericFakeChatModel(messages=iter(["clear the cache and build again"]))
    lessons = LamarRetriever(lam, k=1, context={"project": "trace"})
    return lessons | RunnableLambda(lambda docs: f"{docs[0].page_content}\nthe build fails") | model | StrOutputParser()


@pytest.mark.parametrize("how", ["close", "break", "aclose"])
async def test_a_stream_closed_early_settles_its_episode_sync_or_async(how: str) -> None:
    """The consumer stops reading after the first chunk: the run never answered, so its episode
    is expired, not left pending for good. Sync, LangChain ends the root run with no error."""
    lam = engine()
    handler = LamarCallbackHandler(lam)
    run_id = uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    if how == "aclose":
        stream = streaming_chain(lam).astream("the build fails", config)
        async for _ in stream:
            break
        await stream.aclose()
        for _ in range(50):  # the loop's finalizer closes the chain's inner generators a moment later
            if handler.traces():
                break
            await asyncio.sleep(0.02)
    elif how == "close":
        sync_stream = streaming_chain(lam).stream("the build fails", config)
        next(sync_stream)
        sync_stream.close()
    else:
        for _ in streaming_chain(lam).stream("the build fails", config):
            break  # the stream is dropped here, and closed
    handler.flush()
    [episode] = handler.episodes(run_id)
    assert lam.pending() == [] and lam.episode(episode).settled == "expired"
    assert handler.implicit_signals(run_id).failed
    assert handler.trace(run_id).metadata["error"].startswith("GeneratorExit")
    handler.report(run_id, Signal.ACCEPTED)  # a late report still replaces the expiry
    assert lam.episode(episode).signal == "accepted"


def test_a_stream_read_to_its_end_stays_open_for_its_outcome() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam)
    run_id = uuid.uuid4()
    chunks = list(streaming_chain(lam).stream("the build fails", {"callbacks": [handler], "run_id": run_id}))
    assert "".join(chunks) == "clear the cache and build again"
    assert [p.episode_id for p in lam.pending()] == handler.episodes(run_id)
    assert not handler.implicit_signals(run_id).failed


def test_a_lone_generator_streamed_and_closed_early_settles_its_episode() -> None:
    """LangChain swallows the GeneratorExit of a lone generator closed early and ends its run as one that stopped
    there, with no part still running: the handler tells them apart by the generator left unfinished."""
    from langchain_core.runnables import RunnableGenerator, RunnableLambda

    def answer(_: Any) -> Any:
        yield "clear the cache"
        yield " and build again"

    def nothing(_: Any) -> Any:
        yield from ()

    lam = engine()
    handler = LamarCallbackHandler(lam)
    closed, whole, empty, by_lambda = (uuid.uuid4() for _ in range(4))
    for run_id in (closed, whole, empty, by_lambda):
        handler.bind(run_id, lam.recall({"project": "trace"}).episode_id)
    stream = RunnableGenerator(answer).stream("the build fails", {"callbacks": [handler], "run_id": closed})
    assert next(stream) == "clear the cache"
    stream.close()
    for _ in RunnableLambda(answer).stream("the build fails", {"callbacks": [handler], "run_id": by_lambda}):
        break  # dropped here, and closed
    assert "".join(RunnableGenerator(answer).stream("x", {"callbacks": [handler], "run_id": whole})) == \
        "clear the cache and build again"
    assert list(RunnableGenerator(nothing).stream("x", {"callbacks": [handler], "run_id": empty})) == []
    handler.flush()
    for run_id in (closed, by_lambda):
        assert lam.episode(handler.episodes(run_id)[0]).settled == "expired"
        assert handler.trace(run_id).metadata["error"].startswith("GeneratorExit")
    assert sorted(p.episode_id for p in lam.pending()) == sorted(handler.episodes(whole) + handler.episodes(empty))
    assert handler.trace(whole).output == "clear the cache and build again"
    assert handler.trace(empty).metadata["error"] == ""


def test_a_run_of_its_own_inside_a_lone_generator_is_not_taken_for_its_close() -> None:
    """A root run ending inside a generator still running (its own callbacks: a root here) is not the stream's."""
    from langchain_core.runnables import RunnableGenerator, RunnableLambda

    lam = engine()
    handler = LamarCallbackHandler(lam)
    inner, outer = uuid.uuid4(), uuid.uuid4()
    handler.bind(inner, lam.recall({"project": "trace"}).episode_id)

    def answer(_: Any) -> Any:
        yield RunnableLambda(str.upper).invoke("clear the cache", {"callbacks": [handler], "run_id": inner})
        yield " and build again"

    assert "".join(RunnableGenerator(answer).stream("x", {"callbacks": [handler], "run_id": outer})) == \
        "CLEAR THE CACHE and build again"
    handler.flush()
    assert [p.episode_id for p in lam.pending()] == handler.episodes(inner)
    assert handler.trace(inner).metadata["error"] == ""


def test_a_stream_never_read_starts_no_run_and_its_bound_episode_waits() -> None:
    """A generator never iterated runs nothing: LangChain starts the run at the first chunk asked for."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    lam = engine()
    handler = LamarCallbackHandler(lam)
    run_id, episode = uuid.uuid4(), lam.recall({"project": "trace"}).episode_id
    handler.bind(run_id, episode)
    model = GenericFakeChatModel(messages=iter(["clear the cache"]))
    model.stream("the build fails", {"callbacks": [handler], "run_id": run_id}).close()
    assert handler.traces() == [] and [p.episode_id for p in lam.pending()] == [episode]
    assert handler.unbind(run_id) == [episode]  # what to settle by hand: lam.expire(episode, ...) or a report
