"""`write_on="report"` holds a trace until its outcome comes; a trace held that way is never lost: a run reported
by episode id (from another process, say) or never reported is written when the interpreter exits or when
the handler forgets the run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

from langchain_core.runnables import RunnableLambda

from lamar import Experience, Lamar, Signal
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler, LamarRetriever

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import asyncio, sys, uuid
from langchain_core.runnables import RunnableLambda
from lamar import Experience, Lamar, Signal
from lamar_langchain import LamarCallbackHandler, LamarRetriever

lam = Lamar(":memory:", seed=3)
lam.add(Experience("a user asks for a refund", "check the order date first"))
handler = LamarCallbackHandler(lam, trace_path=sys.argv[1], write_on="report")
chain = LamarRetriever(lamar=lam, k=3) | RunnableLambda(lambda docs: "answer")
runs = [uuid.uuid4() for _ in range(3)]


async def main():  # an async app: the handler's writes go to its worker thread, which Python stops at exit
    for run in runs:
        await chain.ainvoke("refund?", config={"callbacks": [handler], "run_id": run})
    handler.report(runs[0], Signal.SHIPPED)
    lam.report(handler.episodes(runs[1])[0], Signal.REVERTED)  # by episode id, as another process would


asyncio.run(main())
"""


def test_traces_held_for_a_report_are_written_when_the_interpreter_exits(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "integrations")]))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT), str(path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    traces = load_traces(path)
    assert [t.outcome for t in traces] == ["shipped", None, None]  # the others: sleep joins them by episode_id
    assert all(t.episode_id for t in traces)


def test_a_run_forgotten_past_max_runs_has_its_held_trace_written_first(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    lam = Lamar(":memory:", seed=3)
    lam.add(Experience("a user asks for a refund", "check the order date first"))
    handler = LamarCallbackHandler(lam, trace_path=path, write_on="report", max_runs=1, raise_error=True)
    chain = LamarRetriever(lamar=lam, k=3) | RunnableLambda(lambda docs: "answer")
    first, second = uuid.uuid4(), uuid.uuid4()
    for run in (first, second):
        chain.invoke("refund?", config={"callbacks": [handler], "run_id": run})
    assert [t.id for t in load_traces(path)] == [str(first)]  # forgotten, so written now, outcome null
    handler.report(second, Signal.SHIPPED)
    assert [(t.id, t.outcome) for t in load_traces(path)] == [(str(first), None), (str(second), "shipped")]
    assert handler.flush() == 0


DROPPED = """
import asyncio, gc, sys
from langchain_core.runnables import RunnableLambda
from lamar import Experience, Lamar
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler, LamarRetriever

lam = Lamar(":memory:", seed=3)
lam.add(Experience("a user asks for a refund", "check the order date first"))
chain = LamarRetriever(lamar=lam, k=3) | RunnableLambda(lambda docs: "answer")


def serve(question):  # a handler per request, as a web app makes one, dropped when the request is answered
    handler = LamarCallbackHandler(lam, trace_path=sys.argv[1], write_on="report")
    chain.invoke(question, config={"callbacks": [handler]})
    return handler.episodes(handler.traces()[0].id)[0]


async def aserve(question):  # the same, async: the handler's writes go through its worker thread
    handler = LamarCallbackHandler(lam, trace_path=sys.argv[1], write_on="report")
    await chain.ainvoke(question, config={"callbacks": [handler]})
    return handler.episodes(handler.traces()[0].id)[0]


episodes = [serve("refund?"), asyncio.run(aserve("refund again?"))]
gc.collect()
print([t.episode_id for t in load_traces(sys.argv[1])] == episodes, flush=True)  # before exit: when dropped
"""


def test_a_handler_dropped_before_its_runs_are_reported_writes_their_held_traces(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "integrations")]))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(DROPPED), str(path)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.strip() == "True", done.stdout  # written when dropped, outcome null, not at exit
    traces = load_traces(path)
    assert [t.outcome for t in traces] == [None, None] and len({t.id for t in traces}) == 2  # once each
