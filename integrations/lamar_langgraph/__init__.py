"""Lamar for LangGraph: recall and report nodes for any StateGraph, sleep as its own graph with a
human review step, and `LangGraphStore`, a Lamar store over any LangGraph BaseStore."""

from __future__ import annotations

from lamar.extras import require_extra

require_extra("lamar_langgraph", "LangGraph", "langgraph", "langchain_core", "langgraph.graph")

import lamar_langgraph.checkpoint_types  # noqa: F401  (quiets the checkpoint warnings about Lamar's classes)
from lamar_langgraph.model_state import LamarModel
from lamar_langgraph.nodes import LamarState, last_human_turn, recall_node, report_node
from lamar_langgraph.review import ReviewDecision
from lamar_langgraph.sleep_graph import REVIEW_KIND, SleepState, approved_ids, build_sleep_graph
from lamar_langgraph.store import LangGraphStore, sanitize_namespace

__all__ = [
    "REVIEW_KIND",
    "LamarModel",
    "LamarState",
    "LangGraphStore",
    "ReviewDecision",
    "SleepState",
    "approved_ids",
    "build_sleep_graph",
    "last_human_turn",
    "recall_node",
    "report_node",
    "sanitize_namespace",
]
