"""`propose_lessons` near its input limit: each lesson's words are read a bounded number of times, however
many lines the call holds, where every comparison of two lessons used to read both again."""

from __future__ import annotations

from pathlib import Path

import pytest

import lamar.sleep.similarity
import lamar_mcp.held
from lamar import Lamar
from lamar_mcp.bench import lesson_bullets
from lamar_mcp.tools import LamarTools


def test_the_words_of_each_line_are_read_a_bounded_number_of_times(store: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    text = lesson_bullets(4_000).replace("case", "scale case")  # words no other test proposes
    lines = text.count("\n")
    reads = []
    read = lamar.sleep.similarity.content_words
    monkeypatch.setattr(lamar.sleep.similarity, "content_words", lambda words: reads.append(words) or read(words))
    with Lamar(str(store)) as lam:
        done = LamarTools(lam).propose_lessons(text, {"language": "go"})
        assert done.count == lines > 80 and len(lam.experiences(scope={"language": "go"})) == lines
    # Two texts a lesson (precondition and action), each read once; a comparison reads none.
    assert len(reads) <= 2 * (lines + 3), (len(reads), lines)
    # Kept for one call only: a lesson erased after it must not stay in the server's memory.
    assert lamar_mcp.held._words.cache_info().currsize == 0
