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

Key = tuple[str, str, str, tuple[tuple[str, str], ...]]


class Attempts:
    """The recalls of one recall node inside subgraphs, by the parent task that ran each.

    LangGraph runs a retried subgraph again from its start, under the same parent task id and a
    namespace with the attempt's number added (``sub:<task>|1|recall:<id>``); the state the
    failed attempt wrote is gone, so the recall node cannot tell from the state that the turn
    has its episode. It remembers the recall here instead: in a namespace with such a number, a
    recall for the same thread, parent task, turn and context that is still pending is reused.
    """

    def __init__(self) -> None:
        self._recalls: OrderedDict[Key, Recall] = OrderedDict()
        self._lock = threading.Lock()

    def earlier(self, lamar: Lamar, context: Mapping[str, str], marker: str | None) -> Recall | None:
        """The failed attempt's recall this one repeats, if it is still pending; else None."""
        found = _segments()
        if found is None or not any(segment.isdigit() for segment in found[1]):
            return None  # a first attempt (or a top-level node, whose retry re-runs only itself)
        first = next(i for i, segment in enumerate(found[1]) if segment.isdigit())
        key = _key(found[0], found[1][:first], context, marker)
        with self._lock:
            rec = self._recalls.get(key)
        if rec is None:
            return None
        try:  # an episode the earlier attempt reported (a node failed after the report) is done
            still = bool(lamar.pending(only=[rec.episode_id]))
        except LamarError:
            return None
        return rec if still else None

    def remember(self, rec: Recall, context: Mapping[str, str], marker: str | None) -> None:
        found = _segments()
        if found is None or not found[1]:
            return
        thread, segments = found
        plain = [segment for segment in segments if not segment.isdigit()]
        with self._lock:
            for cut in range(1, len(plain) + 1):  # a retry may be of any enclosing subgraph
                self._recalls[_key(thread, plain[:cut], context, marker)] = rec
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


def _key(thread: str, segments: list[str], context: Mapping[str, str], marker: str | None) -> Key:
    # Deeper segments than the retried one carry task ids that change with every attempt.
    return thread, "|".join(segments), marker or "", tuple(sorted(context.items()))
