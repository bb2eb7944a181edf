"""Lamar for LangChain: a retriever, a callback handler and agent middleware.

    retriever = LamarRetriever(lamar=lam, k=4, context={"project": "trace"})
    agent = create_agent(model, tools, middleware=[LamarMiddleware(lam, {"project": "trace"})])
    handler = LamarCallbackHandler(lam, trace_path="traces.jsonl")
    tools = create_lamar_tools(lam, report=True)  # for agents that look lessons up themselves
"""

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
