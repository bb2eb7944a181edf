"""A real text retriever for the gym's baselines: Okapi BM25 of lesson text against the
words of the context, the way memory layers choose lessons today."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

_WORD = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case words; underscores split words, so a context value "fix_flaky_test" reads as text.

    >>> tokenize("Fix_flaky test, now!")
    ['fix', 'flaky', 'test', 'now']
    """
    return _WORD.findall(text.lower().replace("_", " "))


class BM25:
    """Okapi BM25 over a fixed set of documents.

    Args:
        documents: the texts to rank (here: each lesson's precondition and action).
        k1: term-frequency saturation.
        b: length normalization.

    >>> bm = BM25(["fix a flaky test", "deploy the service", "fix the build"])
    >>> [round(s, 3) for s in bm.scores("fix flaky")]
    [1.341, 0.0, 0.49]
    """

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._docs = [Counter(tokenize(doc)) for doc in documents]
        self._lengths = [sum(doc.values()) for doc in self._docs]
        n = len(self._docs)
        self._avg_length = (sum(self._lengths) / n) if n else 0.0
        frequency: Counter[str] = Counter()
        for doc in self._docs:
            frequency.update(doc.keys())
        self._idf = {term: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for term, df in frequency.items()}

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every document for `query`, in document order."""
        terms = set(tokenize(query))
        out = []
        for doc, length in zip(self._docs, self._lengths, strict=True):
            norm = self.k1 * (1.0 - self.b + self.b * length / self._avg_length)
            score = 0.0
            for term in terms:
                tf = doc.get(term, 0)
                if tf:
                    score += self._idf[term] * tf * (self.k1 + 1.0) / (tf + norm)
            out.append(score)
        return out


def context_query(context: Mapping[str, str]) -> str:
    """The words of a context, as a retriever's query."""
    return " ".join(context.values())
