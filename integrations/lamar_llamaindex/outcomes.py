"""Reporting what happened after a query: find its episodes, report each once."""

from __future__ import annotations

import contextlib
import contextvars
import logging
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from llama_index.core.schema import BaseNode, NodeWithScore

from lamar import Experience, InvalidArgument, Lamar, LamarError, Signal, StoreError
from lamar.shown import shown_lesson
from lamar.signals import to_reward
from lamar_llamaindex.nodes import engine, episode_id_of

logger = logging.getLogger(__name__)
_OPEN_LOGS: contextvars.ContextVar[tuple[EpisodeLog, ...]] = contextvars.ContextVar(
    "lamar_llamaindex_episode_logs", default=())


class EpisodeLog:
    """The episode ids logged by Lamar postprocessors inside one `track_episodes()` block.

    Attributes:
        ids: every episode id, in the order the recalls happened.
        contexts: the context each episode was recalled for, by episode id.
        lessons: the lessons each episode injected, ``(experience id, text)`` best first, by episode id.
    """

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.contexts: dict[str, dict[str, str]] = {}
        self.lessons: dict[str, list[tuple[str, str]]] = {}

    @property
    def last(self) -> str | None:
        """The most recent episode id, or None when no recall happened in the block."""
        return self.ids[-1] if self.ids else None

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.ids))

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"EpisodeLog({self.ids!r})"


@contextlib.contextmanager
def track_episodes(lamar: Lamar | None = None, *,
                   failed_outcome: Signal | float | str | None = None) -> Iterator[EpisodeLog]:
    """Collect the episodes Lamar logs (postprocessor, memory block, tools) while the block runs.

    An episode's id travels in the metadata of the lesson nodes Lamar chose. When Lamar
    chose none (every wanted lesson was held out for the control group) the response has
    no such node, yet the episode still needs its outcome: the log holds it whatever the
    response carries.

    Each request gets its own log (a context variable), so concurrent requests in
    threads or asyncio tasks do not see each other's episodes. Blocks nest: an outer
    log also holds the inner block's episodes.

    With `lamar`, a block that raises, or is cancelled, settles the episodes it logged that
    have no outcome yet: expired (the default), or given `failed_outcome`; then the error
    propagates. A failed query or agent run leaves no episode pending (a late report still
    replaces it). A `failed_outcome` that is not a Signal, its name or a reward in [-1, 1] is
    refused when the block starts (`InvalidReward`), not found out when a run fails.

    >>> with track_episodes() as log:
    ...     pass  # response = query_engine.query("...")
    >>> log.ids, log.last
    ([], None)
    """
    if lamar is not None:
        engine(lamar, "track_episodes")
    if failed_outcome is not None:
        to_reward(failed_outcome)  # refused now: at failure time a bad one would leave the episodes pending unsaid
    log = EpisodeLog()
    token = _OPEN_LOGS.set((*_OPEN_LOGS.get(), log))
    try:
        yield log
    except BaseException as exc:  # a cancelled run (a timeout, task.cancel()) fails with no Exception
        if lamar is not None:
            settle_failed(lamar, log, exc, failed_outcome)
        raise
    finally:
        _OPEN_LOGS.reset(token)


def settle_failed(lamar: Lamar, log: EpisodeLog, error: BaseException,
                  failed_outcome: Signal | float | str | None = None) -> list[str]:
    """Expire (or give `failed_outcome` to) the episodes of `log` that have no outcome yet."""
    settled = []
    for episode in log:
        try:
            if failed_outcome is None:
                done = lamar.expire(episode, f"the run failed: {type(error).__name__}")
            else:
                lamar.report(episode, failed_outcome)
                done = True
        except StoreError as exc:  # fail open, but said: the run's own error propagates
            logger.warning("Lamar could not settle episode %s of a failed run (it stays pending): %s", episode, exc)
            done = False
        except LamarError:
            done = False  # reported already, or not this store's: leave it as it is
        if done:
            settled.append(episode)
    return settled


def open_log(log: EpisodeLog) -> None:
    """Start collecting into `log` in this context (for callers that cannot use a with-block)."""
    _OPEN_LOGS.set((*_OPEN_LOGS.get(), log))


def close_log(log: EpisodeLog) -> None:
    """Stop collecting into `log` in this context; a no-op when it is not open here."""
    _OPEN_LOGS.set(tuple(open_ for open_ in _OPEN_LOGS.get() if open_ is not log))


def record_episode(episode_id: str, context: Mapping[str, str], lessons: Iterable[Experience] = ()) -> None:
    """Add an episode, and the lessons it injected, to every log open in this context."""
    # As the prompt's fence shows them: one stored before add's checks that it leaves out was not injected.
    shown = ((lesson.id, shown_lesson(lesson, fields=False)) for lesson in lessons)
    injected = [(exp_id, lesson.text) for exp_id, lesson in shown if not lesson.left_out]
    for log in _OPEN_LOGS.get():
        log.ids.append(episode_id)
        log.contexts[episode_id] = dict(context)
        log.lessons[episode_id] = list(injected)


def episode_ids(source: Any) -> list[str]:
    """The distinct episode ids a response, nodes, an `EpisodeLog` or ids point to, in order.

    Args:
        source: an episode id; an `EpisodeLog`; a response (anything with
            ``source_nodes``, such as `Response` or `StreamingResponse`); an agent's result
            (`AgentOutput`, whose tool calls carry the search tool's episodes) or one
            `ToolCallResult`; a node or `NodeWithScore`; or an iterable of ids and nodes.

    Returns:
        Each id once; empty when nothing carries a Lamar episode.
    """
    found: list[str] = []
    for item in _flatten(source):
        episode = item if isinstance(item, str) else episode_id_of(item)
        if episode is not None and episode not in found:
            found.append(episode)
    return found


def _flatten(source: Any) -> Iterator[str | BaseNode | NodeWithScore]:
    if isinstance(source, (str, BaseNode, NodeWithScore)):
        yield source
    elif hasattr(source, "source_nodes"):
        yield from source.source_nodes or ()
    elif hasattr(source, "tool_calls") or hasattr(source, "tool_output"):
        yield from _tool_outputs(source)  # before Iterable: an agent's output iterates as a dict would
    elif isinstance(source, Iterable):
        for item in source:
            if not isinstance(item, (str, BaseNode, NodeWithScore)):
                held = getattr(item, "episode_id", None)  # lam.pending()'s PendingEpisode, a Recall
                hint = f" (pass its episode_id, {held!r})" if isinstance(held, str) else ""
                raise InvalidArgument(f"expected episode ids or nodes; got {type(item).__name__}{hint}")
            yield item
    else:
        raise InvalidArgument(
            f"cannot find Lamar episodes in {type(source).__name__}: pass a response, nodes, "
            "an EpisodeLog or an episode id"
        )


def _tool_outputs(source: Any) -> Iterator[BaseNode | NodeWithScore]:
    """The nodes the tools of an agent's run (`AgentOutput`) or one tool call (`ToolCallResult`)
    returned: the search tool's `Document`, a query engine tool's source nodes. Other raw outputs
    (a tool's plain text) are no episode ids."""
    for call in getattr(source, "tool_calls", None) or [source]:
        raw = getattr(getattr(call, "tool_output", None), "raw_output", None)
        if isinstance(raw, (BaseNode, NodeWithScore)):
            yield raw
        elif hasattr(raw, "source_nodes"):
            yield from raw.source_nodes or ()


def report_response(lamar: Lamar, response: Any, signal: Signal | float | str, *,
                    replace: bool = False) -> list[str]:
    """Report one outcome for every Lamar episode behind a query, once per episode.

    Args:
        lamar: the engine the postprocessor recalled from.
        response: what the query returned (its source nodes carry the episode id), what an
            agent's run returned (its search tool calls carry theirs), an `EpisodeLog` from
            `track_episodes`, nodes, or an episode id.
        signal: a `Signal`, its name, or a reward in [-1, 1].
        replace: replace an outcome already reported for an episode.

    Returns:
        The episode ids reported; empty when the response carries no episode (no lesson
        was among the retrieved nodes, or every wanted lesson was held out: use
        `track_episodes` to catch those too). An agent's output that carries none also
        gives a `UserWarning`: a `LamarMemoryBlock`'s turn is in it only through a search.

    Raises:
        DuplicateReport: an episode already has an outcome and `replace` is False
            (episodes earlier in the list stay reported).
        UnknownEpisode: an id that this store never logged.
        InvalidReward: `signal` is not one, also when the response carries no episode.
    """
    engine(lamar, "report_response")
    to_reward(signal)  # refused always: else a typo would raise only on the queries that recalled
    ids = episode_ids(response)
    _warn_if_an_agent_output_holds_none(response, ids)
    for episode in ids:
        lamar.report(episode, signal, replace=replace)
    return ids


async def areport_response(lamar: Lamar, response: Any, signal: Signal | float | str, *,
                           replace: bool = False) -> list[str]:
    """`report_response` without blocking the event loop."""
    engine(lamar, "areport_response")
    to_reward(signal)
    ids = episode_ids(response)
    _warn_if_an_agent_output_holds_none(response, ids)
    for episode in ids:
        await lamar.areport(episode, signal, replace=replace)
    return ids


def _warn_if_an_agent_output_holds_none(response: Any, ids: list[str]) -> None:
    """An agent's output carries only its search tool's episodes: the turn of a `LamarMemoryBlock`
    is in it only when the agent searched, and an empty result alone would leave that turn pending unnoticed."""
    if ids or not (hasattr(response, "tool_calls") or hasattr(response, "tool_output")):
        return
    warnings.warn(
        f"report_response found no Lamar episode in this {type(response).__name__} and reported nothing: "
        "an agent's output carries only the episodes of Lamar's search tool calls. Report a LamarMemoryBlock's "
        "turn with block.report(signal, session_id), or pass the log of a `with track_episodes() as log:` "
        "block around the run, which holds every episode of it.", UserWarning, stacklevel=3)


__all__ = ["EpisodeLog", "areport_response", "close_log", "episode_ids", "open_log", "record_episode",
           "report_response", "settle_failed", "track_episodes"]
