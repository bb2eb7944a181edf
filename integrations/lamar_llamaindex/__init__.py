"""Lamar for LlamaIndex: a node postprocessor that re-selects retrieved lessons by outcome, a
memory block for agents, and agent tools (docs/llamaindex.md)."""

try:  # fail here, naming the extra, rather than deep inside a module with a bare ModuleNotFoundError
    import llama_index.core  # noqa: F401
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError(f'lamar_llamaindex needs LlamaIndex ({exc}), the llamaindex extra: pip install "lamar[llamaindex]" '
                              f'(in a clone of Lamar: pip install -e ".[llamaindex]")', name=exc.name) from exc

from lamar_llamaindex.instrumentation import LamarTraceHandler
from lamar_llamaindex.memory import LamarMemoryBlock
from lamar_llamaindex.nodes import (
    EPISODE_ID,
    EXPERIENCE_ID,
    episode_id_of,
    experience_id_of,
    lessons_to_documents,
    lessons_to_nodes,
)
from lamar_llamaindex.outcomes import (
    EpisodeLog,
    areport_response,
    episode_ids,
    report_response,
    settle_failed,
    track_episodes,
)
from lamar_llamaindex.postprocessor import LamarPostprocessor
from lamar_llamaindex.tools import ReportOutcome, SearchLessons, create_lamar_tools

__all__ = [
    "EPISODE_ID",
    "EXPERIENCE_ID",
    "EpisodeLog",
    "LamarMemoryBlock",
    "LamarPostprocessor",
    "LamarTraceHandler",
    "ReportOutcome",
    "SearchLessons",
    "areport_response",
    "create_lamar_tools",
    "episode_id_of",
    "episode_ids",
    "experience_id_of",
    "lessons_to_documents",
    "lessons_to_nodes",
    "report_response",
    "settle_failed",
    "track_episodes",
]
