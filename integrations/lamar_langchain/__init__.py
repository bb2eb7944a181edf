"""Lamar for LangChain: a retriever, a callback handler, agent middleware and agent tools (docs/langchain.md)."""

from lamar.extras import require_extra

require_extra("lamar_langchain", "LangChain", "langchain", "langchain.agents", "langchain_core")

from lamar_langchain.callbacks import ImplicitSignals, LamarCallbackHandler
from lamar_langchain.middleware import LamarAgentState, LamarMiddleware
from lamar_langchain.retriever import LamarRetriever
from lamar_langchain.tools import ReportOutcome, SearchLessons, create_lamar_tools

__all__ = [
    "ImplicitSignals",
    "LamarAgentState",
    "LamarCallbackHandler",
    "LamarMiddleware",
    "LamarRetriever",
    "ReportOutcome",
    "SearchLessons",
    "create_lamar_tools",
]
