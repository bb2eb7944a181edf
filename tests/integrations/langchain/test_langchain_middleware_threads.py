"""LamarMiddleware on checkpointed threads, with a runtime context, in streams and when a run fails."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from lamar import Experience, InvalidArgument, InvalidContext, Lamar, Scope
from lamar.recall import FENCE_OPEN
from lamar_langchain import LamarCallbackHandler, LamarMiddleware

from .conftest import RecordingChatModel


@dataclasses.dataclass
class Ctx:
    project: str
    language: str


def engine(seed: int = 4) -> tuple[Lamar, list[str]]:
    lam = Lamar(":memory:", k=3, seed=seed, holdout=1e-9)
    ids = [lam.add(Experience("the Xcode build fails", "clear DerivedData", scope=Scope(project="trace"))),
           lam.add(Experience("a package does not resolve", "reset the caches", scope=Scope(language="swift")))]
    return lam, ids


def test_runtime_context_is_read_like_recall_node(chat_model: Any) -> None:
    lam, ids = engine()
    model = chat_model("ok")
    agent = create_agent(model, [], middleware=[LamarMiddleware(lam)], context_schema=Ctx)
    result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]},
                          context=Ctx(project="trace", language="swift"))
    episode = lam.episode(result["lamar_episode_id"])
    assert episode.context == {"project": "trace", "language": "swift"}
    assert sorted(episode.eligible) == sorted(ids)
    assert all(lam.get(i).render() in model.received[0][0].text for i in episode.injected)


@dataclasses.dataclass
class AppCtx:
    """A runtime context as applications write them: a connection beside the strings."""

    project: str
    db: Any = dataclasses.field(default_factory=threading.Lock)  # cannot be copied, like a connection


@dataclasses.dataclass
class AppCtxForLamar(AppCtx):
    lamar_context: dict[str, str] = dataclasses.field(default_factory=dict)


def test_a_runtime_context_holding_a_connection_is_never_copied(chat_model: Any) -> None:
    lam, ids = engine()
    message = {"messages": [{"role": "user", "content": "hi"}]}
    whole = create_agent(chat_model("ok"), [], middleware=[LamarMiddleware(lam)], context_schema=AppCtx)
    with pytest.raises(InvalidContext, match=r"'db' holds a lock, not a string: give it a 'lamar_context' field"):
        whole.invoke(message, context=AppCtx(project="trace"))
    named = create_agent(chat_model("ok"), [], middleware=[LamarMiddleware(lam)], context_schema=AppCtxForLamar)
    result = named.invoke(message, context=AppCtxForLamar(project="trace", lamar_context={"project": "trace"}))
    assert lam.episode(result["lamar_episode_id"]).context == {"project": "trace"}
    assert lam.episode(result["lamar_episode_id"]).eligible == [ids[0]]


@dataclasses.dataclass
class ChatCtx(Ctx):
    """A runtime context that also carries the user's pasted log, read whole as Lamar's context."""

    pasted: str = ""


def test_a_long_text_in_a_runtime_context_read_whole_is_left_out_and_the_turn_goes_on(chat_model: Any) -> None:
    lam, ids = engine()
    model = chat_model("ok")
    agent = create_agent(model, [], middleware=[LamarMiddleware(lam)], context_schema=ChatCtx)
    with pytest.warns(UserWarning, match=r"left out 'pasted' \(5,000,000 characters\).*'lamar_context' field"):
        result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]},
                              context=ChatCtx(project="trace", language="swift", pasted="x" * 5_000_000))
    episode = lam.episode(result["lamar_episode_id"])
    assert episode.context == {"project": "trace", "language": "swift"}
    assert sorted(episode.injected) == sorted(ids)


def test_warns_once_when_an_empty_context_can_match_nothing(chat_model: Any) -> None:
    lam, _ = engine()
    middleware = LamarMiddleware(lam)
    agent = create_agent(chat_model("a", "b"), [], middleware=[middleware])
    with pytest.warns(UserWarning, match="every lesson is scoped"):
        first = agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.invoke({"messages": [{"role": "user", "content": "again"}]})
    assert lam.episode(first["lamar_episode_id"]).eligible == []


def test_outcome_arrives_with_the_next_message_on_a_checkpointed_thread(chat_model: Any) -> None:
    """Three turns of one thread: every episode is reported, none is orphaned."""
    lam, _ = engine()
    agent = create_agent(chat_model("one", "two", "three"), [], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, silent_outcome="accepted")])
    config = {"configurable": {"thread_id": "t1"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "fix the build"}]}, config)
    second = agent.invoke({"messages": [{"role": "user", "content": "that broke it"}],
                           "lamar_outcome": "corrected"}, config)
    third = agent.invoke({"messages": [{"role": "user", "content": "thanks, next"}]}, config)
    episodes = [first["lamar_episode_id"], second["lamar_episode_id"], third["lamar_episode_id"]]
    assert len(set(episodes)) == 3
    assert lam.episode(episodes[0]).signal == "corrected"  # sent with the second message
    assert lam.episode(episodes[1]).signal == "accepted"  # the third message said nothing: silent_outcome
    assert [p.episode_id for p in lam.pending()] == [episodes[2]]  # only the open turn waits
    assert third.get("lamar_outcome") is None  # an outcome counts for one turn only


def test_without_a_silent_outcome_the_previous_turn_stays_pending(chat_model: Any) -> None:
    lam, _ = engine()
    agent = create_agent(chat_model("one", "two"), [], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"})])
    config = {"configurable": {"thread_id": "t2"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "a"}]}, config)
    second = agent.invoke({"messages": [{"role": "user", "content": "b"}]}, config)
    assert [p.episode_id for p in lam.pending()] == [first["lamar_episode_id"], second["lamar_episode_id"]]


def test_lesson_text_stays_out_of_streamed_updates(chat_model: Any) -> None:
    lam, _ = engine()
    model = chat_model("ok")
    agent = create_agent(model, [], middleware=[LamarMiddleware(lam, {"project": "trace"})])
    chunks = list(agent.stream({"messages": [{"role": "user", "content": "hi"}]}, stream_mode="updates"))
    assert FENCE_OPEN in model.received[0][0].text  # the model saw the lessons
    assert chunks and all(FENCE_OPEN not in repr(chunk) for chunk in chunks)
    assert all("lamar_lessons" not in repr(chunk) for chunk in chunks)


@tool
def deploy(target: str) -> str:
    """Deploy a target."""
    raise RuntimeError("the deploy server is down")


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_run_that_raises_leaves_no_pending_episode(chat_model: Any, mode: str) -> None:
    lam, _ = engine()
    call = AIMessage(content="", tool_calls=[{"name": "deploy", "args": {"target": "app"}, "id": "c1"}])
    agent = create_agent(chat_model(call, "done"), [deploy],
                         middleware=[LamarMiddleware(lam, {"project": "trace"})])
    agent = agent.with_config({"recursion_limit": 10})
    with pytest.raises(RuntimeError, match="deploy server is down"):
        if mode == "sync":
            agent.invoke({"messages": [{"role": "user", "content": "ship it"}]})
        else:
            await agent.ainvoke({"messages": [{"role": "user", "content": "ship it"}]})
    assert lam.stats()["episodes"] == 1
    assert lam.pending() == []
    (outcome,) = [e for e in lam.store.read(0) if e.kind == "outcome"]
    assert outcome.data["expired"] is True and "RuntimeError" in outcome.data["reason"]



@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_failed_turn_is_not_given_the_silent_outcome_by_the_next_one(chat_model: Any, mode: str) -> None:
    """A turn whose tool raised is settled as expired; the next message on the thread brings no
    outcome, and the silent default must not turn that failure into an accepted turn."""
    lam, _ = engine()
    call = AIMessage(content="", tool_calls=[{"name": "deploy", "args": {"target": "app"}, "id": "c1"}])
    agent = create_agent(chat_model(call, "retried fine", "thanks"), [deploy], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, silent_outcome="accepted")])
    thread = {"configurable": {"thread_id": "t1"}}

    async def turn(message: dict[str, Any]) -> dict[str, Any]:
        if mode == "sync":
            return agent.invoke(message, thread)  # type: ignore[no-any-return]
        return await agent.ainvoke(message, thread)  # type: ignore[no-any-return]

    with pytest.raises(RuntimeError, match="deploy server is down"):
        await turn({"messages": [{"role": "user", "content": "ship it"}]})
    failed = agent.get_state(thread).values["lamar_episode_id"]
    second = await turn({"messages": [{"role": "user", "content": "try again"}]})
    assert lam.episode(failed).signal is None and lam.episode(failed).settled == "expired"
    await turn({"messages": [{"role": "user", "content": "thanks"}]})
    assert lam.episode(second["lamar_episode_id"]).signal == "accepted"

@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_failed_run_on_a_store_gone_away_logs_one_warning_not_a_traceback(
        chat_model: Any, tmp_path: Any, mode: str, caplog: pytest.LogCaptureFixture) -> None:
    """The store goes away while the tool runs, so the failed run's episode cannot be expired: the
    tool's error still propagates, and the operator reads one line naming the episode and why."""
    path = tmp_path / "lessons.db"
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("the Xcode build fails", "clear DerivedData", scope=Scope(project="trace")))

    @tool
    def wipe(target: str) -> str:
        """Deploy a target (and lose Lamar's store on the way)."""
        path.unlink()
        raise RuntimeError("the deploy server is down")

    call = AIMessage(content="", tool_calls=[{"name": "wipe", "args": {"target": "app"}, "id": "c1"}])
    agent = create_agent(chat_model(call, "done"), [wipe], middleware=[LamarMiddleware(lam, {"project": "trace"})])
    message = {"messages": [{"role": "user", "content": "ship it"}]}
    with caplog.at_level("WARNING", logger="lamar_langchain.middleware"), \
            pytest.raises(RuntimeError, match="deploy server is down"):
        if mode == "sync":
            agent.invoke(message)
        else:
            await agent.ainvoke(message)
    (record,) = [r for r in caplog.records if r.name == "lamar_langchain.middleware"]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert "could not settle episode ep_" in record.getMessage() and "deleted" in record.getMessage()


def test_a_store_that_cannot_be_written_costs_the_lessons_not_the_turn(chat_model: Any, tmp_path: Any,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    import sqlite3

    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "s.db"
    lam = Lamar(SqliteStore(path, timeout=0.05), seed=1)
    lam.add(Experience("the Xcode build fails", "clear DerivedData", scope=Scope(project="trace")))
    model = chat_model("Answered without lessons.")
    agent = create_agent(model, [], middleware=[LamarMiddleware(lam, {"project": "trace"})])
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert result["messages"][-1].text == "Answered without lessons."
    assert result["lamar_episode_id"] is None and FENCE_OPEN not in model.received[0][0].text
    assert "could not recall" in caplog.text
    assert lam.stats()["episodes"] == 0


def test_a_previous_episode_that_sleep_compacted_costs_nothing(chat_model: Any,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    # The app reported turn 1 itself, then a nightly sleep compacted it: turn 2's report of it
    # finds no episode, which is the same as "reported already".
    lam, _ = engine()
    agent = create_agent(chat_model("one", "two"), [], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, silent_outcome="accepted")])
    config = {"configurable": {"thread_id": "t1"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "fix the build"}]}, config)
    lam.report(first["lamar_episode_id"], "shipped")
    report = lam.sleep(keep_last=0)
    assert lam.apply(report, only=[p.id for p in report.of_kind("compact")]).applied
    caplog.set_level("INFO", logger="lamar_langchain")
    second = agent.invoke({"messages": [{"role": "user", "content": "thanks"}]}, config)
    assert second["messages"][-1].text == "two" and second["lamar_episode_id"] != first["lamar_episode_id"]
    assert "not in the store :memory:" in caplog.text and "sleep compacted it (nothing is lost)" in caplog.text


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_an_outcome_sent_to_a_worker_on_another_store_is_named_lost_in_the_log(
        chat_model: Any, caplog: pytest.LogCaptureFixture, mode: str) -> None:
    # Two workers share the thread's checkpointer, and the second opened another store (another namespace, its
    # own file): the outcome of the first worker's turn reaches no store, and the log must say so at WARNING.
    (recalled, _), (other, _) = engine(), engine()
    saver, config = InMemorySaver(), {"configurable": {"thread_id": "two-workers"}}

    def worker(lam: Lamar, reply: str) -> Any:
        return create_agent(chat_model(reply), [], checkpointer=saver,
                            middleware=[LamarMiddleware(lam, {"project": "trace"})])

    first = worker(recalled, "one").invoke({"messages": [{"role": "user", "content": "fix the build"}]}, config)
    second = worker(other, "two")
    message = {"messages": [{"role": "user", "content": "that broke it"}], "lamar_outcome": "corrected"}
    with caplog.at_level("WARNING", logger="lamar_langchain"):
        await second.ainvoke(message, config) if mode == "ainvoke" else second.invoke(message, config)
    assert recalled.episode(first["lamar_episode_id"]).signal is None
    warned, = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert first["lamar_episode_id"] in warned and "another store" in warned


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_broken_store_costs_the_lessons_not_the_turn_with_no_context(chat_model: Any, tmp_path: Any,
                                                                            mode: str) -> None:
    path = tmp_path / "lessons.json"
    lam = Lamar(str(path))
    lam.add(Experience("a deploy times out", "raise the grace period", scope=Scope(project="shop")))
    with path.open("a") as out:
        out.write("{garbage\n")  # the store goes bad under the running app
    agent = create_agent(chat_model("ok"), [], middleware=[LamarMiddleware(lam)])
    message = {"messages": [{"role": "user", "content": "hi"}]}
    result = agent.invoke(message) if mode == "invoke" else await agent.ainvoke(message)
    assert result["messages"][-1].text == "ok" and result["lamar_episode_id"] is None


def test_reporting_a_run_whose_recall_failed_open_says_so(chat_model: Any, tmp_path: Any) -> None:
    # After a store outage the app's outcome code reports the result as usual: the middleware is in the list,
    # its recall failed open, and the refusal must say that rather than ask whether it is in the list.
    path = tmp_path / "lessons.json"
    lam = Lamar(str(path))
    lam.add(Experience("a deploy times out", "raise the grace period", scope=Scope(project="shop")))
    with path.open("a") as out:
        out.write("{garbage\n")
    middleware = LamarMiddleware(lam, {"project": "shop"})
    result = create_agent(chat_model("ok"), [], middleware=[middleware]).invoke(
        {"messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(InvalidArgument) as refused:
        middleware.report(result, "accepted")
    said = str(refused.value)
    assert "middleware list" not in said, said
    assert "its recall failed" in said and "result['lamar_episode_id'] is None" in said
    with pytest.raises(InvalidArgument, match="middleware list"):
        middleware.report({"messages": []}, "accepted")  # no key at all: the middleware never ran


@pytest.mark.parametrize("lamar_first", [True, False], ids=["lamar-first", "lamar-after-retry"])
def test_a_tool_call_retried_to_success_leaves_the_run_open_when_lamar_is_listed_first(
        chat_model: Any, lamar_first: bool) -> None:
    """Listed before ToolRetryMiddleware, LamarMiddleware sees only what the retry lets through:
    a call that failed once and succeeded on its retry leaves the episode for the app to report.
    Listed after it, Lamar sees the first failure and settles the run as failed (the documented
    limitation: no hook runs when an agent run ends by raising, so Lamar cannot wait for the retry)."""
    from langchain.agents.middleware import ToolRetryMiddleware

    attempts: list[str] = []

    @tool
    def flaky_deploy(target: str) -> str:
        """Deploy a target; the first attempt fails."""
        attempts.append(target)
        if len(attempts) == 1:
            raise ConnectionError("deploy server hiccup")
        return f"deployed {target}"

    lam, _ = engine()
    lamar = LamarMiddleware(lam, {"project": "trace"}, failed_outcome=-1.0)
    retry = ToolRetryMiddleware(max_retries=1, initial_delay=0.0, jitter=False)
    call = AIMessage(content="", tool_calls=[{"name": "flaky_deploy", "args": {"target": "app"}, "id": "c1"}])
    agent = create_agent(chat_model(call, "done"), [flaky_deploy],
                         middleware=[lamar, retry] if lamar_first else [retry, lamar])
    result = agent.invoke({"messages": [{"role": "user", "content": "ship it"}]})
    assert attempts == ["app", "app"] and result["messages"][-1].content == "done"
    episode = result["lamar_episode_id"]
    if lamar_first:
        assert [p.episode_id for p in lam.pending()] == [episode]
        lamar.report(result, "shipped")
        assert lam.pending() == []
    else:
        assert lam.pending() == []
        (outcome,) = [e for e in lam.store.read(0) if e.kind == "outcome"]
        assert outcome.data["reward"] == -1.0


def test_an_outcome_that_is_no_outcome_costs_its_report_not_the_thread(
        chat_model: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The input is stored in the thread before the middleware reads it: raising on it would fail
    every later turn of the thread, each finding the same stored value."""
    lam, _ = engine()
    agent = create_agent(chat_model("one", "two", "three"), [], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, silent_outcome="accepted")])
    thread = {"configurable": {"thread_id": "ticket-9"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "the build fails"}]}, thread)
    with caplog.at_level("WARNING", logger="lamar_langchain.middleware"):
        second = agent.invoke({"messages": [{"role": "user", "content": "great"}], "lamar_outcome": "great"},
                              thread)
    third = agent.invoke({"messages": [{"role": "user", "content": "and now?"}]}, thread)
    assert [r["messages"][-1].content for r in (second, third)] == ["two", "three"]
    assert "ignored the outcome 'great'" in caplog.text and first["lamar_episode_id"] in caplog.text
    assert lam.episode(first["lamar_episode_id"]).signal is None  # not taken for the silent acceptance
    assert lam.episode(second["lamar_episode_id"]).signal == "accepted"



def test_an_outcome_function_that_raises_costs_its_report_not_the_turn(
        chat_model: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The app's outcome function runs inside the agent's turn: one that raises on a message it did
    not expect (content blocks, not text) costs that outcome, never the user's turn, and its
    silence is not taken for the silent acceptance."""
    lam, _ = engine()

    def corrected(state: Any, runtime: Any) -> str | None:
        return "corrected" if "still" in state["messages"][-1].content.lower() else None

    agent = create_agent(chat_model("one", "two", "three"), [], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, outcome=corrected,
                                                     silent_outcome="accepted")])
    thread = {"configurable": {"thread_id": "ticket-10"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "the build fails"}]}, thread)
    blocks = [{"type": "text", "text": "it still fails"}]
    with caplog.at_level("WARNING", logger="lamar_langchain.middleware"):
        second = agent.invoke({"messages": [{"role": "user", "content": blocks}]}, thread)
    third = agent.invoke({"messages": [{"role": "user", "content": "it still fails"}]}, thread)
    assert [r["messages"][-1].content for r in (second, third)] == ["two", "three"]
    (record,) = [r for r in caplog.records if r.name == "lamar_langchain.middleware"]
    assert "AttributeError" in record.getMessage() and first["lamar_episode_id"] in record.getMessage()
    assert lam.episode(first["lamar_episode_id"]).signal is None
    assert lam.episode(second["lamar_episode_id"]).signal == "corrected"

DEPLOYS_STARTED: list[str] = []


@tool
async def slow_deploy(target: str) -> str:
    """Deploy a target, slowly."""
    DEPLOYS_STARTED.append(target)
    await asyncio.sleep(30)
    return "deployed"


class HangingModel(RecordingChatModel):
    """A model whose first call never answers."""

    hang: bool = True

    async def _agenerate(self, *args: Any, **kwargs: Any) -> Any:
        if self.hang:
            self.hang = False
            await asyncio.sleep(30)
        return await super()._agenerate(*args, **kwargs)


@pytest.mark.parametrize("how", ["timeout-in-tool", "timeout-in-model", "stream-cancelled"])
async def test_a_cancelled_turn_is_settled_as_failed_not_accepted_by_the_next(chat_model: Any, how: str) -> None:
    """A turn cut short (asyncio.wait_for running out, a streaming task cancelled) never answered:
    it is expired like a failed turn, so the next message's silent default does not accept it."""
    lam, _ = engine()
    call = AIMessage(content="", tool_calls=[{"name": "slow_deploy", "args": {"target": "app"}, "id": "c1"}])
    model = HangingModel(responses=[AIMessage("thanks")]) if how == "timeout-in-model" else chat_model(call, "thanks")
    agent = create_agent(model, [slow_deploy], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, silent_outcome="accepted")])
    thread = {"configurable": {"thread_id": "t1"}}
    message = {"messages": [{"role": "user", "content": "ship it"}]}
    if how == "stream-cancelled":
        async def relay() -> None:  # a server streaming to a client that goes away mid-tool
            async for _ in agent.astream(message, thread, stream_mode="updates"):
                pass
        started = len(DEPLOYS_STARTED)
        task = asyncio.ensure_future(relay())
        while len(DEPLOYS_STARTED) == started:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(agent.ainvoke(message, thread), 0.3)
    cut = (await agent.aget_state(thread)).values["lamar_episode_id"]
    for _ in range(50):  # settled on a worker thread
        if lam.episode(cut).settled is not None:
            break
        await asyncio.sleep(0.02)
    assert lam.pending() == [] and lam.episode(cut).settled == "expired"
    await agent.ainvoke({"messages": [{"role": "user", "content": "never mind"}]}, thread)
    assert lam.episode(cut).signal is None and lam.episode(cut).settled == "expired"


@tool
def quick_deploy(target: str) -> str:
    """Deploy a target."""
    return "deployed"


@pytest.mark.parametrize("how", ["astream-aclose", "astream-break-then-aclose", "stream-close"])
async def test_a_stream_closed_between_steps_is_settled_as_failed_not_accepted_by_the_next(
        chat_model: Any, how: str) -> None:
    """The caller stops reading after the model asked for a tool: no model or tool call is running,
    so nothing is cancelled, and the run's end is never reached. The next message must not
    accept a turn that never answered."""
    lam, _ = engine()
    call = AIMessage(content="", tool_calls=[{"name": "quick_deploy", "args": {"target": "app"}, "id": "c1"}])
    agent = create_agent(chat_model(call, "deployed it", "thanks"), [quick_deploy], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"}, silent_outcome="accepted")])
    thread = {"configurable": {"thread_id": f"closed-{how}"}}
    message = {"messages": [{"role": "user", "content": "ship it"}]}
    if how == "stream-close":
        sync_stream = agent.stream(message, thread, stream_mode="updates")
        for update in sync_stream:
            if "model" in update:
                break
        sync_stream.close()
    else:
        stream = agent.astream(message, thread, stream_mode="updates")
        async for update in stream:
            if "model" in update:
                if how == "astream-aclose":
                    await stream.aclose()
                break
        await stream.aclose()  # what `async for` over `aclosing(...)` or the loop's finalizer does
    cut = (await agent.aget_state(thread)).values["lamar_episode_id"]
    assert lam.episode(cut).reports == 0
    await agent.ainvoke({"messages": [{"role": "user", "content": "did it work?"}]}, thread)
    assert lam.episode(cut).signal is None and lam.episode(cut).settled == "expired"
    # A turn that reached its end is still accepted by the next message's silence.
    answered = (await agent.aget_state(thread)).values["lamar_episode_id"]
    await agent.ainvoke({"messages": [{"role": "user", "content": "ok"}]}, thread)
    assert lam.episode(answered).signal == "accepted"


def test_a_closed_stream_is_settled_at_once_with_the_callback_handler(chat_model: Any) -> None:
    lam, _ = engine()
    call = AIMessage(content="", tool_calls=[{"name": "quick_deploy", "args": {"target": "app"}, "id": "c1"}])
    agent = create_agent(chat_model(call, "deployed it"), [quick_deploy], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "trace"})])
    handler = LamarCallbackHandler(lam)
    config = {"configurable": {"thread_id": "closed-at-once"}, "callbacks": [handler]}
    stream = agent.stream({"messages": [{"role": "user", "content": "ship it"}]}, config, stream_mode="updates")
    for update in stream:
        if "model" in update:
            break
    stream.close()
    handler.close()
    cut = agent.get_state(config).values["lamar_episode_id"]
    assert lam.episode(cut).settled == "expired" and lam.pending() == []


def test_a_new_message_while_a_review_is_pending_expires_the_turn_under_review(chat_model: Any) -> None:
    """The review (`HumanInTheLoopMiddleware`) stops the run between two steps; a person who
    writes again instead of resuming moves on, and the turn that never answered is expired."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.types import Command

    @tool
    def deploy(target: str) -> str:
        """Deploy a target."""
        return "deployed"

    lam, _ = engine()
    calls = [AIMessage("", tool_calls=[{"name": "deploy", "args": {"target": t}, "id": t}]) for t in ("a", "b")]
    agent = create_agent(chat_model(calls[0], calls[1], "deployed b"), [deploy], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, context={"project": "trace"}),
                                     HumanInTheLoopMiddleware(interrupt_on={"deploy": True})])
    config: Any = {"configurable": {"thread_id": "review"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "deploy a"}]}, config)
    assert first["__interrupt__"] and lam.episode(first["lamar_episode_id"]).reports == 0
    second = agent.invoke({"messages": [{"role": "user", "content": "no, deploy b"}]}, config)
    assert second["__interrupt__"] and second["lamar_episode_id"] != first["lamar_episode_id"]
    assert lam.episode(first["lamar_episode_id"]).settled == "expired"
    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)  # the new review resumed
    assert lam.episode(second["lamar_episode_id"]).reports == 0  # open, for this turn's outcome


LONG = {"project": "trace", "language": "swift", "log": "x" * 5_000}  # a value of 5,000 characters on one turn


@pytest.mark.parametrize("source", ["function", "metadata", "lamar_context"])
def test_a_long_value_in_a_context_the_app_gives_is_left_out_and_the_turn_answers(chat_model: Any,
                                                                                  source: str) -> None:
    lam, ids = engine()
    model = chat_model("ok")
    middleware = LamarMiddleware(lam, (lambda state, runtime: LONG) if source == "function" else None)
    agent = create_agent(model, [], middleware=[middleware], context_schema=AppCtxForLamar)
    given: Any = {"callbacks": [LamarCallbackHandler(lam)]}  # which reads the metadata too, without a warning
    if source == "metadata":
        given["metadata"] = {"lamar_context": LONG}
    runtime = AppCtxForLamar(project="trace", lamar_context=LONG if source == "lamar_context" else {})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]}, given, context=runtime)
    said = [str(w.message) for w in seen if issubclass(w.category, UserWarning)]
    assert len(said) == 1 and "left out 'log' (5,000 characters)" in said[0] and "4,000" in said[0], said
    assert result["messages"][-1].content == "ok"
    episode = lam.episode(result["lamar_episode_id"])
    assert episode.context == {"project": "trace", "language": "swift"} and sorted(episode.injected) == sorted(ids)
    assert all(lam.get(i).render() in model.received[0][0].text for i in ids)
