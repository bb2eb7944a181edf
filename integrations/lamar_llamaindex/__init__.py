"""Lamar for LlamaIndex: a node postprocessor that re-selects retrieved lessons by outcome, a
memory block for agents, and agent tools (docs/llamaindex.md)."""

from lamar.extras import require_extra

require_extra("lamar_llamaindex", "LlamaIndex", "llamaindex", "llama_index.core")

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
