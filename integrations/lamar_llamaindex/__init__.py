"""Lamar for LlamaIndex: a node postprocessor that re-selects retrieved lessons by outcome.

    index = VectorStoreIndex(lessons_to_nodes(lam))
    engine = index.as_query_engine(similarity_top_k=20,
                                   node_postprocessors=[LamarPostprocessor(lam, top_n=3, context=ctx)])
    response = engine.query("...")
    report_response(lam, response, Signal.SHIPPED)
"""

from lamar_llamaindex.instrumentation import LamarTraceHandler
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
    track_episodes,
)
from lamar_llamaindex.postprocessor import LamarPostprocessor

__all__ = [
    "EPISODE_ID",
    "EXPERIENCE_ID",
    "EpisodeLog",
    "LamarPostprocessor",
    "LamarTraceHandler",
    "areport_response",
    "episode_id_of",
    "episode_ids",
    "experience_id_of",
    "lessons_to_documents",
    "lessons_to_nodes",
    "report_response",
    "track_episodes",
]
