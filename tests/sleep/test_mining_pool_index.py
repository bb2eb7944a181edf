"""Mining's pool compares a lesson only with those that share enough words to be its near-copy, and pools exactly
as comparing it with every lesson held before it did: the same first wording, the same traces."""

from __future__ import annotations

import json
import random

import pytest

from lamar import Experience, Lamar, Scope, Trace
from lamar.models import ScriptedModel
from lamar.sleep.mining_pool import Pool, text_refusal
from lamar.sleep.mining_prompt import ParsedLesson
from lamar.sleep.similarity import NEAR_DUPLICATE, LessonWords, normalize
from tests.tools import load_tool

_WORDS = ("build", "cache", "lint", "schema", "token", "module", "the", "with", "using", "not", "never", "only",
          "first", "tests", "unit", "`make test`", "3.12", "ruff", "black", "production", "again", "fails")


def _every_pair(lessons: list[ParsedLesson], similarity: float) -> list[tuple[ParsedLesson, set[str]]]:
    """The pool as it was: each lesson compared with every one held in its scope before it."""
    items: list[tuple[ParsedLesson, LessonWords, set[str]]] = []
    by_scope: dict[object, list[tuple[ParsedLesson, LessonWords, set[str]]]] = {}
    exact: dict[object, tuple[ParsedLesson, LessonWords, set[str]]] = {}
    for lesson in lessons:
        scope = tuple(sorted(lesson.scope.items()))
        key = (normalize(lesson.precondition), normalize(lesson.action), scope)
        found = exact.get(key)
        if found is None:
            words = LessonWords.of(lesson.precondition, lesson.action)
            refused = text_refusal(lesson)
            found = None if refused else next((item for item in by_scope.get(scope, ())
                                               if item[1].similarity(words) >= similarity), None)
            if found is None:
                found = (lesson, words, set())
                items.append(found)
                if not refused:
                    by_scope.setdefault(scope, []).append(found)
            exact[key] = found
        found[2].update(lesson.trace_ids)
    return [(lesson, ids) for lesson, _, ids in items]


def _lessons(seed: int, n: int) -> list[ParsedLesson]:
    """Lessons of few words from a small vocabulary, each a base lesson with a word or two changed, so that many
    are near-copies of others; some with no content word at all, in two scopes."""
    rng = random.Random(seed)
    bases = [(rng.sample(_WORDS, rng.randint(0, 5)), rng.sample(_WORDS, rng.randint(0, 5))) for _ in range(n // 10)]

    def changed(words: list[str]) -> str:
        words = list(words)
        for _ in range(rng.randint(0, 2)):
            if words and rng.random() < 0.5:
                words.pop(rng.randrange(len(words)))
            else:
                words.insert(rng.randint(0, len(words)), rng.choice(_WORDS))
        return " ".join(words)

    return [ParsedLesson(changed(pre) or "when it fails", changed(act) or "retry", "", {"project": rng.choice("ab")},
                         (f"t{rng.randint(1, 9)}",)) for pre, act in (rng.choice(bases) for _ in range(n))]


@pytest.mark.parametrize("similarity", [NEAR_DUPLICATE, 0.5, 0.9, 1.0, 0.0])
@pytest.mark.parametrize("seed", range(4))
def test_the_pool_is_the_pool_of_every_pair(seed: int, similarity: float) -> None:
    lessons = _lessons(seed, 300)
    pool = Pool(similarity)
    for lesson in lessons:
        pool.add(lesson)
    expected = _every_pair(lessons, similarity)
    assert [(item.lesson, item.trace_ids) for item in pool.items] == expected
    distinct = {(normalize(x.precondition), normalize(x.action), x.scope["project"]) for x in lessons}
    assert len(expected) < len(distinct) or similarity == 1.0  # near-copies were pooled, not only the same words


def test_a_reply_of_many_lessons_gives_the_same_candidates() -> None:
    # The mining cost tool's reply, with near-copies of its lessons added: each pools into the first wording.
    tool = load_tool("mining_reply_cost")
    reply = json.loads(tool.reply(120))
    reply += [{**lesson, "action": lesson["action"].replace("first", "first of all"), "trace_ids": ["t4"]}
              for lesson in reply[:40]]
    context = {"project": "shop", "language": "swift"}
    lam = Lamar(":memory:", seed=1)
    lam.add(Experience("the web lint fails on rule 1", "run the fixer for rule 1", scope=Scope(context)))
    traces = [Trace(f"t{i}", context, time=1000.0 + i, input="fix the build", attempted=["swift build"],
                    tool_errors=["error: module map is stale"], outcome="reverted") for i in range(1, 5)]
    report = lam.sleep(traces=traces, model=ScriptedModel([json.dumps(reply)], model="scripted-v1"))
    candidates = report.of_kind("candidate")
    assert len(candidates) == 120
    assert [p.payload["experience"]["action"] for p in candidates] == [lesson["action"] for lesson in reply[:120]]
    assert [p.evidence[p.experience_ids[0]]["traces"] for p in candidates] == [4] * 40 + [3] * 80
