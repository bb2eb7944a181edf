"""Mining's pool: the lessons the model proposed, each near-copy (from any batch or the same reply) pooled into
the first wording proposed, with every trace cited for either."""

from __future__ import annotations

import dataclasses

from lamar.sleep.mining_prompt import ParsedLesson
from lamar.sleep.similarity import LessonWords, normalize


@dataclasses.dataclass
class Pooled:
    """One lesson as first proposed, its words, the traces cited for it and its near-copies, and why its
    text alone cannot be stored ("" when it can)."""

    lesson: ParsedLesson
    words: LessonWords
    trace_ids: set[str]
    refused: str


class Pool:
    """The lessons of one mining, near-copies together: a lesson joins the first held in its scope whose
    `LessonWords.similarity` reaches `similarity`, as sleep would merge the two once stored."""

    def __init__(self, similarity: float) -> None:
        self.similarity = similarity
        self.items: list[Pooled] = []
        self._exact: dict[tuple[object, ...], Pooled] = {}
        self._by_scope: dict[tuple[tuple[str, str], ...], list[Pooled]] = {}

    def add(self, lesson: ParsedLesson) -> None:
        scope = tuple(sorted(lesson.scope.items()))
        key = (normalize(lesson.precondition), normalize(lesson.action), scope)
        found = self._exact.get(key)
        if found is None:
            words = LessonWords.of(lesson.precondition, lesson.action)
            refused = text_refusal(lesson)
            # A lesson refused for its text pools with none: its near-copy in words that may be stored stands alone.
            found = None if refused else next((item for item in self._by_scope.get(scope, ())
                                               if item.words.similarity(words) >= self.similarity), None)
            if found is None:
                found = Pooled(lesson, words, set(), refused)
                self.items.append(found)
                if not refused:
                    self._by_scope.setdefault(scope, []).append(found)
            self._exact[key] = found
        found.trace_ids |= set(lesson.trace_ids)


def text_refusal(lesson: ParsedLesson) -> str:
    """Why the lesson's words cannot become a candidate whatever traces support it, or "" when they can."""
    from lamar.safety.lessons import lesson_refusal
    from lamar.safety.placeholders import REDACTED

    if not lesson.precondition.strip() or not lesson.action.strip():
        return "its precondition or its action is empty once the characters a prompt never shows are taken out"
    unsafe = lesson_refusal(lesson.precondition, lesson.action, lesson.rationale, lesson.scope)
    if unsafe:
        return unsafe
    quoted = [found.group(0) for text in (lesson.precondition, lesson.action, lesson.rationale)
              if (found := REDACTED.search(text))]
    if quoted:  # the model copied what the prompt showed in a credential's place
        return (f"quotes a credential the traces had scrubbed ({quoted[0]}): an agent following it would use "
                "the placeholder, not the credential")
    return ""


__all__ = ["Pool", "Pooled", "text_refusal"]
