"""Lamar's lessons as LlamaIndex nodes and documents, and the metadata keys that tie a node to Lamar."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from llama_index.core.schema import BaseNode, Document, NodeWithScore, TextNode

from lamar import Experience, InvalidArgument, Lamar, Status
from lamar.integration import engine
from lamar.shown import shown_lesson

log = logging.getLogger(__name__)

EXPERIENCE_ID = "experience_id"
"""Metadata key naming the lesson a node stands for."""

EPISODE_ID = "episode_id"
"""Metadata key naming the recall (episode) that chose a node; report outcomes against it."""

SCOPE_PREFIX = "scope_"
"""Prefix of the metadata keys that copy a lesson's scope (``scope_project``), for vector-store filters."""


def lessons_to_nodes(lamar: Lamar, status: Status | str | Iterable[Status | str] | None = None, *,
                     scope: Mapping[str, str] | None = None) -> list[TextNode]:
    """Lamar's lessons as `TextNode`s, one per lesson, ready for `VectorStoreIndex(nodes)`.

    The text is the rendered lesson ("When X, do Y, because Z.") and is all that is
    embedded or shown to the LLM: the metadata (``experience_id``, ``status`` and the
    scope as ``scope_<field>``) is excluded from both, so ids never enter a prompt.
    A node's id is its lesson's id, so every export names a lesson's node the same way.

    Args:
        lamar: the engine whose lessons to export.
        status: keep these statuses; None keeps every lesson that can still be
            recalled (active and candidate), leaving retired ones out.
        scope: keep lessons whose scope has all these fields with these values.

    Returns:
        One node per lesson, in the order the lessons were added.

    >>> from lamar import Experience, Lamar, Scope
    >>> lam = Lamar()
    >>> eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="shop")))
    >>> (node,) = lessons_to_nodes(lam)
    >>> node.text, experience_id_of(node) == eid, node.metadata["scope_project"]
    ('When the build fails, clear the cache.', True, 'shop')
    """
    return [TextNode(**fields) for fields in _nodes_fields(_select(lamar, status, scope, "lessons_to_nodes"))]


def lessons_to_documents(lamar: Lamar, status: Status | str | Iterable[Status | str] | None = None, *,
                         scope: Mapping[str, str] | None = None) -> list[Document]:
    """Lamar's lessons as `Document`s, for `VectorStoreIndex.from_documents` or an ingestion pipeline.

    Same text, metadata and exclusions as `lessons_to_nodes`; the document id is the
    lesson id, so `index.refresh_ref_docs(lessons_to_documents(lam))` picks up edits.
    Chunks a node parser cuts from a document inherit its ``experience_id``.

    Args:
        lamar: the engine whose lessons to export.
        status: keep these statuses; None keeps active and candidate lessons.
        scope: keep lessons whose scope has all these fields with these values.

    Returns:
        One document per lesson, in the order the lessons were added.
    """
    return [Document(**fields) for fields in _nodes_fields(_select(lamar, status, scope, "lessons_to_documents"))]


def experience_id_of(node: BaseNode | NodeWithScore) -> str | None:
    """The lesson id in a node's metadata, or None when the node carries none."""
    value = _node(node).metadata.get(EXPERIENCE_ID)
    return value if isinstance(value, str) and value else None


def episode_id_of(node: BaseNode | NodeWithScore) -> str | None:
    """The episode id Lamar stamped on a node it chose, or None."""
    value = _node(node).metadata.get(EPISODE_ID)
    return value if isinstance(value, str) and value else None


def slots(k: Any, name: str = "k") -> int | None:
    """`k` if it is None or a number of slots the engine takes, else an `InvalidArgument`."""
    from lamar.arguments import slots as engine_slots

    return None if k is None else engine_slots(k, name)


def _status(value: Any) -> Status:
    try:
        return Status(value)
    except ValueError:
        raise InvalidArgument(f"status must be one of {', '.join(s.value for s in Status)}; got {value!r}") from None


def _node(node: BaseNode | NodeWithScore) -> BaseNode:
    return node.node if isinstance(node, NodeWithScore) else node


def _select(lamar: Lamar, status: Status | str | Iterable[Status | str] | None,
            scope: Mapping[str, str] | None, who: str) -> list[Experience]:
    lamar = engine(lamar, who)
    if status is None:
        wanted = {Status.ACTIVE, Status.CANDIDATE}
    elif isinstance(status, (Status, str)):
        wanted = {_status(status)}
    else:
        wanted = {_status(s) for s in status}
    return [exp for exp in lamar.experiences(scope=scope) if exp.status in wanted]


def _nodes_fields(lessons: list[Experience]) -> list[dict[str, Any]]:
    """Each lesson's node as the prompt's fence would show it (`lamar.shown.shown_lesson`): one stored before
    add checked it whose text, scope or id would show what the fence leaves out is left out, with a warning."""
    out = []
    for exp in lessons:
        shown = shown_lesson(exp)
        if shown.left_out:
            log.warning("Lamar left a lesson out of the nodes: %s", shown.left_out)
            continue
        meta: dict[str, Any] = {EXPERIENCE_ID: exp.id, "status": exp.status.value}
        meta.update({f"{SCOPE_PREFIX}{key}": value for key, value in shown.scope.items()})
        out.append({
            "id_": exp.id,
            # Lessons can be mined from traces by a model; the synthesizer pastes the text into a prompt with
            # no fence around it, so it is the fence's line: no role marker or template token, cut to length.
            "text": shown.text,
            "metadata": meta,
            # The rendered lesson says everything; ids and scope would only add noise to the
            # embedding and leak identifiers into the LLM prompt.
            "excluded_embed_metadata_keys": list(meta),
            "excluded_llm_metadata_keys": list(meta),
        })
    return out


__all__ = [
    "EPISODE_ID",
    "EXPERIENCE_ID",
    "SCOPE_PREFIX",
    "episode_id_of",
    "experience_id_of",
    "lessons_to_documents",
    "lessons_to_nodes",
]
