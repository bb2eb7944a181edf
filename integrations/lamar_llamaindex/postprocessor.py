"""`LamarPostprocessor`: keep the retrieved lessons that Lamar chooses by outcome, not by similarity."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from lamar import (
    Experience,
    InvalidArgument,
    InvalidContext,
    Lamar,
    Recall,
    Status,
    StoreError,
    UnknownExperience,
)
from lamar.experience import check_context, fit_context
from lamar.shown import shown_lesson
from lamar_llamaindex.nodes import EPISODE_ID, EXPERIENCE_ID, engine, experience_id_of, slots
from lamar_llamaindex.outcomes import record_episode

dispatcher = get_dispatcher(__name__)
log = logging.getLogger(__name__)

ContextFn = Callable[[QueryBundle], Mapping[str, str]]


class LamarPostprocessor(BaseNodePostprocessor):
    """Re-select retrieved lesson nodes by their measured outcomes.

    The retriever finds lessons by similarity; this postprocessor hands their ids to
    ``lamar.recall(context, k=top_n, candidates=ids)`` and keeps the lessons Lamar
    injects, best first. Lamar may keep fewer than ``top_n``: it skips lessons proven
    harmful, lessons whose scope does not match the context, and (by a logged coin)
    holds some out so their effect can be measured against a control group.

    What comes out, in order:

    - the chosen lesson nodes, each a copy with ``experience_id`` and ``episode_id`` in
      its metadata (both kept out of the LLM prompt and the embedding) and a score
      from Lamar's rank: ``1 - i / n`` for the i-th of n chosen, so the best is 1.0;
    - then the nodes that are not lessons (no ``experience_id``, or an id this store
      does not know), untouched and in their retrieved order; ``passthrough=False``
      drops them instead.

    Nodes of retired lessons and lessons Lamar did not choose are dropped; duplicate
    nodes of one lesson count once (the first, most similar one is kept). When no
    retrieved node is a recallable lesson, no recall happens and no episode is
    logged (there would be nothing to learn from it).

    The episode id is in each chosen node's metadata, in `last_episode_id` (the
    latest call on this instance; for serial use), and in any open
    `track_episodes()` block (safe under concurrency). The last two also reach an
    episode whose lessons were all held out, which no node can carry: report those
    too, they are the control group. Report with `report_response`.

    Args:
        lamar: the engine that owns the lessons.
        top_n: lesson slots per query (Lamar's ``k`` for the recall).
        context: the context to recall for: a mapping of strings, or a callable that
            takes the `QueryBundle` (``str(bundle)`` is the query text) and returns one.
        context_fn: a second callable of the `QueryBundle` whose fields are merged over
            a mapping ``context`` (static project fields plus per-query task fields).
        passthrough: keep nodes that are not lessons (True) or drop them (False).

    >>> from lamar import Experience, Lamar
    >>> from lamar_llamaindex import lessons_to_nodes
    >>> from llama_index.core.schema import NodeWithScore
    >>> lam = Lamar(":memory:", seed=0)
    >>> _ = lam.add(Experience("the build fails", "clear the cache"))
    >>> post = LamarPostprocessor(lam, top_n=1)
    >>> nodes = [NodeWithScore(node=n, score=0.8) for n in lessons_to_nodes(lam)]
    >>> [(n.node.get_content(), n.score) for n in post.postprocess_nodes(nodes, query_str="help")]
    [('When the build fails, clear the cache.', 1.0)]
    >>> lam.report(post.last_episode_id, "shipped")
    """

    lamar: Any = Field(exclude=True, description="The Lamar engine.")
    top_n: int = Field(default=3, ge=0, description="Lesson slots per query.")
    context: Any = Field(default=None, exclude=True, description="Mapping or callable of the query.")
    context_fn: Any = Field(default=None, exclude=True, description="Callable merged over `context`.")
    passthrough: bool = Field(default=True, description="Keep nodes that are not lessons.")

    _last_episode_id: str | None = PrivateAttr(default=None)

    def __init__(self, lamar: Lamar, top_n: int = 3, context: Mapping[str, str] | ContextFn | None = None,
                 *, context_fn: ContextFn | None = None, passthrough: bool = True, **kwargs: Any) -> None:
        engine(lamar, "LamarPostprocessor")
        slots(-1 if top_n is None else top_n, "top_n")  # a number is needed here: None is refused too
        if isinstance(context, Mapping):
            context = check_context(context)  # refused now, not inside the first query
        elif context is not None and not callable(context):
            raise InvalidContext(  # as every other piece refuses a context that is not one
                f"context must be a mapping of strings or a callable; got {type(context).__name__}")
        if context_fn is not None and not callable(context_fn):
            raise InvalidArgument(f"context_fn must be callable; got {type(context_fn).__name__}")
        super().__init__(lamar=lamar, top_n=top_n, context=context, context_fn=context_fn,
                         passthrough=passthrough, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "LamarPostprocessor"

    @property
    def last_episode_id(self) -> str | None:
        """The episode logged by this instance's latest call (None when it logged none)."""
        return self._last_episode_id

    def context_for(self, query_bundle: QueryBundle | None) -> dict[str, str]:
        """The context a recall for this query uses: static fields, then per-query ones; its longest
        entries left out, with a warning, past a context's limit (`lamar.experience.fit_context`)."""
        bundle = query_bundle if query_bundle is not None else QueryBundle(query_str="")
        merged: dict[str, str] = {}
        for part in (self.context, self.context_fn):
            if part is None:
                continue
            fields = part(bundle) if callable(part) else part
            if not isinstance(fields, Mapping):
                raise InvalidContext(f"the context callable must return a mapping; got {type(fields).__name__}")
            merged.update(fields)
        return fit_context(merged, where="the postprocessor's context")

    # -- the postprocessor hooks -----------------------------------------------------------

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        self._announce(nodes, query_bundle)
        try:
            lessons, others = self._split(nodes)
            recall = None
            if lessons:
                if (ctx := self._query_context(query_bundle)) is None:
                    return self._unranked(nodes)
                recall = self.lamar.recall(ctx, k=self.top_n, candidates=list(lessons))
        except StoreError as exc:
            return self._unranked(nodes, exc)
        return self._finish(lessons, others, recall)

    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        self._announce(nodes, query_bundle)
        try:
            # Looking lessons up may touch the store (a file, a database): off the event loop.
            lessons, others = await asyncio.to_thread(self._split, nodes)
            recall = None
            if lessons:
                if (ctx := self._query_context(query_bundle)) is None:
                    return self._unranked(nodes)
                recall = await self.lamar.arecall(ctx, k=self.top_n, candidates=list(lessons))
        except StoreError as exc:
            return self._unranked(nodes, exc)
        return self._finish(lessons, others, recall)

    # -- the steps -------------------------------------------------------------------------

    def _split(self, nodes: list[NodeWithScore]) -> tuple[dict[str, NodeWithScore], list[NodeWithScore]]:
        """Recallable lessons by id (first node per lesson), and the nodes that are not lessons."""
        lessons: dict[str, NodeWithScore] = {}
        others: list[NodeWithScore] = []
        for item in nodes:
            exp_id = experience_id_of(item)
            if exp_id is None:
                others.append(item)
                continue
            if exp_id in lessons:
                continue
            try:
                status = self.lamar.get(exp_id).status
            except UnknownExperience:
                others.append(item)  # an id from another store or an old index: not ours to judge
                continue
            if status is not Status.RETIRED:
                lessons[exp_id] = item
        return lessons, others

    def _query_context(self, query_bundle: QueryBundle | None) -> dict[str, str] | None:
        """The query's context; None, with a warning, when the app's function raised or returned no
        mapping of strings: it runs inside the query engine, whose query must not fail for it."""
        try:
            return check_context(self.context_for(query_bundle))
        except Exception as exc:  # noqa: BLE001 - the user's function, inside the user's query: fail open
            log.warning("Lamar's context function failed with %s: %s (the query goes on with the retriever's "
                        "first %d lessons)", type(exc).__name__, exc, self.top_n)
            return None

    def _unranked(self, nodes: list[NodeWithScore], exc: StoreError | None = None) -> list[NodeWithScore]:
        """Fail open: a store that cannot be read or written, or a context function that failed (said
        already), costs the query its re-ranking, never the query. The retriever's first `top_n` lessons
        go on in its order, as many as a re-ranked query sends: an index retrieves many more
        (`similarity_top_k=20`), which would otherwise all reach the prompt. The other nodes go on as
        `passthrough` says."""
        kept = {id(item) for item in [item for item in nodes if experience_id_of(item) is not None][:self.top_n]}
        out = [item for item in nodes if id(item) in kept or (self.passthrough and experience_id_of(item) is None)]
        if exc is not None:
            log.warning("Lamar could not re-rank (the query goes on with the retriever's first %d lessons): %s",
                        self.top_n, exc)
        self._last_episode_id = None
        dispatcher.event(ReRankEndEvent(nodes=out))
        return out

    def _finish(self, lessons: dict[str, NodeWithScore], others: list[NodeWithScore],
                recall: Recall | None) -> list[NodeWithScore]:
        self._last_episode_id = recall.episode_id if recall is not None else None
        chosen: list[NodeWithScore] = []
        if recall is not None:
            record_episode(recall.episode_id, recall.context, recall.experiences)
            # A lesson stored before add's checks whose text or id the prompt's fence would leave out is left
            # out here too: the index's node most likely holds that text (`lamar.shown.shown_lesson`).
            shown = [exp.id for exp in recall.experiences if not _left_out(exp)]
            for rank, exp_id in enumerate(shown):
                chosen.append(NodeWithScore(node=_stamped(lessons[exp_id], recall.episode_id),
                                            score=1.0 - rank / len(shown)))
        out = chosen + (others if self.passthrough else [])
        dispatcher.event(ReRankEndEvent(nodes=out))
        return out

    def _announce(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> None:
        # The standard rerank events let observability tools show Lamar's step like any reranker.
        dispatcher.event(ReRankStartEvent(query=query_bundle, nodes=nodes, top_n=self.top_n,
                                          model_name="lamar"))


def _left_out(exp: Experience) -> bool:
    why = shown_lesson(exp, fields=False).left_out  # the node's own metadata is the index's, not the lesson's
    if why:
        log.warning("Lamar left a lesson out of the nodes: %s", why)
    return bool(why)


def _stamped(item: NodeWithScore, episode_id: str) -> Any:
    """A copy of the node with the episode in its metadata; the retriever's node stays as stored."""
    node = item.node
    metadata = {**node.metadata, EPISODE_ID: episode_id}
    hidden = [EXPERIENCE_ID, EPISODE_ID]
    return node.model_copy(update={
        "metadata": metadata,
        "excluded_llm_metadata_keys": _with(node.excluded_llm_metadata_keys, hidden),
        "excluded_embed_metadata_keys": _with(node.excluded_embed_metadata_keys, hidden),
    })


def _with(keys: list[str], extra: list[str]) -> list[str]:
    return list(keys) + [key for key in extra if key not in keys]


__all__ = ["LamarPostprocessor"]
