"""`Marks`: the fold's undo journal, so that a replaced outcome is folded again from a mark before
the outcome it replaces instead of from the start of the log (`Follower.fold_tail`)."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lamar.policy.lesson import LessonState

if TYPE_CHECKING:
    from lamar.state.episode import EpisodeRecord
    from lamar.store.base import Event, StoredText

SPACING = 128  # events between two marks at least: a rewind folds at most this many events it would not need
KEPT = 24  # marks kept, thinned so that they lie dense near the end of the log and sparse before
# Events between two marks per lesson: a mark copies each lesson at most once, so a fold copies at
# most one lesson per this many events, however sparsely its outcomes touch the lessons.
_PER_LESSON = 2
# Lesson copies all marks may hold, beyond one per lesson: past it the oldest mark goes (a
# replacement of an outcome older than every mark refolds the whole log).
_COPIES = 256

# What an outcome changes in its episode's record, and so what a mark keeps of it.
_OUTCOME_FIELDS = ("reward", "signal", "reports", "outcome_seq", "settled")
_outcome_of = operator.attrgetter(*_OUTCOME_FIELDS)


class Mark:
    """The fold as it stood after the event at `seq`: its reward sums, and (copied when an event
    after it first changed them) the lessons and episode outcomes that changed since. `count`: the
    episode and outcome events folded up to it (`Marks.count`)."""

    __slots__ = ("seq", "last", "sums", "lessons", "episodes", "count")

    def __init__(self, seq: int, last: Event | StoredText | None, sums: tuple[int, int, float, float]) -> None:
        self.seq, self.last, self.sums = seq, last, sums  # sums: reports, reward_n, reward_mean, reward_m2
        self.count = 0
        self.lessons: dict[str, LessonState] = {}
        self.episodes: dict[str, tuple[Any, ...]] = {}

    def keep_lessons(self, ids: Iterable[str], lessons: Mapping[str, LessonState]) -> None:
        """Copy each lesson of `ids` as it is now, unless this mark holds it already."""
        kept = self.lessons
        for exp_id in ids:
            if exp_id not in kept and (state := lessons.get(exp_id)) is not None:
                kept[exp_id] = state.copy()

    def keep_episode(self, record: EpisodeRecord) -> None:
        if record.id not in self.episodes:
            self.episodes[record.id] = _outcome_of(record)

    def absorb(self, newer: Mark) -> None:
        """Take over a later mark's copies of what changed first after it (a mark let go)."""
        for exp_id, state in newer.lessons.items():
            self.lessons.setdefault(exp_id, state)
        for episode_id, fields in newer.episodes.items():
            self.episodes.setdefault(episode_id, fields)


class Marks:
    """Marks every `spacing` episode and outcome events, once `start`ed; any other event (a lesson
    added, edited, merged, an erasure, a compaction) lets them all go, since nothing here can undo it."""

    def __init__(self) -> None:
        # Off until the fold meets a replacement: a process whose log has none copies nothing.
        self.on = False
        self.marks: list[Mark] = []
        self.current: Mark | None = None  # the last mark: the next change is copied into it
        # Episode and outcome events folded while on (`FoldCache._marked`): the spacing counts events,
        # not seqs, since the namespaces of a PostgreSQL database share one sequence, whose seqs a
        # busy server's other namespaces take between this log's events.
        self.count = 0
        # A mark is set before the next episode or outcome event at seq `next` or later, once `count` reaches `due`.
        self.next = 0
        self.due = 0
        self.spacing = SPACING  # events from a mark to the next (see add)
        self._planned: list[int] | None = None

    def start(self) -> None:
        """Mark from the next episode or outcome event on (kept through `clear`)."""
        self.on = True
        self._next()

    def clear(self) -> None:
        self.marks.clear()
        self.current = None
        self._next()

    def plan(self, seqs: list[int] | None) -> None:
        """Mark only before the events at these seqs, SPACING, 2 SPACING, 4 SPACING... events
        from their end, in their second half, while they are folded in one run (None: every
        SPACING again). A mark every SPACING events of a whole log would copy every lesson once
        per mark, and every change after the first mark is checked against it; an outcome in
        the first half is about as cheap to replace by folding the whole log again."""
        n = len(seqs or ())
        self._planned = None if seqs is None else sorted(
            {seqs[n - (SPACING << j)] for j in range(n.bit_length()) if 2 * (SPACING << j) <= n}, reverse=True)
        self._next()

    def _next(self) -> None:
        planned = self._planned
        self.due = 0
        if not self.on:
            self.next = 1 << 62
        elif planned is not None:
            self.next = planned[-1] if planned else 1 << 62
        else:
            self.next = 0
            if self.marks:
                self.due = self.marks[-1].count + self.spacing

    def add(self, mark: Mark, seq: int, lessons: int) -> None:
        """Set `mark` before the event at `seq` (which `count` holds already)."""
        mark.count = self.count - 1
        marks = self.marks
        marks.append(mark)
        self.current = mark
        planned = self._planned
        while planned and planned[-1] <= seq:
            planned.pop()
        if len(marks) > KEPT:
            # Let go of the mark whose going leaves the smallest gap for its distance from the end:
            # a replacement's refold then overshoots the outcome it replaces by a bounded fraction.
            end = mark.count
            i = min(range(1, len(marks) - 1),
                    key=lambda j: (marks[j + 1].count - marks[j - 1].count) / (end - marks[j + 1].count + SPACING))
            marks[i - 1].absorb(marks.pop(i))
        while len(marks) > 1 and sum(len(m.lessons) for m in marks) > lessons + _COPIES:
            del marks[0]  # only a rewind to it reads its copies
        self.spacing = max(SPACING, _PER_LESSON * lessons)
        self._next()

    def drop_from(self, seq: int) -> None:
        """Let go of the marks at or after `seq` (the fold before it changed), their copies kept by the mark before."""
        marks = self.marks
        while marks and marks[-1].seq >= seq:
            newer = marks.pop()
            if marks:
                marks[-1].absorb(newer)
        self.current = marks[-1] if marks else None
        self._next()

    def to_data(self, episodes: int, copies: int) -> tuple[list[list[Any]], set[str]]:
        """The newest marks whose copies name at most `episodes` episodes and hold at most `copies`
        lessons in all (a state loads each of them: its size), as JSON-safe data, and
        the ids of those episodes: a saved state carries both (`lamar.state.saved.state_text`), so that
        a process resumed from it replaces a recent outcome from a mark, not by folding the whole log.
        A suffix of the marks suffices: a rewind reads only the mark it goes back to and the later ones."""
        out: list[list[Any]] = []
        named: set[str] = set()
        for mark in reversed(self.marks):
            copies -= len(mark.lessons)
            if copies < 0 or len(named | mark.episodes.keys()) > episodes:
                break
            named.update(mark.episodes)
            kept = [[i, {k: v for k, v in s.to_dict().items() if k != "experience"}] for i, s in mark.lessons.items()]
            episodes_of = [[i, list(f)] for i, f in mark.episodes.items()]
            out.append([mark.seq, list(mark.sums), kept, episodes_of, self.count - mark.count])
        out.reverse()
        return out, named

    def load(self, data: Sequence[Any], seq: int, lessons: Mapping[str, LessonState]) -> None:
        """Take the marks of `to_data` (a state folded through `seq`, whose `lessons` are loaded); raises
        KeyError, TypeError or ValueError, with nothing taken, when they are not what it gives."""
        marks: list[Mark] = []
        for at, sums, copies, episodes, back in data:
            n, reward_n, mean, m2 = sums
            if not isinstance(at, int) or not (marks[-1].seq if marks else -1) < at <= seq:
                raise ValueError(f"a saved mark at seq {at!r} is out of order")
            if not isinstance(back, int) or not 0 <= back < (-marks[-1].count if marks else 1 << 62):
                raise ValueError(f"a saved mark {back!r} events before the state's end is out of order")
            mark = Mark(at, None, (int(n), int(reward_n), float(mean), float(m2)))
            mark.count = -back  # counted from the state's end, where this fold's count starts
            for exp_id, raw in copies:
                mark.lessons[exp_id] = LessonState.from_dict(raw, lessons[exp_id].experience)
            for episode_id, fields in episodes:
                if not isinstance(episode_id, str) or len(fields) != len(_OUTCOME_FIELDS):
                    raise ValueError(f"a saved mark names episode {episode_id!r} as {fields!r}")
                mark.episodes[episode_id] = tuple(fields)
            marks.append(mark)
        if marks:
            self.on = True
            self.count = 0
            self.marks, self.current = marks, marks[-1]
            self.spacing = max(SPACING, _PER_LESSON * len(lessons))
            self._next()

    def _last_before(self, before: int) -> int | None:
        marks = self.marks
        return next((i for i in range(len(marks) - 1, -1, -1) if marks[i].seq < before), None)

    def before(self, seq: int) -> Mark | None:
        """The last mark before seq `seq` (the one `rewind` goes back to), or None."""
        at = self._last_before(seq)
        return None if at is None else self.marks[at]

    def rewind(self, before: int, lessons: Mapping[str, LessonState], episodes: Mapping[str, EpisodeRecord],
               restored: set[str] | None = None) -> Mark | None:
        """Put the lessons and episode outcomes back as they stood at the last mark before seq
        `before` and return that mark (the caller restores its sums), or None when there is none.
        The ids of the lessons put back are added to `restored`, when given."""
        marks = self.marks
        at = self._last_before(before)
        if at is None:
            return None
        for mark in reversed(marks[at:]):  # newest first: the oldest copy of each is the one left
            if restored is not None:
                restored.update(mark.lessons)
            for exp_id, saved in mark.lessons.items():
                live = lessons[exp_id]  # in place: the scope index and views hold the live object
                for name in LessonState.__slots__:
                    setattr(live, name, getattr(saved, name))
            for episode_id, fields in mark.episodes.items():
                record = episodes.get(episode_id)
                if record is not None:
                    for name, value in zip(_OUTCOME_FIELDS, fields, strict=True):
                        setattr(record, name, value)
        mark = self.current = marks[at]
        del marks[at + 1:]
        mark.lessons, mark.episodes = {}, {}
        self.count = mark.count  # the refold counts the events after it again
        self._next()
        return mark


__all__ = ["KEPT", "SPACING", "Mark", "Marks"]
