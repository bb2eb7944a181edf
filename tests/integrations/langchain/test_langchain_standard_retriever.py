"""LangChain's own retriever suite, run unchanged against `LamarRetriever`.

Wrapping a base retriever, at the default tuning: a held-out lesson's slot is filled with
the base's next plain document, so every call returns k documents.

Over the store alone there is no plain document to fill a held-out slot with, and filling it
with the next-ranked lesson would make that lesson's inclusion hang on another lesson's coin
(its logged propensity would be wrong). A call then returns fewer than k documents with
probability up to 1 - (1 - holdout)^k per call (docs/langchain.md, "How many documents come
back"), which the suite's "exactly k" checks do not allow; that mode runs the suite with the
holdout made vanishing (1e-9, still logged as each lesson's propensity).
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_tests.integration_tests import RetrieversIntegrationTests

from lamar import Experience, Lamar, Scope
from lamar_langchain import LamarRetriever

CONTEXT = {"project": "trace", "language": "swift"}
QUERY = "the Xcode build fails after a dependency bump"


def engine(**tuning: float) -> Lamar:
    """Eight eligible lessons, so every k the suite asks for (1, 3, 4) can be filled."""
    lam = Lamar(":memory:", k=4, seed=11, **tuning)
    for i in range(6):
        lam.add(Experience(f"the build fails with error E{i}", f"apply fix number {i}",
                           scope=Scope(project="trace")))
    lam.add(Experience("a Swift package does not resolve", "reset the package caches",
                       scope=Scope(language="swift")))
    lam.add(Experience("a test is flaky", "rerun it once before debugging"))
    return lam


class Words(Embeddings):
    """Letter-bigram counts: a deterministic embedding with no model behind it."""

    def _vector(self, text: str) -> list[float]:
        words = re.findall(r"[a-z]+", text.lower())
        return [float(sum(w.startswith(c) for w in words)) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def wrapped() -> LamarRetriever:
    """A vector store holding the engine's lessons (with their ids) and plain runbook pages."""
    lam = engine()
    store = InMemoryVectorStore(Words())
    store.add_documents([Document(e.render(), metadata={"experience_id": e.id}) for e in lam.experiences()])
    store.add_documents([Document(f"Runbook page {i}: when the build fails, read the log from line {i}.")
                         for i in range(8)])
    return LamarRetriever(lam, k=4, base_retriever=store.as_retriever(search_kwargs={"k": 16}),
                          context=CONTEXT)


class TestLamarRetrieverWrappingDefaults(RetrieversIntegrationTests):
    """The production tuning: the holdout at its default."""

    @property
    def retriever_constructor(self) -> type[LamarRetriever]:
        return LamarRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        base = wrapped()
        return {"lamar": base.lamar, "k": 4, "context": CONTEXT, "base_retriever": base.base_retriever}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


class TestLamarRetrieverOverStore(RetrieversIntegrationTests):
    """Over the store alone, with the documented vanishing holdout (see the module docstring)."""

    @property
    def retriever_constructor(self) -> type[LamarRetriever]:
        return LamarRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"lamar": engine(holdout=1e-9), "k": 4, "context": CONTEXT}

    @property
    def retriever_query_example(self) -> str:
        return QUERY


def test_wrapped_default_returns_k_documents_across_many_calls() -> None:
    """The suite's 'exactly k' check, many times over (one seeded engine, 60 calls of each k)."""
    retriever = wrapped()
    held = 0
    for k in (1, 3, 4):
        for _ in range(60):
            docs = retriever.invoke(QUERY, k=k)
            assert len(docs) == k
            lessons = [d for d in docs if "experience_id" in d.metadata]
            if lessons:
                held += len(retriever.lamar.episode(lessons[0].metadata["episode_id"]).held_out)
    assert held > 0  # the default holdout was in play
