"""`in_line`: the graph most LangGraph tests here build, its nodes run one after another from START to END."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph


def in_line(state: Any, *nodes: tuple[str, Any], **options: Any) -> StateGraph[Any]:
    """A `StateGraph(state, **options)` that runs `nodes`, each a (name, node) pair, in turn, not compiled."""
    graph: StateGraph[Any] = StateGraph(state, **options).add_sequence(list(nodes))
    graph.add_edge(START, nodes[0][0])
    graph.add_edge(nodes[-1][0], END)
    return graph
