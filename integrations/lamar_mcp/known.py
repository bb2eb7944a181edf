"""The lessons a server compares proposals with and spells recall's labels by, kept in step with the
store's log: each look reads the events since the last one, and every lesson again only after an
event that changed a lesson."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import cast

from lamar import Experience, Lamar, LamarError, Status, UnknownExperience
from lamar.sleep.similarity import LessonWords, fewest_shared, normalize
from lamar.store.base import Event, StoredText, TextStore, folded_rows
from lamar_mcp.held import lesson_words, near

# Events that add no lesson and change none of a lesson's words, scope or status: skipped. An
# experience event adds one lesson; any other kind (a status, an edit, an erase, a snapshot, ...)
# has every lesson read again, which keeps this from knowing what each kind does to a lesson.
_NO_LESSON = frozenset({"episode", "outcome", "applied", "compact"})

Mark = tuple[int, int]
"""Where a look left a scope's lessons: the reads of every lesson so far, and the scope's count."""
_Key = tuple[tuple[str, str], ...]  # a scope's items
_Lesson = tuple[LessonWords, tuple[str, str], _Key]  # words, normalized texts, scope


class KnownLessons:
    """What the near-copy check and the spelling of a scope need of every lesson, read incrementally.

    It says only whether a proposal may have a copy (`look`); the tools then read the lessons
    from the engine to answer, so the answer, its order and the held lesson's status are the
    engine's. Every lesson another process added is seen: the store's `read(after)` returns every
    committed event after a seq, and in PostgreSQL's fold mode, where an event may commit below a
    seq already read, the look starts again from the seq its rows say is settled.

    Args:
        lamar: the engine whose store is followed.
    """

    def __init__(self, lamar: Lamar) -> None:
        self.lamar = lamar
        self._lock = threading.Lock()  # tool calls run in worker threads at once
        self._lessons: dict[str, _Lesson] | None = None
        self._scopes: dict[_Key, list[str]] = {}  # the ids of each scope, in the order learned
        # Each scope's lessons by (0 precondition or 1 action, content word; "" when it has none)
        self._words: dict[_Key, dict[tuple[int, str], set[str]]] = {}
        self._texts: dict[tuple[_Key, tuple[str, str]], set[str]] = {}  # by normalized texts
        self._labels: dict[str, set[str]] = {}  # the scope labels of the live lessons
        self._reloads = 0  # how many times every lesson was read: a mark from before one is void
        self._after = 0  # every event through this seq was looked at
        self._seen: set[int] = set()  # the seqs above `_after` looked at already

    def forget(self) -> None:
        """Drop every lesson's words (an erase: its text must not stay in the server's memory)."""
        with self._lock:
            self._lessons, self._scopes, self._words, self._texts, self._labels = None, {}, {}, {}, {}

    def look(self, exp: Experience, but: str | None = None, after: Mark | None = None) -> tuple[bool, Mark]:
        """Whether a lesson of `exp`'s scope (other than `but`) has its id, its words, or is a near-copy of
        it, among those learned since the look that returned `after` (None: among all); and this look's mark.

        A lesson's words change only by an event that has every lesson read again, which voids the
        marks: a look after one compares every lesson of the scope."""
        return self.look_all([exp], but, after)[0]

    def look_all(self, exps: list[Experience], but: str | None = None,
                 after: Mark | None = None) -> list[tuple[bool, Mark]]:
        """`look` at each of `exps`, the store read once for all of them."""
        with self._lock:
            lessons = self._sync()
            out = []
            for exp in exps:
                key = exp.scope.items_key
                ids = self._scopes.get(key, [])
                same = (normalize(exp.precondition), normalize(exp.action))
                if after is not None and after[0] == self._reloads:
                    maybe: Iterable[str] = ids[after[1]:]
                else:
                    maybe = [exp.id, *self._texts.get((key, same), ()), *self._sharing(key, lesson_words(exp), ids)]
                out.append((any(i != but and i in lessons and lessons[i][2] == key and (
                    i == exp.id or lessons[i][1] == same or near(lessons[i][0], exp)) for i in maybe),
                    (self._reloads, len(ids))))
            return out

    def _sharing(self, key: _Key, words: LessonWords, ids: list[str]) -> Iterable[str]:
        """The lessons of scope `key` that share enough words with `words` to be a near-copy of it.

        A near-copy's words overlap by at least NEAR_DUPLICATE in the precondition and in the
        action: it holds at least `need` of the query's `n` words of each (`fewest_shared`: an action's
        near-copy may lack one plain word), so it holds one of any
        n - need + 1 of them. The rarest of them, on the side where they name fewer lessons, give
        the lessons to compare (`ids`, the scope's, when they name as many). A side without content
        words matches only a side without any.
        """
        index = self._words.get(key, {})
        best: tuple[int, list[tuple[int, str]]] | None = None
        for side, query in enumerate((words.precondition_words, words.action_words)):
            if not query:
                keys = [(side, "")]
            else:  # a share of the union, which is at least n: a share of n reaches it too
                need = fewest_shared(len(query), action=side == 1)
                keys = sorted(((side, w) for w in query), key=lambda k: len(index.get(k, ())))[:len(query) - need + 1]
            size = sum(len(index.get(k, ())) for k in keys)
            if best is None or size < best[0]:
                best = (size, keys)
        assert best is not None
        return ids if best[0] >= len(ids) else set().union(*(index.get(k, set()) for k in best[1]))

    def scopes(self) -> dict[str, list[str]]:
        """The scope keys the live lessons use (retired ones' aside), each with its values (sorted)."""
        with self._lock:
            self._sync()
            return {key: sorted(values) for key, values in sorted(self._labels.items())}

    def unscoped(self, ids: Sequence[str]) -> bool:
        """Whether none of the lessons `ids` has a scope (recall's hint; False when that cannot be told).

        Their scopes are those kept here, brought up to date as a look does: the events since the
        last look (a recall's own episode among them), not the lessons again."""
        try:
            with self._lock:
                lessons = self._sync()
                if any(lessons[i][2] for i in ids if i in lessons):
                    return False
            # Not learned yet (committed below a seq already read, in PostgreSQL's fold mode): asked one by one.
            return not any(self.lamar.get(i).scope for i in ids if i not in lessons)
        except LamarError:  # a hint is advice: a store that fails here must not cost the recall its answer
            return False

    def _sync(self) -> dict[str, _Lesson]:
        store = self.lamar.store
        rows = folded_rows(store)
        settled = rows.settled() if rows is not None else None  # before the read: all through it is read
        # Undecoded where the store can: the episodes skipped here are most of the log, each
        # naming every lesson eligible for it, and a recall reads the events since the last one.
        events: Sequence[Event | StoredText] = (store.read_texts(self._after) if isinstance(store, TextStore)
                                                else store.read(self._after))
        new = [e for e in events if e.seq not in self._seen]
        if self._lessons is None or any(e.kind != "experience" and e.kind not in _NO_LESSON for e in new):
            self._lessons = None  # until every lesson is read: a read that fails is made again
            self._reload()
        else:
            for row in new:
                if row.kind != "experience":
                    continue
                event = row if isinstance(row, Event) else cast("TextStore", store).decoded(row)
                if event.data.get("id") not in self._lessons:
                    try:
                        self._add(self._lessons, self.lamar.get(event.data["id"]))
                    except UnknownExperience:
                        pass  # refused by the fold (another writer's checkpoint took its id)
        last = events[-1].seq if events else self._after
        self._after = last if rows is None else max(self._after, settled or 0)
        self._seen = {e.seq for e in events if e.seq > self._after} | {s for s in self._seen if s > self._after}
        assert self._lessons is not None
        return self._lessons

    def _reload(self) -> None:
        every = self.lamar.experiences()
        lessons: dict[str, _Lesson] = {}
        self._scopes, self._words, self._texts, self._labels = {}, {}, {}, {}
        for exp in every:
            self._add(lessons, exp)
        self._lessons = lessons
        self._reloads += 1

    def _add(self, lessons: dict[str, _Lesson], exp: Experience) -> None:
        key, words, texts = exp.scope.items_key, lesson_words(exp), (normalize(exp.precondition), normalize(exp.action))
        lessons[exp.id] = (words, texts, key)
        self._scopes.setdefault(key, []).append(exp.id)
        self._texts.setdefault((key, texts), set()).add(exp.id)
        index = self._words.setdefault(key, {})
        for side, found in enumerate((words.precondition_words, words.action_words)):
            for word in found or ("",):
                index.setdefault((side, word), set()).add(exp.id)
        if exp.status is not Status.RETIRED:
            for key, value in exp.scope.items():
                self._labels.setdefault(key, set()).add(value)


__all__ = ["KnownLessons", "Mark"]
