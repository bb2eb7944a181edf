"""LamarCallbackHandler on a LangGraph graph, an LCEL chain and a create_agent agent."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any, TypedDict

import langsmith
import pytest
import requests
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.tools import ToolException, tool
from requests.adapters import BaseAdapter

from lamar import Experience, InvalidArgument, Lamar, LamarError, Scope, Signal, UnknownEpisode
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler, LamarMiddleware, LamarRetriever
from tests.integrations.langgraph.graphs import in_line


def engine(**tuning: float) -> Lamar:
    lam = Lamar(":memory:", k=2, seed=9, **tuning)
    for project in ("trace", "web"):
        lam.add(Experience(f"the {project} build fails", f"clear the {project} cache", scope=Scope(project=project)))
        lam.add(Experience(f"{project} tests are flaky", "rerun them once", scope=Scope(project=project)))
    return lam


def flaky_build() -> Any:
    """A build tool that fails on its first call and works on the retry."""
    calls = []

    @tool
    def build(target: str) -> str:
        """Build a target."""
        calls.append(target)
        if len(calls) == 1:
            raise RuntimeError("linker crashed")
        return f"built {target}"

    return build


class GraphState(TypedDict, total=False):
    question: str
    lessons: list[Any]
    build: str
    answer: str


def build_graph(retriever: LamarRetriever, chat_model: Any) -> Any:
    build_tool = flaky_build()
    model = chat_model("Cleared the cache; it builds.", "Rerun it.")

    def recall(state: GraphState) -> GraphState:
        return {"lessons": retriever.invoke(state["question"])}

    def act(state: GraphState) -> GraphState:
        try:
            return {"build": build_tool.invoke({"target": "app"})}
        except RuntimeError:
            return {"build": build_tool.invoke({"target": "app"})}  # the same call again: a retry

    def answer(state: GraphState) -> GraphState:
        notes = "\n".join(d.page_content for d in state["lessons"])
        return {"answer": model.invoke(f"{notes}\n{state['question']}").text}

    graph = in_line(GraphState, ("recall", recall), ("act", act), ("answer", answer))
    return graph.compile()


def test_graph_runs_map_to_their_episodes_and_traces_load(tmp_path: Path, chat_model: Any) -> None:
    lam = engine(holdout=1e-9)
    path = tmp_path / "traces.jsonl"
    handler = LamarCallbackHandler(lam, trace_path=path, raise_error=True)
    retriever = LamarRetriever(lamar=lam, k=2)
    runs = {}
    for project in ("trace", "web"):
        run_id = uuid.uuid4()
        result = build_graph(retriever, chat_model).invoke(
            {"question": f"why does the {project} build fail?"},
            config={"callbacks": [handler], "run_id": run_id,
                    "metadata": {"lamar_context": {"project": project}}})
        runs[project] = (run_id, result)

    traces = load_traces(path)  # valid sleep input, one line per root run
    assert [t.id for t in traces] == [str(runs["trace"][0]), str(runs["web"][0])]
    for trace, (project, (run_id, result)) in zip(traces, runs.items()):
        episode_id = result["lessons"][0].metadata["episode_id"]
        assert handler.episodes(run_id) == [episode_id]
        assert trace.episode_id == episode_id
        assert trace.context == {"project": project} == lam.episode(episode_id).context
        assert trace.input == f"why does the {project} build fail?"
        assert trace.attempted == ("build({'target': 'app'})",) * 2
        assert trace.tool_errors == ("build: RuntimeError: linker crashed",)
        assert trace.output == result["answer"]
        assert trace.outcome is None
        signals = handler.implicit_signals(run_id)
        assert (signals.tool_calls, signals.tool_errors, signals.retries, signals.failed) == (2, 1, 1, False)

    assert handler.report(runs["web"][0], Signal.SHIPPED) == handler.episodes(runs["web"][0])
    web_episode = lam.episode(handler.episodes(runs["web"][0])[0])
    assert web_episode.signal == "shipped"
    assert lam.episode(handler.episodes(runs["trace"][0])[0]).reward is None
    assert all(lam.evidence(i).eligible == 1 for i in web_episode.eligible)


def test_an_all_held_out_recall_still_reaches_the_run(chat_model: Any) -> None:
    """No document comes back, yet the episode is the control group: the recall event carries it."""
    lam = engine(holdout=0.999999)
    handler = LamarCallbackHandler(lam, raise_error=True)
    retriever = LamarRetriever(lamar=lam, k=2, context={"project": "trace"})
    run_id = uuid.uuid4()
    result = build_graph(retriever, chat_model).invoke({"question": "q"},
                                                       config={"callbacks": [handler], "run_id": run_id})
    assert result["lessons"] == []
    [episode_id] = handler.episodes(run_id)
    assert len(lam.episode(episode_id).held_out) == 2
    handler.report(str(run_id), Signal.CORRECTED)
    assert lam.episode(episode_id).signal == "corrected"


def test_a_reward_written_as_text_is_that_reward(chat_model: Any) -> None:
    """A reward read from a form is text: "-0.5" was refused as an unknown signal, as `lamar report` took it."""
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    retriever = LamarRetriever(lamar=lam, k=2, context={"project": "trace"})
    run_id = uuid.uuid4()
    build_graph(retriever, chat_model).invoke({"question": "q"}, config={"callbacks": [handler], "run_id": run_id})
    [episode_id] = handler.report(run_id, " -0.5 ")
    assert (lam.episode(episode_id).reward, lam.episode(episode_id).signal) == (-0.5, None)


async def test_concurrent_lcel_chains_keep_their_own_episodes(tmp_path: Path, chat_model: Any) -> None:
    lam = engine(holdout=1e-9)
    path = tmp_path / "traces.jsonl"
    handler = LamarCallbackHandler(lam, trace_path=path, write_on="report", raise_error=True)
    retriever = LamarRetriever(lamar=lam, k=1)
    prompt = ChatPromptTemplate.from_messages([("system", "Lessons:\n{lessons}"), ("human", "{question}")])
    model = chat_model("Answer one.", "Answer two.")
    chain = ({"lessons": retriever | RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs)),
              "question": RunnablePassthrough()} | prompt | model | StrOutputParser())

    ids = [uuid.uuid4(), uuid.uuid4()]
    answers = await asyncio.gather(*(
        chain.ainvoke(f"question about {project}", config={
            "callbacks": [handler], "run_id": run_id, "metadata": {"lamar_context": {"project": project}}})
        for run_id, project in zip(ids, ("trace", "web"))))

    for run_id, project, answer in zip(ids, ("trace", "web"), answers):
        [episode_id] = handler.episodes(run_id)
        assert lam.episode(episode_id).context == {"project": project}
        trace = handler.trace(run_id)
        assert (trace.input, trace.output, trace.episode_id) == (f"question about {project}", answer, episode_id)
        # The model saw exactly the lesson of its own run's episode.
        [injected] = lam.episode(episode_id).injected
        sent = next(m for m in model.received if f"question about {project}" in m[-1].text)
        assert lam.get(injected).render() in sent[0].text

    assert not path.exists()  # write_on="report": nothing is written before its outcome
    await handler.areport(ids[1], Signal.REVERTED)
    assert [(t.id, t.outcome) for t in load_traces(path)] == [(str(ids[1]), "reverted")]
    assert handler.flush() == 1
    assert [t.outcome for t in load_traces(path)] == ["reverted", None]


def test_agent_middleware_episode_reaches_the_handler(chat_model: Any) -> None:
    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam, raise_error=True)

    @tool
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        raise ToolException(f"{env} is locked")

    deploy.handle_tool_error = True
    model = chat_model(AIMessage(content="", tool_calls=[{"name": "deploy", "args": {"env": "prod"}, "id": "c1"}]),
                       "Prod is locked; try later.")
    agent = create_agent(model, [deploy], middleware=[LamarMiddleware(lam, {"project": "web"})])
    run_id = uuid.uuid4()
    result = agent.invoke({"messages": [("user", "ship it")]}, config={"callbacks": [handler], "run_id": run_id})

    assert handler.episodes(run_id) == [result["lamar_episode_id"]]
    trace = handler.trace(run_id)
    assert (trace.input, trace.output) == ("ship it", "Prod is locked; try later.")
    assert trace.tool_errors == ("deploy: prod is locked",)
    assert handler.implicit_signals(result["lamar_episode_id"]).tool_errors == 1
    assert handler.report(result["lamar_episode_id"], "reasked") == [result["lamar_episode_id"]]
    assert handler.trace(run_id).outcome == "reasked"



@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_with_retry_attempts_are_counted_as_retries(mode: str) -> None:
    """LangChain's RunnableRetry marks each attempt after the first with a "retry:attempt:N" tag
    (it sends no retry event); the handler counts those attempts as retries."""
    lam = engine()
    handler = LamarCallbackHandler(lam)
    attempts: list[int] = []

    def flaky(question: str) -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("the model hiccuped")
        return "answer"

    chain = RunnableLambda(flaky).with_retry(stop_after_attempt=3, wait_exponential_jitter=False)
    run_id = uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    result = chain.invoke("q", config) if mode == "invoke" else await chain.ainvoke("q", config)
    handler.flush()
    assert result == "answer" and len(attempts) == 3
    assert handler.implicit_signals(run_id).retries == 2
    assert handler.trace(run_id).metadata["implicit"]["retries"] == 2


def test_an_attempt_that_raised_and_was_retried_leaves_its_episode_expired() -> None:
    """The first attempt recalls, then raises; the retry recalls again and answers. The run's
    outcome belongs to the answer, so only the second episode is the run's: the first is expired
    (its lessons never reached the answer), neither left pending nor credited with the outcome."""
    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam)
    attempts: list[int] = []

    def flaky(docs: Any) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("the model hiccuped")
        return "answer"

    retriever = LamarRetriever(lam, k=2, context={"project": "trace"})
    chain = (retriever | RunnableLambda(flaky)).with_retry(stop_after_attempt=2, wait_exponential_jitter=False)
    run_id = uuid.uuid4()
    assert chain.invoke("the build fails", {"callbacks": [handler], "run_id": run_id}) == "answer"
    first, second = [e for e in lam.store.read(0) if e.kind == "episode"]
    assert handler.episodes(run_id) == [second.data["id"]]
    assert [p.episode_id for p in lam.pending()] == [second.data["id"]]
    assert handler.trace(run_id).episode_id == second.data["id"]
    handler.report(run_id, Signal.SHIPPED)
    assert lam.episode(first.data["id"]).signal is None and lam.episode(first.data["id"]).settled == "expired"
    assert lam.episode(second.data["id"]).signal == "shipped"

@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
async def test_with_fallbacks_is_one_turn_reported_to_the_attempt_that_answered(mode: str, tmp_path: Path) -> None:
    """RunnableWithFallbacks hands each attempt the caller's config, so LangChain starts every
    attempt with no parent: the turn is still one root run, the failed attempt's episode expires,
    and the outcome goes to the episode of the attempt that answered."""
    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam, tmp_path / "traces.jsonl", raise_error=True)

    def down(docs: Any) -> str:
        raise ConnectionError("the primary model is down")

    retriever = LamarRetriever(lam, k=2, context={"project": "trace"})
    chain = (retriever | RunnableLambda(down)).with_fallbacks([retriever | RunnableLambda(lambda docs: "answer")])
    run_id = uuid.uuid4()
    config: Any = {"callbacks": [handler], "run_id": run_id}
    if mode == "invoke":
        assert chain.invoke("the build fails", config) == "answer"
    elif mode == "ainvoke":
        assert await chain.ainvoke("the build fails", config) == "answer"
    elif mode == "stream":
        assert list(chain.stream("the build fails", config)) == ["answer"]
    else:
        assert [chunk async for chunk in chain.astream("the build fails", config)] == ["answer"]
    handler.flush()
    failed, answered = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
    assert handler.episodes(run_id) == [answered]
    assert handler.report(run_id, Signal.SHIPPED) == [answered]
    assert lam.episode(failed).signal is None and lam.episode(failed).settled == "expired"
    assert lam.episode(answered).signal == "shipped"
    assert [t.episode_id for t in load_traces(tmp_path / "traces.jsonl")] == [answered]  # one trace, the turn's



@pytest.mark.parametrize("shape", ["inside-a-step", "straight-from-the-root"])
@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_nested_run_given_callbacks_of_its_own_is_a_root_run_of_its_own(shape: str, mode: str) -> None:
    """Code inside a run that starts another with `config={"callbacks": [...]}` starts a new
    root run (LangChain gives it no parent): it keeps its own episode, trace and run id, and
    the run around it does not take them."""
    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam, raise_error=True)
    inner_id, outer_id = uuid.uuid4(), uuid.uuid4()
    inner = LamarRetriever(lam, k=1, context={"project": "trace"}) | RunnableLambda(lambda docs: len(docs))

    def call(question: str) -> int:
        return inner.invoke(question, {"callbacks": [handler], "run_id": inner_id})

    async def acall(question: str) -> int:
        return await inner.ainvoke(question, {"callbacks": [handler], "run_id": inner_id})

    step = RunnableLambda(call, afunc=acall)
    outer = step if shape == "straight-from-the-root" else RunnablePassthrough() | step
    config: Any = {"callbacks": [handler], "run_id": outer_id}
    assert (outer.invoke("q", config) if mode == "invoke" else await outer.ainvoke("q", config)) == 1
    handler.flush()
    [episode] = handler.episodes(inner_id)
    assert handler.report(inner_id, Signal.SHIPPED) == [episode] and lam.episode(episode).signal == "shipped"
    assert handler.trace(inner_id).episode_id == episode
    with pytest.raises(UnknownEpisode, match="recalled no Lamar episode"):
        handler.report(outer_id, Signal.SHIPPED)  # the outer run recalled nothing itself
    assert handler.trace(outer_id).episode_id is None


def test_renamed_fallbacks_are_still_one_turn() -> None:
    """A renamed `with_fallbacks` hands its attempts its name with its config: still one run."""
    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam, raise_error=True)

    def down(docs: Any) -> str:
        raise ConnectionError("the primary model is down")

    retriever = LamarRetriever(lam, k=2, context={"project": "trace"})
    chain = (retriever | RunnableLambda(down)).with_fallbacks(
        [retriever | RunnableLambda(lambda docs: "answer")]).with_config(run_name="answer")
    run_id = uuid.uuid4()
    assert chain.invoke("the build fails", {"callbacks": [handler], "run_id": run_id}) == "answer"
    failed, answered = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
    assert handler.report(run_id, Signal.SHIPPED) == [answered] and len(handler.traces()) == 1
    assert lam.episode(failed).settled == "expired"

def test_bind_and_the_errors_of_report() -> None:
    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam, raise_error=True)
    rec = lam.recall({"project": "trace"})
    run_id = uuid.uuid4()
    handler.bind(run_id, rec.episode_id)  # before the run, by its fixed id
    chain = RunnableLambda(lambda x: x * 2)
    assert chain.invoke(2, config={"callbacks": [handler], "run_id": run_id}) == 4
    assert handler.trace(run_id).episode_id == rec.episode_id
    assert handler.trace(run_id).context == {"project": "trace"}

    plain = uuid.uuid4()
    chain.invoke(1, config={"callbacks": [handler], "run_id": plain})
    with pytest.raises(UnknownEpisode, match="recalled no Lamar episode"):
        handler.report(plain, Signal.SHIPPED)
    with pytest.raises(UnknownEpisode, match="saw no run") as unseen:  # a run it was not attached to
        handler.report(uuid.uuid4(), Signal.SHIPPED)
    # The message says what to do: attach the handler to the run, or report the episode itself.
    assert 'config={"callbacks": [handler]' in str(unseen.value) and "lam.report(episode_id" in str(unseen.value)
    with pytest.raises(ValueError):
        handler.report(run_id, 3.0)  # not a reward: rejected before anything is reported
    assert lam.episode(rec.episode_id).reward is None
    handler.report(run_id, 0.5)
    assert lam.episode(rec.episode_id).reward == 0.5


class RecordingAdapter(BaseAdapter):
    """The HTTP transport under a real `langsmith.Client`: records requests, answers 200."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.sent.append(request)
        response = requests.Response()
        response.status_code, response._content = 200, b"{}"
        response.headers["Content-Type"] = "application/json"
        response.url, response.request = request.url, request
        return response

    def close(self) -> None:
        pass


def _mirrored(transport: Any) -> tuple[Lamar, LamarCallbackHandler, uuid.UUID, langsmith.Client]:
    """An engine, a handler that mirrors outcomes to a LangSmith client sending through `transport`,
    the id of one retriever run it saw, and the client."""
    lam = engine(holdout=1e-9)
    client = langsmith.Client(api_url="https://langsmith.invalid", api_key="test", info={},
                              auto_batch_tracing=False)
    client.session.mount("https://", transport)
    handler = LamarCallbackHandler(lam, raise_error=True, mirror_to_langsmith=True, langsmith_client=client)
    run_id = uuid.uuid4()
    LamarRetriever(lamar=lam, context={"project": "web"}).invoke("q", config={"callbacks": [handler]}, run_id=run_id)
    return lam, handler, run_id, client


@pytest.mark.filterwarnings("ignore::langsmith.utils.LangSmithWarning")
def test_outcomes_mirror_to_langsmith_feedback_when_asked() -> None:
    transport = RecordingAdapter()
    lam, handler, run_id, client = _mirrored(transport)

    handler.report(run_id, Signal.ACCEPTED)

    [request] = [r for r in transport.sent if r.url.endswith("/feedback")]
    body = json.loads(request.body)
    assert (body["run_id"], body["key"], body["score"], body["value"]) == (
        str(run_id), "lamar_outcome", 0.6, "accepted")
    quiet = LamarCallbackHandler(lam, raise_error=True, langsmith_client=client)  # mirroring is off by default
    other = uuid.uuid4()
    LamarRetriever(lamar=lam, context={"project": "web"}).invoke("q", config={"callbacks": [quiet]}, run_id=other)
    quiet.report(other, Signal.SHIPPED)
    assert len(transport.sent) == 1


class UnreachableAdapter(BaseAdapter):
    """The HTTP transport of a LangSmith that cannot be reached: every request fails to connect."""

    def __init__(self) -> None:
        super().__init__()
        self.tries = 0

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        self.tries += 1
        raise requests.ConnectionError("connection refused")

    def close(self) -> None:
        pass


@pytest.mark.filterwarnings("ignore::langsmith.utils.LangSmithWarning")
def test_a_langsmith_that_cannot_be_reached_costs_the_mirror_not_the_report(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    # The client retries 10 times by default, sleeping 1 + 2 + ... + 256 seconds: the app's report
    # waited minutes, then raised though Lamar had recorded the outcome, so a retry met DuplicateReport.
    naps: list[float] = []
    monkeypatch.setattr(langsmith.client.time, "sleep", naps.append)
    transport = UnreachableAdapter()
    lam, handler, run_id, _ = _mirrored(transport)

    with caplog.at_level("WARNING", logger="lamar_langchain"):
        [episode] = handler.report(run_id, Signal.ACCEPTED)

    assert lam.episode(episode).signal == Signal.ACCEPTED
    assert transport.tries <= 2 and sum(naps) < 5
    [warning] = [r.getMessage() for r in caplog.records if "mirror" in r.getMessage()]
    assert f"recorded the outcome of run {run_id} but could not mirror it to LangSmith" in warning


def test_episode_written_to_graph_state_by_lamar_langgraph_recall_node() -> None:
    from lamar_langgraph import recall_node

    class State(TypedDict, total=False):
        lamar_context: dict[str, str]
        lamar_episode_id: str
        answer: str

    lam = engine(holdout=1e-9)
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = in_line(State, ("recall", recall_node(lam, turn=None)), ("answer", lambda state: {"answer": "done"}))
    run_id = uuid.uuid4()
    result = graph.compile().invoke({"lamar_context": {"project": "web"}},
                                    config={"callbacks": [handler], "run_id": run_id})
    assert handler.episodes(run_id) == [result["lamar_episode_id"]]
    assert handler.trace(run_id).context == {"project": "web"}


def test_a_store_down_when_the_run_ends_costs_the_trace_its_context_not_the_trace(
        tmp_path: Path, postgres_url: str) -> None:
    """The run's context is read from the store when no recall event carried it (recall_node).
    With the server unreachable by then, the trace is still written, naming its episode and the
    run's error, and the handler's own records stay readable: it fails open."""
    import contextlib

    from lamar.store.postgres import PostgresStore
    from lamar_langgraph import recall_node
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    class State(TypedDict, total=False):
        lamar_episode_id: str

    namespace = unique_namespace()
    store = PostgresStore(namespace_url(postgres_url, namespace), pool_size=1, timeout=0.5)
    held = contextlib.ExitStack()

    def fails_as_the_server_goes(state: State) -> State:
        held.enter_context(store.connections.connection())  # the pool's one connection: none left
        raise RuntimeError("the agent failed")

    try:
        lam = Lamar(store, k=2, seed=9)
        lam.add(Experience("the build fails", "clear the cache"))
        handler = LamarCallbackHandler(lam, trace_path=tmp_path / "traces.jsonl")
        graph = in_line(State,
                        ("recall", recall_node(lam, context={"project": "web"}, turn=None)),
                        ("work", fails_as_the_server_goes))
        run_id = uuid.uuid4()
        with pytest.raises(RuntimeError, match="the agent failed"):
            graph.compile().invoke({}, config={"callbacks": [handler], "run_id": run_id})
        (episode,) = handler.episodes(run_id)
        [trace] = load_traces(tmp_path / "traces.jsonl")
        assert (trace.episode_id, trace.metadata["error"]) == (episode, "RuntimeError: the agent failed")
        assert [t.id for t in handler.traces()] == [str(run_id)]
        held.close()
        lam.close()
    finally:
        held.close()
        drop_namespaces(postgres_url, namespace)


def test_bad_arguments_to_the_langchain_pieces_are_lamar_errors(chat_model: Any) -> None:
    """A caller catching LamarError catches every argument the LangChain pieces refuse, and each
    message says what a valid one looks like."""
    from lamar import InvalidArgument

    lam = engine()
    with pytest.raises(InvalidArgument, match="'end' or 'report'"):
        LamarCallbackHandler(lam, write_on="later")  # type: ignore[arg-type]
    handler = LamarCallbackHandler(lam)
    with pytest.raises(InvalidArgument, match="must be a UUID"):
        handler.bind("run-7", "ep_1")
    with pytest.raises(InvalidArgument, match="a whole number >= 0"):
        LamarRetriever(lamar=lam, k=2).invoke("why did CI fail?", k=-1)
    with pytest.raises(InvalidArgument, match="no 'lamar_episode_id' in this result"):
        LamarMiddleware(lam).report({"messages": []}, Signal.SHIPPED)
    assert lam.stats()["episodes"] == 0


@pytest.mark.parametrize("make", [
    lambda: LamarMiddleware("lessons.db"),
    lambda: LamarMiddleware(engine(), k=-1),
    lambda: LamarMiddleware(engine(), outcome="corrected"),  # type: ignore[arg-type]
    lambda: LamarMiddleware(engine(), silent_outcome="great"),
    lambda: LamarMiddleware(engine(), failed_outcome=3.0),
    lambda: LamarCallbackHandler("lessons.db"),
    lambda: LamarCallbackHandler(engine(), failed_outcome="great"),
])
def test_the_middleware_and_the_handler_refuse_bad_arguments_when_made(make: Any) -> None:
    """Refused later, each would break an agent's turn (`k`, `silent_outcome`), or be swallowed
    inside the callbacks and leave failed runs pending (`failed_outcome`, a path for the engine)."""
    from lamar import LamarError

    with pytest.raises(LamarError, match="Lamar engine first|whole number|function|failed_outcome|silent_outcome"):
        make()


def test_a_failed_run_the_handler_cannot_settle_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    from lamar import StoreError

    lam = engine()
    handler = LamarCallbackHandler(lam)
    chain = LamarRetriever(lamar=lam, k=2) | RunnableLambda(lambda docs: 1 / 0)

    def store_down(*args: Any, **kwargs: Any) -> bool:
        raise StoreError("the store is read-only")

    lam.expire = store_down  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="lamar_langchain.callbacks"), pytest.raises(ZeroDivisionError):
        chain.invoke("why did CI fail?", config={"callbacks": [handler]})
    assert "could not settle episode" in caplog.text and "read-only" in caplog.text
    assert len(lam.pending()) == 1  # the run's own error surfaced; the episode waits, and a warning says so


def test_the_trace_of_a_run_still_going_is_refused_with_a_lamar_error(tmp_path: Path) -> None:
    # Asked from inside the run (a node, a tool): what the handler refuses is a LamarError, as the
    # docs promise of every refusal, not a bare ValueError.
    handler = LamarCallbackHandler(engine(), trace_path=tmp_path / "traces.jsonl")
    seen: list[BaseException] = []

    def inside(text: str, config: Any) -> str:
        try:
            handler.trace(config["metadata"]["root"])
        except LamarError as exc:
            seen.append(exc)
        return text

    run_id = uuid.uuid4()
    RunnableLambda(inside).invoke("go", config={"callbacks": [handler], "run_id": run_id,
                                                "metadata": {"root": str(run_id)}})
    assert len(seen) == 1 and isinstance(seen[0], InvalidArgument) and "has not ended yet" in str(seen[0])
    assert handler.trace(run_id).output == "go"  # once it has ended, the trace is there



@pytest.mark.parametrize("cut", range(0, 40, 3))
def test_a_credential_cut_by_the_trace_clip_leaves_none_of_it_in_the_file(tmp_path: Path, cut: int) -> None:
    """Each trace field is cut to a length before the trace file scrubs it: a cut inside a
    credential must not leave the file a prefix too short for the scrubber to recognise."""
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    handler = LamarCallbackHandler(engine(), tmp_path / "t.jsonl")

    @tool
    def fetch(url: str) -> str:
        """Fetch a page."""
        return "Error: 401 for token " + key + " " + "x" * 2000

    long_input = "x" * (4000 - 7 - cut) + " token " + key + " tail"
    RunnableLambda(lambda q: fetch.invoke({"url": "y" * (1000 - 14 - cut) + " " + key}) and q).invoke(
        long_input, config={"callbacks": [handler]})
    written = (tmp_path / "t.jsonl").read_text()
    assert key[:8] not in written


def test_a_long_context_read_back_from_an_episode_is_clipped_in_the_trace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log written before contexts were capped holds long ones; the trace keeps 4 000 characters."""
    monkeypatch.setattr("lamar.experience.MAX_CONTEXT_CHARS", 10**6)  # as a version without the cap wrote it
    lam = engine(holdout=1e-9)
    notes = "the build log says " + "linker crashed " * 4000
    handler = LamarCallbackHandler(lam, trace_path=tmp_path / "t.jsonl")
    retriever = LamarRetriever(lamar=lam, k=2, context={"project": "trace", "notes": notes})
    retriever.invoke("why does the trace build fail?", config={"callbacks": [handler]})
    (trace,) = load_traces(tmp_path / "t.jsonl")
    assert lam.episode(trace.episode_id or "").context["notes"] == notes
    assert trace.context["project"] == "trace" and len(trace.context["notes"]) == 4000
    assert trace.context["notes"] == notes[:4000 - len(" [...clipped]")] + " [...clipped]"
