"""Offline LlamaIndex settings for these tests, and an embedding whose similarity means something."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator

import pytest
from llama_index.core import Settings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM


class BagOfWordsEmbedding(BaseEmbedding):
    """Hashed word counts, L2-normalized: texts sharing more words are more similar.

    MockEmbedding gives every text the same vector, so a test that needs one lesson to
    be *more similar* to the query than another uses this deterministic stand-in.
    """

    dim: int = 64

    @classmethod
    def class_name(cls) -> str:
        return "BagOfWordsEmbedding"

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in re.findall(r"[a-z]+", text.lower()):
            vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


@pytest.fixture(autouse=True)
def offline_settings() -> Iterator[None]:
    """MockLLM (it echoes the prompt it gets) and MockEmbedding; the global Settings restored after."""
    saved = (Settings._llm, Settings._embed_model)
    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    try:
        yield
    finally:
        Settings._llm, Settings._embed_model = saved


@pytest.fixture
def bag_of_words() -> Iterator[BagOfWordsEmbedding]:
    """Use the bag-of-words embedding for this test (restored by `offline_settings`)."""
    model = BagOfWordsEmbedding()
    Settings.embed_model = model
    yield model
