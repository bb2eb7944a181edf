"""A subgraph retried by a `RetryPolicy` runs its recall node again: the failed attempt's
recall, still waiting for its outcome, goes to the retry instead of a second episode."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping

from langgraph.config import get_config

from lamar import Lamar, LamarError, Recall

# The recalls one recall node remembers for the retries of the tasks that ran them: a retry
# follows its failure within seconds, so only the newest few are ever looked up.
REMEMBERED = 1024

Key = tuple[str, str, str, str, tuple[tuple[str, str], ...]]


class Attempts:
    """The recalls of one recall node inside subgraphs, by the parent task that ran each.

    LangGraph runs a retried subgraph again from its start, under the same parent task id and a
    namespace with the attempt's number added (``sub:<task>|1|recall:<id>``); the state the
    failed attempt wrote is gone, so the recall node cannot tell from the state that the turn
    has its episode. It remembers the recall here instead: in a namespace with such a number, a
    recall for the same thread, parent task, subgraphs below it, turn and context that is still
    pending is reused, and each attempt takes each one once, so that two branches alike (one
    subgraph added twice, a `Send` fan-out) never share an episode.
    """

    def __init__(self) -> None:
        self._recalls: OrderedDict[Key, list[Recall]] = OrderedDict()
        self._taken: OrderedDict[tuple[str, Key], set[str]] = OrderedDict()
        self._lock = threading.Lock()

    def earlier(self, lamar: Lamar, context: Mapping[str, str], marker: str | None) -> Recall | None:
        """A failed attempt's recall this one repeats, still pending and not yet taken by
        another branch of this attempt; else None."""
        found = _segments()
        if found is None or not any(segment.isdigit() for segment in found[1]):
            return None  # a first attempt (or a top-level node, whose retry re-runs only itself)
        thread, segments = found
        first = next(i for i, segment in enumerate(segments) if segment.isdigit())
        key = _key(thread, segments[:first], segments[first:], context, marker)
        attempt = "|".join(segments[:first + 1])
        while True:
            with self._lock:
                taken = self._taken.setdefault((attempt, key), set())
                self._taken.move_to_end((attempt, key))
                while len(self._taken) > REMEMBERED:
                    self._taken.popitem(last=False)
                rec = next((r for r in self._recalls.get(key, ()) if r.episode_id not in taken), None)
                if rec is None:
                    return None
                taken.add(rec.episode_id)  # taken even when done, so no branch asks the store twice
            try:  # an episode the earlier attempt reported (a node failed after the report) is done
                if lamar.pending(only=[rec.episode_id]):
                    return rec
            except LamarError:
                return None

    def remember(self, rec: Recall, context: Mapping[str, str], marker: str | None) -> None:
        found = _segments()
        if found is None or not found[1]:
            return
        thread, segments = found
        plain = [segment for segment in segments if not segment.isdigit()]
        with self._lock:
            for cut in range(1, len(plain) + 1):  # a retry may be of any enclosing subgraph
                recalls = self._recalls.setdefault(_key(thread, plain[:cut], plain[cut:], context, marker), [])
                if all(r.episode_id != rec.episode_id for r in recalls):  # a retry's reuse is no new recall
                    recalls.append(rec)
            while len(self._recalls) > REMEMBERED:
                self._recalls.popitem(last=False)


def _segments() -> tuple[str, list[str]] | None:
    """The thread and the segments of the enclosing (sub)graphs' namespace, None outside a run."""
    try:
        configurable = get_config().get("configurable", {})
    except RuntimeError:
        return None
    parent = str(configurable.get("checkpoint_ns", "")).rpartition("|")[0]
    return str(configurable.get("thread_id")), parent.split("|") if parent else []


def _key(thread: str, retried: list[str], below: list[str], context: Mapping[str, str], marker: str | None) -> Key:
    # Below the retried segment only the subgraphs' names are kept: their task ids change with
    # every attempt, while the names tell apart two subgraphs inside the retried one.
    names = "|".join(segment.partition(":")[0] for segment in below if not segment.isdigit())
    return thread, "|".join(retried), names, marker or "", tuple(sorted(context.items()))
