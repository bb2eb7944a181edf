"""LangChain's own retriever suite, run unchanged against `LamarRetriever` over a Lamar store."""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from lamar import Experience, Lamar, Scope
from lamar_langchain import LamarRetriever

CONTEXT = {"project": "trace", "language": "swift"}


def engine() -> Lamar:
    """Eight eligible lessons, so every k the suite asks for (1, 3, 4) can be filled.

    The suite demands exactly k documents. Lamar's randomized holdout leaves a held-out
    slot empty on purpose (the control group), which returns fewer than k with probability
    1 - (1 - holdout)^k per call: 49% at the default holdout 0.2 and k=3. So this engine is
    tuned with a vanishing holdout (1e-9, still logged as each lesson's propensity); the
    retriever itself is the production one, with nothing switched off.
    """
    lam = Lamar(":memory:", k=4, seed=11, holdout=1e-9, holdout_proven=1e-9)
    for i in range(6):
        lam.add(Experience(f"the build fails with error E{i}", f"apply fix number {i}",
                           scope=Scope(project="trace")))
    lam.add(Experience("a Swift package does not resolve", "reset the package caches",
                       scope=Scope(language="swift")))
    lam.add(Experience("a test is flaky", "rerun it once before debugging"))
    return lam


class TestLamarRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[LamarRetriever]:
        return LamarRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"lamar": engine(), "k": 4, "context": CONTEXT}

    @property
    def retriever_query_example(self) -> str:
        return "the Xcode build fails after a dependency bump"
