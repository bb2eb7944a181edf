"""Mining's pool: the lessons the model proposed, each near-copy (from any batch or the same reply) pooled into
the first wording proposed, with every trace cited for either."""

from __future__ import annotations

import dataclasses

from lamar.sleep.mining_prompt import ParsedLesson
from lamar.sleep.similarity import LessonWords, fewest_shared, normalize


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
        # Each scope's pooled lessons by (0 precondition or 1 action, content word; "" for a side with none),
        # as places in `_by_scope`: a reply of thousands of lessons is compared with those sharing words only.
        self._by_word: dict[tuple[tuple[str, str], ...], dict[tuple[int, str], list[int]]] = {}

    def add(self, lesson: ParsedLesson) -> None:
        scope = tuple(sorted(lesson.scope.items()))
        key = (normalize(lesson.precondition), normalize(lesson.action), scope)
        found = self._exact.get(key)
        if found is None:
            words = LessonWords.of(lesson.precondition, lesson.action)
            refused = text_refusal(lesson)
            # A lesson refused for its text pools with none: its near-copy in words that may be stored stands alone.
            found = None if refused else self._first_near(scope, words)
            if found is None:
                found = Pooled(lesson, words, set(), refused)
                self.items.append(found)
                if not refused:
                    held = self._by_scope.setdefault(scope, [])
                    index = self._by_word.setdefault(scope, {})
                    for word in _keys(words):
                        index.setdefault(word, []).append(len(held))
                    held.append(found)
            self._exact[key] = found
        found.trace_ids |= set(lesson.trace_ids)

    def _first_near(self, scope: tuple[tuple[str, str], ...], words: LessonWords) -> Pooled | None:
        """The first lesson pooled in `scope` whose similarity to `words` reaches the pool's, or None.

        A near-copy holds at least `fewest_shared` of the `n` words of each side (its precondition's overlap is a
        share of the union, which is at least `n`; its action may lack one plain word), so it holds one of any
        `n - need + 1` of them: the rarest of them, on the side where they name fewer lessons, give the lessons to
        compare, in the order pooled. A side without content words is a near-copy only of a side without any."""
        held = self._by_scope.get(scope, [])
        if self.similarity <= 0:  # every lesson reaches it, sharing words or not
            return held[0] if held else None
        index = self._by_word.get(scope, {})
        best: list[int] | None = None
        for side, said in enumerate((words.precondition_words, words.action_words)):
            if not said:
                keys = [(side, "")]
            else:
                need = fewest_shared(len(said), self.similarity, action=side == 1)
                keys = sorted(((side, w) for w in said), key=lambda k: len(index.get(k, ())))[:len(said) - need + 1]
            places = sorted({n for k in keys for n in index.get(k, ())})
            if best is None or len(places) < len(best):
                best = places
        return next((held[n] for n in best or () if held[n].words.similarity(words) >= self.similarity), None)


def _keys(words: LessonWords) -> list[tuple[int, str]]:
    """What `Pool` indexes a lesson by: each content word of each side, or "" for a side without any."""
    return [(side, w) for side, said in enumerate((words.precondition_words, words.action_words))
            for w in (said or {""})]


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
