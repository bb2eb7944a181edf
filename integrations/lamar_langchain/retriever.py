"""`LamarRetriever`: lessons chosen by outcome, as a LangChain retriever (over the store, or
re-selecting what another retriever found)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
    adispatch_custom_event,
    dispatch_custom_event,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, field_validator

from lamar import (
    Experience,
    InvalidArgument,
    InvalidExperience,
    LamarError,
    Recall,
    Scope,
    Status,
    StoreError,
    UnknownExperience,
)
from lamar.arguments import slots as checked_slots
from lamar.experience import check_context, fit_context
from lamar.integration import engine as checked_engine
from lamar.safety.ids import id_problem
from lamar.safety.lessons import lesson_refusal
from lamar.shown import shown_lesson
from lamar_langchain.conventions import (
    EPISODE_ID,
    EXPERIENCE_ID,
    RECALL_EVENT,
    context_from_metadata,
    recall_event_data,
)

ContextSource = Mapping[str, str] | Callable[[str], Mapping[str, str]] | None

log = logging.getLogger(__name__)


class _Pool:
    """A base retriever's documents sorted into known lessons and the rest."""

    def __init__(self) -> None:
        self.by_id: dict[str, Document] = {}
        self.rank: dict[str, int] = {}
        self.passthrough: list[Document] = []


class LamarRetriever(BaseRetriever):
    """A retriever whose documents are lessons chosen by what happened after they were used.

    Over the store (no `base_retriever`): the context of the call selects up to `k` eligible
    lessons; each document's `page_content` is the rendered lesson ("When X, do Y, because Z."), quoted as
    `as_prompt()` quotes it, and so are the precondition, action, rationale and scope in its metadata.
    Wrapping `base_retriever`: its documents are the candidates and Lamar chooses up to `k`
    of them by outcome, not similarity; the documents keep their own `page_content`, and a
    candidate whose lesson is retired or scoped to another context is not chosen. Ask the base
    retriever for a pool wider than `k` (e.g. `as_retriever(search_kwargs={"k": 20})`).

    Every returned document carries `experience_id`, `episode_id`, `verdict` and `lesson` in
    its metadata; report the outcome with `lamar.report(doc.metadata["episode_id"], ...)`.
    Wrapping a base retriever, a call returns `k` documents whenever the base found that
    many it may return: Lamar's lessons first, then the base's other documents (those that
    are not lessons, with `on_unknown="pass"`) in its order, filling the slots the holdout
    left empty and any the lessons could not fill. Over the store alone there is nothing
    that is not a lesson, so a held-out slot stays empty and a call can return fewer than
    `k` documents: filling it with the next-ranked lesson would make that lesson's
    inclusion depend on another lesson's coin, and its logged propensity would be wrong.

    The context of a call is, in order of precedence: `invoke(query, context={...})`,
    `config["metadata"]["lamar_context"]`, then the `context` field (a mapping, or a function
    of the query returning one). No context means `{}`: only lessons without a scope match.

    Args:
        lamar: the `Lamar` engine.
        k: most lessons per call (default 4); `invoke(query, k=n)` overrides it per call.
        context: a mapping of strings, or a function of the query returning one.
        base_retriever: a retriever whose documents become the candidates.
        on_unknown: what to do with a candidate whose `experience_id` is missing or unknown to
            the store. "pass" (the default): a plain document; it fills the slots the lessons
            leave, in the base's order, after the lessons (a read never writes). "add": store it
            as a cold lesson (status candidate; precondition from
            metadata "precondition" or the query, action from metadata "action" or the page
            content, rationale from metadata "rationale", scope from metadata "scope" or none)
            under the id it claims (unless `add` would refuse it as an id) or a stable one, so the
            next call finds it. "drop": leave it out.

    Example:
        >>> from lamar import Lamar, Experience
        >>> lam = Lamar(":memory:", seed=3)
        >>> _ = lam.add(Experience("tests are flaky", "rerun them once before debugging"))
        >>> docs = LamarRetriever(lamar=lam, k=2).invoke("why did CI fail?")
        >>> all(d.metadata["episode_id"] for d in docs)
        True
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    lamar: Any = Field(description="The Lamar engine (typed Any: it is not a pydantic model).")
    k: int = Field(default=4, ge=0)
    context: Any = None
    base_retriever: BaseRetriever | None = None
    on_unknown: Literal["pass", "add", "drop"] = "pass"

    def __init__(self, lamar: Any = None, /, **data: Any) -> None:
        # The engine may come first, positionally, like every Lamar integration.
        if lamar is not None:
            data["lamar"] = lamar
        # Checked here, not in pydantic validators, which would wrap a LamarError in their own.
        checked_engine(data.get("lamar"), "LamarRetriever")
        if "k" in data:
            checked_slots(data["k"])
        if data.get("on_unknown", "pass") not in ("pass", "add", "drop"):
            raise InvalidArgument(f"on_unknown is 'pass', 'add' or 'drop'; got {data['on_unknown']!r}")
        super().__init__(**data)

    @field_validator("context")
    @classmethod
    def _check_context(cls, value: Any) -> Any:
        if value is None or callable(value):
            return value
        return check_context(value)

    # -- the LangChain hooks -----------------------------------------------------------------

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None, context: Mapping[str, str] | None = None,
    ) -> list[Document]:
        ctx = self._resolve_context(query, context, run_manager.metadata)
        slots = self._slots(k)
        found = None
        if self.base_retriever is not None:
            found = self.base_retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        rec = None
        try:
            pool = None if found is None else self._pool(found, query)
            rec = self.lamar.recall(ctx, k=slots, candidates=None if pool is None else list(pool.by_id))
            dispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx),
                                  config={"callbacks": run_manager.get_child()})
            return self._documents(rec, pool, slots)
        except StoreError as exc:
            if rec is not None:
                self._expire(rec, exc)
            return _without_lamar(found, slots, exc)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None, context: Mapping[str, str] | None = None,
    ) -> list[Document]:
        ctx = self._resolve_context(query, context, run_manager.metadata)
        slots = self._slots(k)
        found = None
        if self.base_retriever is not None:
            found = await self.base_retriever.ainvoke(query, config={"callbacks": run_manager.get_child()})
        rec = None
        try:
            pool = None if found is None else await asyncio.to_thread(self._pool, found, query)
            rec = await self.lamar.arecall(ctx, k=slots, candidates=None if pool is None else list(pool.by_id))
            await adispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx),
                                         config={"callbacks": run_manager.get_child()})
            return await asyncio.to_thread(self._documents, rec, pool, slots)
        except StoreError as exc:
            if rec is not None:
                await asyncio.to_thread(self._expire, rec, exc)
            return _without_lamar(found, slots, exc)

    # -- the steps ---------------------------------------------------------------------------

    def _slots(self, k: int | None) -> int:
        return checked_slots(self.k if k is None else k)

    def _resolve_context(self, query: str, given: Mapping[str, str] | None,
                         metadata: Mapping[str, Any] | None) -> dict[str, str]:
        if given is not None:
            return fit_context(given, where="the context given to the retriever's call")
        from_config = context_from_metadata(metadata)
        if from_config is not None:
            return from_config
        if callable(self.context):
            return fit_context(self.context(query), where="the context function's result")
        return dict(self.context or {})

    def _pool(self, found: list[Document], query: str) -> _Pool:
        """Map the base retriever's documents to lesson ids, adding or passing the unknown ones."""
        pool = _Pool()
        for rank, doc in enumerate(found):
            claimed = doc.metadata.get(EXPERIENCE_ID)
            exp_id = claimed if isinstance(claimed, str) and claimed else _stable_id(doc.page_content)
            if not self._known(exp_id):
                if self.on_unknown == "pass":
                    pool.passthrough.append(doc)
                    continue
                if self.on_unknown == "drop":
                    continue
                if id_problem(exp_id):  # the corpus's text, which add refuses as an id: returned in metadata
                    exp_id = _stable_id(doc.page_content)
                if not self._known(exp_id) and not self._add_cold(exp_id, doc, query):
                    pool.passthrough.append(doc)  # not a lesson Lamar can hold: a plain document
                    continue
            if exp_id not in pool.by_id:  # the first (most similar) copy stands for the lesson
                pool.by_id[exp_id] = doc
                pool.rank[exp_id] = rank
        return pool

    def _expire(self, rec: Recall, exc: StoreError) -> None:
        """The recall was logged but its documents never reached the caller: its lessons were not
        used, so the episode is expired rather than left pending as though they were."""
        try:
            self.lamar.expire(rec.episode_id, f"the retrieval failed after its recall: {type(exc).__name__}")
        except LamarError as again:  # the store is still away: the episode stays pending
            log.warning("Lamar could not expire episode %s of a failed retrieval: %s", rec.episode_id, again)

    def _known(self, exp_id: str) -> bool:
        try:
            self.lamar.get(exp_id)
        except UnknownExperience:
            return False
        return True

    def _add_cold(self, exp_id: str, doc: Document, query: str) -> bool:
        """Store the document as a cold lesson; False (and a warning) when it cannot be one.

        The query and the document are whatever users and the corpus hold, not lessons anyone
        wrote: they pass the screen that mined and agent-proposed lessons pass, and one that
        fails it (an instruction to the model, a secret, a page too long to inject) stays a
        plain document instead of failing the retrieval.
        """
        meta = doc.metadata
        scope = meta.get("scope")
        precondition = _text(meta.get("precondition")) or query
        action = _text(meta.get("action")) or doc.page_content
        rationale = _text(meta.get("rationale"))
        try:
            where = Scope(scope) if isinstance(scope, Mapping) else Scope()
            unsafe = lesson_refusal(precondition, action, rationale, dict(where))
            if unsafe:
                raise InvalidExperience(f"the text {unsafe}")
            exp = Experience(precondition=precondition, action=action, rationale=rationale, scope=where,
                             status=Status.CANDIDATE, id=exp_id,
                             provenance={"source": "langchain-retriever", "document_id": doc.id,
                                         "retriever": self.base_retriever.get_name() if self.base_retriever else None})
            self.lamar.add(exp)
        except StoreError:
            raise
        except LamarError as exc:  # the lesson itself: its text, its scope
            if self._known(exp_id):  # a concurrent add of the same document
                return True
            log.warning("Lamar kept document %s as a plain document, not a lesson: %s", doc.id or exp_id, exc)
            return False
        return True

    def _documents(self, rec: Recall, pool: _Pool | None, slots: int) -> list[Document]:
        docs: list[Document] = []
        for exp in rec.experiences:
            # A chain pastes page_content into its prompt with no fence around it: the text is neutralized
            # as inside as_prompt()'s fence, so a lesson cannot pose as a turn, a template token or the fence;
            # and one stored before the checks at add is cut, or left out, as that fence cuts or leaves it out.
            # Wrapping a retriever, the fields and scope are in no document: only the text counts.
            shown = shown_lesson(exp, fields=pool is None)
            if shown.left_out:
                log.warning("Lamar left a lesson out of the documents: %s", shown.left_out)
                continue
            lesson = {
                EXPERIENCE_ID: exp.id,
                EPISODE_ID: rec.episode_id,
                "verdict": self.lamar.evidence(exp.id).verdict.value,
                "lesson": shown.text,
                "rank": len(docs),
            }
            if pool is None:
                # A document prompt may render any metadata key ("{action}"): the lesson's own text is quoted
                # there as in page_content; programs read the stored text with lamar.get(experience_id).
                docs.append(Document(page_content=shown.text, id=exp.id, metadata={
                    **lesson, **shown.fields, "scope": shown.scope, "status": exp.status.value}))
            else:
                base = pool.by_id[exp.id]
                docs.append(base.model_copy(update={"metadata": {
                    **base.metadata, **lesson, "similarity_rank": pool.rank[exp.id]}}))
        if pool is not None:  # plain documents fill what the lessons left, the holdout's slots included
            docs += pool.passthrough[:max(0, slots - len(docs))]
        return docs


def _stable_id(text: str) -> str:
    """The id a document without an `experience_id` gets: the same text, the same lesson."""
    return "exp_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _without_lamar(found: list[Document] | None, slots: int, exc: StoreError) -> list[Document]:
    """Fail open: a store that cannot be read or written costs the call its choice by outcome,
    not its documents. The base retriever's go on in its own order; without one, none."""
    log.warning("Lamar could not choose lessons (the retrieval goes on without it): %s", exc)
    return list(found or [])[:slots]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


__all__ = ["LamarRetriever"]
