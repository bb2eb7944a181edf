"""A process killed in the middle of a checkpointed run, its thread resumed by another process from the SQLite
checkpoints: with `durability="sync"` the resumed run keeps the turn's one episode and reports it; with LangGraph's
default the recall's step may be lost, and its episode is left pending in the store."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Lamar

RUN = """
import os, sqlite3, sys
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import MessagesState
from langgraph.types import Command, interrupt
from lamar import Experience, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node
from tests.integrations.langgraph.graphs import in_line

folder, step, durability = sys.argv[1:4]

class State(MessagesState, LamarState):
    pass

def agent(state):
    if step == "killed":
        os._exit(3)  # the process dies here, as under the OOM killer or a redeploy
    return {"messages": [AIMessage("Cleared the cache.")]}

lam = Lamar(os.path.join(folder, "lessons.db"), holdout=1e-9)
if not lam.experiences():
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
app = in_line(State, ("recall", recall_node(lam)), ("agent", agent),
              ("review", lambda state: {"lamar_outcome": interrupt("did it ship?")}),
              ("report", report_node(lam))).compile(
    checkpointer=SqliteSaver(sqlite3.connect(os.path.join(folder, "checkpoints.db"), check_same_thread=False)))
config = {"configurable": {"thread_id": "t"}}
options = {} if durability == "default" else {"durability": durability}
if step == "killed":
    app.invoke({"messages": [HumanMessage("the build broke", id="m1")], "lamar_context": {"project": "trace"}},
               config, **options)
else:
    app.invoke(None, config, **options)
    app.invoke(Command(resume="shipped"), config, **options)
"""


def _run(folder: Path, step: str, durability: str) -> int:
    root = Path(__file__).resolve().parents[3]
    env_path = f"{root}:{root / 'integrations'}"
    return subprocess.run([sys.executable, "-c", RUN, str(folder), step, durability], cwd=root, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": env_path}, timeout=120).returncode


@pytest.mark.parametrize("durability", ["sync", "default"])
def test_a_thread_resumed_after_its_process_was_killed_reports_the_turn(tmp_path: Path, durability: str) -> None:
    assert _run(tmp_path, "killed", durability) == 3
    assert _run(tmp_path, "resumed", durability) == 0
    lam = Lamar(str(tmp_path / "lessons.db"))
    episodes = [e.data["id"] for e in lam.store.read() if e.kind == "episode"]
    signals = [lam.episode(e).signal for e in episodes]
    if durability == "sync":  # the recall's step was saved before the agent ran: the resume does not recall again
        assert signals == ["shipped"]
    else:  # the step may be lost with the process: the resume recalls again, the first episode is left pending
        assert signals in (["shipped"], [None, "shipped"])
        assert [p.episode_id for p in lam.pending()] == episodes[:-1]
    lam.close()
