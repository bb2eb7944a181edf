"""Lamar for LangChain: a retriever, a callback handler, agent middleware and agent tools (docs/langchain.md)."""

try:  # fail here, naming the extra, rather than deep inside a module with a bare ModuleNotFoundError
    import langchain.agents  # noqa: F401
    import langchain_core  # noqa: F401
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError(f'lamar_langchain needs LangChain ({exc}), the langchain extra: pip install "lamar[langchain]" '
                              f'(in a clone of Lamar: pip install -e ".[langchain]")', name=exc.name) from exc

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
