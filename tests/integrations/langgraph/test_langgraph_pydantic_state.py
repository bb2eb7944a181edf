"""A graph whose state is a pydantic model, which cannot mix in the TypedDict LamarState: LamarModel
declares the same keys with the same reducers, and a checkpointed thread keeps its episode."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any, get_type_hints

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from pydantic import BaseModel, Field

from lamar import Experience, Lamar, Scope
from lamar_langgraph import LamarModel, LamarState, recall_node, report_node

from .conftest import Savers


class State(LamarModel):
    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)


def _graph(lam: Lamar, saver: Any) -> Any:
    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("recall", recall_node(lam, context={"project": "trace"}))
    graph.add_node("agent", lambda state: {"messages": [AIMessage("Cleared the cache.")]})
    graph.add_node("review", lambda state: {"lamar_outcome": interrupt("did it work?")})
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    graph.add_edge("agent", "review")
    graph.add_edge("review", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=saver)


def test_a_pydantic_state_on_lamar_model_keeps_the_episode_across_a_resume(tmp_path: Path, savers: Savers) -> None:
    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    config: Any = {"configurable": {"thread_id": "t"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        first = _graph(lam, savers()).invoke({"messages": [HumanMessage("the build broke")]}, config)
        done = _graph(lam, savers()).invoke(Command(resume="shipped"), config)  # as another process would
        again = _graph(lam, savers()).invoke({"messages": [HumanMessage("and now the tests")]}, config)
    episode = first["lamar_episode_id"]
    assert done["lamar_reported"] == episode and lam.episode(episode).signal == "shipped"
    assert again["lamar_episodes"] == {again["lamar_episode_id"]: "open"}  # the reported turn is forgotten
    lam.close()


def test_lamar_model_declares_lamar_states_keys_with_their_reducers() -> None:
    assert issubclass(LamarModel, BaseModel)
    assert {name: field.metadata for name, field in LamarModel.model_fields.items()} == {
        name: list(getattr(hint, "__metadata__", ()))
        for name, hint in get_type_hints(LamarState, include_extras=True).items()}
