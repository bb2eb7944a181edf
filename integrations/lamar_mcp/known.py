"""The lessons a server compares proposals with, kept in step with the store's log: each look reads
the events since the last one, and every lesson again only after an event that changed a lesson."""

from __future__ import annotations

import threading

from lamar import Experience, Lamar, Status, UnknownExperience
from lamar.sleep.similarity import LessonWords, normalize
from lamar.store.base import folded_rows
from lamar_mcp.held import lesson_words, near

# Events that add no lesson and change none of a lesson's words, scope or status: skipped. An
# experience event adds one lesson; any other kind (a status, an edit, an erase, a snapshot, ...)
# has every lesson read again, which keeps this from knowing what each kind does to a lesson.
_NO_LESSON = frozenset({"episode", "outcome", "applied", "compact"})

Mark = tuple[int, int]
"""Where a look left a scope's lessons: the reads of every lesson so far, and the scope's count."""


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
        self._lessons: dict[str, tuple[LessonWords, tuple[str, str]]] | None = None  # words, normalized texts
        self._scopes: dict[tuple[tuple[str, str], ...], list[str]] = {}  # the ids of each scope
        self._labels: dict[str, set[str]] = {}  # the scope labels of the live lessons
        self._reloads = 0  # how many times every lesson was read: a mark from before one is void
        self._after = 0  # every event through this seq was looked at
        self._seen: set[int] = set()  # the seqs above `_after` looked at already

    def forget(self) -> None:
        """Drop every lesson's words (an erase: its text must not stay in the server's memory)."""
        with self._lock:
            self._lessons, self._scopes, self._labels = None, {}, {}

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
                ids = self._scopes.get(exp.scope.items_key, [])
                start = after[1] if after is not None and after[0] == self._reloads else 0
                same = (normalize(exp.precondition), normalize(exp.action))
                out.append((any(i != but and (i == exp.id or lessons[i][1] == same or near(lessons[i][0], exp))
                                for i in ids[start:]), (self._reloads, len(ids))))
            return out

    def scopes(self) -> dict[str, list[str]]:
        """The scope keys the live lessons use, each with its values (sorted), as `context.scopes`."""
        with self._lock:
            self._sync()
            return {key: sorted(values) for key, values in sorted(self._labels.items())}

    def _sync(self) -> dict[str, tuple[LessonWords, tuple[str, str]]]:
        rows = folded_rows(self.lamar.store)
        settled = rows.settled() if rows is not None else None  # before the read: all through it is read
        events = self.lamar.store.read(self._after)
        new = [e for e in events if e.seq not in self._seen]
        if self._lessons is None or any(e.kind != "experience" and e.kind not in _NO_LESSON for e in new):
            self._lessons = None  # until every lesson is read: a read that fails is made again
            self._reload()
        else:
            for event in new:
                if event.kind == "experience" and event.data.get("id") not in self._lessons:
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
        lessons: dict[str, tuple[LessonWords, tuple[str, str]]] = {}
        self._scopes, self._labels = {}, {}
        for exp in every:
            self._add(lessons, exp)
        self._lessons = lessons
        self._reloads += 1

    def _add(self, lessons: dict[str, tuple[LessonWords, tuple[str, str]]], exp: Experience) -> None:
        lessons[exp.id] = (lesson_words(exp), (normalize(exp.precondition), normalize(exp.action)))
        self._scopes.setdefault(exp.scope.items_key, []).append(exp.id)
        if exp.status is not Status.RETIRED:
            for key, value in exp.scope.items():
                self._labels.setdefault(key, set()).add(value)


__all__ = ["KnownLessons", "Mark"]
