"""`recall_node` and `report_node`: Lamar's two calls as nodes for any StateGraph, and the
state keys they share (`LamarState`)."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from langchain_core.runnables import RunnableLambda
from langgraph.config import get_config
from langgraph.runtime import get_runtime
from typing_extensions import TypedDict  # the one LangGraph uses: mixing both kinds fails

from lamar import (
    DuplicateReport,
    InvalidArgument,
    InvalidContext,
    InvalidReward,
    Lamar,
    LamarError,
    Recall,
    Signal,
    StoreError,
    UnknownEpisode,
)
from lamar.experience import check_context, context_within, fit_context
from lamar.integration import engine, not_in_store
from lamar.signals import to_reward
from lamar_langgraph.attempts import Attempts
from lamar_langgraph.cleared import ambiguous, unsent
from lamar_langgraph.dropped import FIX, RECALL_WRITES, check, declared, recalled
from lamar_langgraph.keys import (
    FORGET,
    OPEN,
    REPORTED,
    field,
    last_outcome,
    last_value,
    merge_episodes,
    merge_turns,
    merge_waiting,
    named,
    opened,
    waiting,
)
from lamar_langgraph.new_turn import started
from lamar_langgraph.turns import episode_of, handed_back, unmarked, with_context

log = logging.getLogger(__name__)

ContextSource = Mapping[str, str] | Callable[[Any], Mapping[str, str]] | None
TurnMarker = Callable[[Any], str | None]
Outcome = Signal | str | float
Turn = tuple[str, str]  # the turn's marker, and its key in `lamar_turns` (the marker and the context)


class LamarState(TypedDict, total=False):
    """The state keys of the Lamar nodes; mix it into your graph's state.

    ``class State(MessagesState, LamarState): ...``

    Every key the nodes write has a reducer, so recall nodes may run in parallel branches
    (`Send` fan-out, map-reduce, subgraphs): each gets its own episode, and all of them are
    in `lamar_episodes` until a report node reports them.

    Attributes:
        lamar_context: the context to recall for, a mapping of strings (read by recall
            unless `recall_node(context=...)` says otherwise; the runtime context is the fallback).
        lamar_turn: the turn the current episode belongs to (written by recall).
        lamar_turns: the turns that have their episode, turn and context -> episode (written by recall;
            merged, so a subgraph's turn does not hide its parent's; a new turn forgets the
            earlier turns whose episodes are reported).
        lamar_episode_id: the episode of the current turn's recall (written by recall).
        lamar_lessons: ids of the injected lessons, best first (written by recall).
        lamar_prompt: the fenced lessons block for a system prompt, "" when none (written by recall).
        lamar_outcome: what happened: a Signal name ("shipped", "reverted", ...) or a reward
            in [-1, 1] (read by report; recall clears it when a new turn starts).
        lamar_reported: the episode the report node has reported (written by report).
        lamar_episodes: the episodes recalled in the thread, "open" until reported (written
            by both nodes; merged, never overwritten; a new turn forgets the reported ones).
        lamar_waiting: the open episodes, each with the outcome it was given and the store refused
            (recorded for it, never another, once the store is back), or None while it has none
            (written by both nodes; a new turn forgets the ones whose turn got none).
    """

    lamar_context: dict[str, str]  # no reducer: only you write it, and {} must not hide the runtime context
    lamar_turn: Annotated[str | None, last_value]
    lamar_turns: Annotated[dict[str, str], merge_turns]
    lamar_episode_id: Annotated[str | None, last_value]
    lamar_lessons: Annotated[list[str], last_value]
    lamar_prompt: Annotated[str, last_value]
    lamar_outcome: Annotated[str | float | None, last_outcome]
    lamar_reported: Annotated[str | None, last_value]
    lamar_episodes: Annotated[dict[str, str], merge_episodes]
    lamar_waiting: Annotated[dict[str, str | float | None], merge_waiting]


def last_human_turn(state: Any) -> str | None:
    """The default turn marker: the id of the last human message in ``state["messages"]``.

    A turn starts when a person speaks; looping back through the recall node, or replaying a
    checkpoint, within the same turn finds the same marker. Without messages there is no
    marker and every pass through the recall node is a new turn.

    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> last_human_turn({"messages": [HumanMessage("fix it", id="m1"), AIMessage("done")]})
    'human:m1'
    >>> last_human_turn({}) is None
    True
    """
    messages = field(state, "messages")
    if not messages:
        return None
    humans = [m for m in messages if _speaker(m) in ("human", "user")]
    if not humans:
        return None
    last = humans[-1]
    message_id = last.get("id") if isinstance(last, Mapping) else getattr(last, "id", None)
    return f"human:{message_id}" if message_id else f"human#{len(humans)}"


def recall_node(lamar: Lamar, *, context_key: str = "lamar_context", context: ContextSource = None,
                k: int | None = None, turn: TurnMarker | None = last_human_turn,
                outcome_key: str = "lamar_outcome", name: str = "lamar_recall") -> RunnableLambda[Any, Any]:
    """A node that recalls lessons for the turn and writes them into state.

    It writes `lamar_turn`, `lamar_episode_id`, `lamar_lessons` and `lamar_prompt`, and
    clears the outcome key and `lamar_reported`. If the state already holds an episode for
    the same turn (a loop back through this node, a thread run again without a new human
    message), it writes nothing: one turn, one episode. Replaying a checkpoint taken before
    the recall (time travel) is a new recall. Works under invoke, ainvoke and streaming. A
    store that cannot be written (`StoreError`) costs the turn its lessons, not the run: the
    node logs a warning and writes an empty prompt and no episode (the report node likewise
    leaves an episode it could not report open).

    Args:
        lamar: the engine.
        context_key: the state key that holds the context.
        context: a fixed context, or a function of the state that returns one. When None, the
            node reads ``state[context_key]``, and failing that the graph's runtime context
            (its `context_key` entry or attribute if it has one, else the whole of it).
        k: lesson slots for this node (default: the engine's k).
        turn: a function of the state that names the turn (see `last_human_turn`); None
            makes every pass a new turn.
        outcome_key: the state key the report node reads; cleared when a new turn starts so
            an old outcome is never reported for a new episode.
        name: the runnable's name (shown in traces and streams).

    Returns:
        A runnable to pass to ``graph.add_node("recall", ...)``.

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, or `k` or `turn` is not one.
        InvalidContext: `context` is neither a mapping of strings, a function nor None.
    """

    engine(lamar, "recall_node")
    if isinstance(context, Mapping):
        context = check_context(context)
    elif context is not None and not callable(context):  # else it would be ignored for state[context_key]
        raise InvalidContext(f"context must be a mapping of strings, a function of the state or None; "
                             f"got {type(context).__name__}")
    if k is not None:
        from lamar.arguments import slots

        slots(k)
    _callable_or_none(turn, "turn")

    def plan(state: Any) -> tuple[Mapping[str, str], Turn | None, str | None] | tuple[str, str]:
        """The context, turn (with its key in `lamar_turns`) and raw marker of a new recall; or the open episode
        the turn has for this context already, with the turn."""
        raw = turn(state) if turn is not None else None
        if raw is None:
            unmarked(state, turn is last_human_turn)
            return _context(state, context, context_key), None, None
        marker = _in_namespace(raw)  # a subgraph's turn is its own
        key = _in_namespace(with_context(raw, _context(state, context, context_key, quiet=True)))  # and each task's
        episode = episode_of(state, key, marker)
        if episode is not None:
            return episode, marker
        check(lamar, state, "recall")  # before it writes: a thread it recalled in holds its keys
        recalled(lamar)
        return _context(state, context, context_key), (marker, key), raw

    def written(rec: Recall, named: Turn | None, forget: dict[str, Any]) -> dict[str, Any]:
        turns, episodes, waits = forget["lamar_turns"], forget["lamar_episodes"], forget["lamar_waiting"]
        marker, key = named or (None, None)
        update = {"lamar_turn": marker, "lamar_episode_id": rec.episode_id, "lamar_lessons": rec.ids,
                  "lamar_prompt": rec.as_prompt(), outcome_key: None, "lamar_reported": None,
                  "lamar_episodes": {**episodes, rec.episode_id: OPEN},
                  "lamar_waiting": {**waits, rec.episode_id: None}}
        return {**update, "lamar_turns": turns if key is None else {**turns, key: rec.episode_id}}

    def without_lessons(exc: StoreError, named: Turn | None, forget: dict[str, Any]) -> dict[str, Any]:
        log.warning("Lamar could not recall (the turn goes on without lessons): %s", exc)
        return {**forget, "lamar_turn": named[0] if named else None, "lamar_episode_id": None, "lamar_lessons": [],
                "lamar_prompt": "", outcome_key: None, "lamar_reported": None}

    attempts = Attempts()

    def recall_sync(state: Any) -> dict[str, Any]:
        todo = plan(state)
        if len(todo) == 2:
            return handed_back(lamar, state, *todo)
        forget = started(lamar, state, todo[2], outcome_key)
        try:
            rec = attempts.earlier(lamar, todo[0], todo[1] and todo[1][1]) or lamar.recall(todo[0], k=k)
        except StoreError as exc:
            return without_lessons(exc, todo[1], forget)
        attempts.remember(rec, todo[0], todo[1] and todo[1][1])
        return written(rec, todo[1], forget)

    async def recall_async(state: Any) -> dict[str, Any]:
        todo = plan(state)
        if len(todo) == 2:  # a loop back reads nothing; a branch holding another's keys reads its own back
            kept = field(state, "lamar_episode_id") == todo[0]
            return {} if kept else await asyncio.to_thread(handed_back, lamar, state, *todo)
        forget = await asyncio.to_thread(started, lamar, state, todo[2], outcome_key)
        try:
            rec = (await asyncio.to_thread(attempts.earlier, lamar, todo[0], todo[1] and todo[1][1])
                   or await lamar.arecall(todo[0], k=k))
        except StoreError as exc:
            return without_lessons(exc, todo[1], forget)
        attempts.remember(rec, todo[0], todo[1] and todo[1][1])
        return written(rec, todo[1], forget)

    return RunnableLambda(recall_sync, afunc=recall_async, name=name)


def report_node(lamar: Lamar, *, outcome_key: str = "lamar_outcome",
                outcome: Callable[[Any], Outcome | None] | None = None,
                name: str = "lamar_report") -> RunnableLambda[Any, Any]:
    """A node that reports the outcome of the episodes recalled since the last report, once.

    It reads the outcome from ``state[outcome_key]`` (or `outcome(state)`): a `Signal`, a
    Signal name, or a float reward in [-1, 1]. With no episode or no outcome yet it does
    nothing (an unreported episode is fine); it warns when an outcome finds a state without
    the keys the recall node writes (a schema without `LamarState`). It reports the outcome for
    the current episode and every episode still open that waits for one (the branches of a
    fan-out, a subgraph's); an episode whose outcome the store refused earlier (in
    `lamar_waiting`) gets that one instead, whenever the node runs. After reporting it marks them
    reported, so passing through again, or resuming the thread, does not report twice; an
    episode already reported elsewhere is left as it is.

    To report a turn whose outcome shows only in the next message ("that broke the build"),
    put a report node before the recall node and send the outcome with the next input.

    Args:
        lamar: the engine.
        outcome_key: the state key that holds the outcome.
        outcome: a function of the state that returns the outcome (or None), instead of the key.
        name: the runnable's name.

    Returns:
        A runnable to pass to ``graph.add_node("report", ...)``.

    An outcome that is not a Signal, its name or a reward in [-1, 1] (a number, or text: "0.5") is ignored with a
    warning (and cleared from ``state[outcome_key]``): its episodes stay open for this turn's next
    outcome, and the run goes on.

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, or `outcome` is not a function.
        DuplicateReport: (in the run) the turn's episode already has another outcome, such as
            one a second reviewer resuming the same interrupt recorded first.
    """

    engine(lamar, "report_node")
    _callable_or_none(outcome, "outcome")

    def plan(state: Any) -> tuple[list[tuple[str, Outcome, bool]], dict[str, Any], str | None, list[str]]:
        """The reports to send, each (episode, outcome, whether it is one the store refused before), the update
        that goes with them, the turn's episode, and the `lamar_waiting` entries of episodes no longer open (a
        subgraph reported them: its state, merged back, lists them reported but cannot unlist them there)."""
        value = outcome(state) if outcome is not None else field(state, outcome_key)
        own, episodes, current = waiting(state), opened(state), field(state, "lamar_episode_id")
        if current and field(state, "lamar_reported") != current and current not in episodes:
            episodes.append(current)  # a state from before lamar_episodes existed
        if value is None:
            check(lamar, state, "report")
        elif not episodes and not any(declared(state, key) for key in RECALL_WRITES):
            warnings.warn(f"Lamar's report node has the outcome {value!r} but no episode to report: the state "
                          f"holds none of the keys the recall node writes ({', '.join(RECALL_WRITES)}). {FIX}, "
                          "and run a recall node before this one", UserWarning, stacklevel=2)
        update: dict[str, Any] | None = None
        if value is not None and (update := ignored(value, [e for e in episodes if own.get(e) is None])) is not None:
            value = None
        todo = [(e, own[e], True) if own.get(e) is not None else (e, value, False) for e in episodes
                if own.get(e) is not None or value is not None]
        if value is not None:
            ambiguous(value, [e for e in episodes if e not in own and e != current])
        return todo, update or {}, current, [e for e in own if e not in episodes]

    def ignored(value: Outcome, episodes: list[str]) -> dict[str, Any] | None:
        """The update for an outcome that is not one, else None. The node fails open: a checkpointed
        thread keeps the value, so raising would fail every later run of the thread on it."""
        try:
            to_reward(value)
        except InvalidReward as exc:
            log.warning("Lamar ignored the outcome %r: %s; episodes %s stay open for this turn's next outcome, "
                        "or lam.report(episode_id, signal)", value, exc, ", ".join(episodes))
            return {} if outcome is not None else {outcome_key: None}
        return None

    def written(done: list[str], kept: dict[str, Outcome], stale: list[str]) -> dict[str, Any]:
        waits = {**dict.fromkeys(done + stale, FORGET), **{episode: named(given) for episode, given in kept.items()}}
        if not done:
            return {"lamar_waiting": waits} if waits else {}
        return {"lamar_reported": done[-1], "lamar_episodes": dict.fromkeys(done, REPORTED), "lamar_waiting": waits}

    def report_sync(state: Any) -> dict[str, Any]:
        todo, update, current, stale = plan(state)
        done, kept = [], {}
        for episode, given, retried in todo:
            try:
                lamar.report(episode, given)
            except DuplicateReport:
                # Reported already: by a run whose checkpoint was not saved (the same outcome), or
                # by another resume of this thread or the app (maybe another: refused, not dropped).
                if episode == current and not retried:
                    _same_outcome(lamar, episode, given)
            except UnknownEpisode:  # compacted by sleep, or recalled in another store: marked done, not retried
                log.warning("%s", not_in_store(lamar, episode, "report"))
            except StoreError as exc:  # fail open: it stays open with its outcome, for the next node to record
                unsent(episode, given, exc)
                kept[episode] = given
                continue
            done.append(episode)
        return {**update, **written(done, kept, stale)}

    async def report_async(state: Any) -> dict[str, Any]:
        todo, update, current, stale = plan(state)
        done, kept = [], {}
        for episode, given, retried in todo:
            try:
                await lamar.areport(episode, given)
            except DuplicateReport:
                if episode == current and not retried:
                    await asyncio.to_thread(_same_outcome, lamar, episode, given)
            except UnknownEpisode:
                log.warning("%s", not_in_store(lamar, episode, "report"))
            except StoreError as exc:
                unsent(episode, given, exc)
                kept[episode] = given
                continue
            done.append(episode)
        return {**update, **written(done, kept, stale)}

    return RunnableLambda(report_sync, afunc=report_async, name=name)


def _same_outcome(lamar: Lamar, episode: str, value: Outcome) -> None:
    """Nothing when the episode's recorded outcome is `value` (a replayed report); else refuses
    `value`: two reviewers who resume one interrupted thread at once must not both be told
    their decision stands while the store keeps only one of them."""
    try:
        recorded = lamar.episode(episode)
    except LamarError as exc:  # compacted or unreadable since: nothing to compare, the run goes on
        log.info("Lamar could not read back episode %s: %s", episode, exc)
        return
    reward, parsed = to_reward(value)
    if recorded.reward == reward and recorded.signal == (parsed.value if parsed else None):
        return
    mine, again = (parsed.value, repr(parsed.value)) if parsed else (f"{reward:g}", repr(reward))
    theirs = recorded.signal or f"{recorded.reward:g}"
    raise DuplicateReport(
        f"episode {episode} already has the outcome {theirs} (another run of this thread, such as a second "
        f"resume of the same interrupt, or the app, reported it first); this run's outcome {mine} was not "
        f"recorded. To correct the recorded outcome, call lam.report({episode!r}, {again}, replace=True)")


def _callable_or_none(value: Any, name: str) -> None:
    if value is not None and not callable(value):
        raise InvalidArgument(f"{name} must be a function of the state, or None; got {type(value).__name__}")


# -- reading state of any schema (TypedDict, dataclass, pydantic) ---------------------------------

def _speaker(message: Any) -> str | None:
    if isinstance(message, Mapping):
        return message.get("role") or message.get("type")
    if isinstance(message, (tuple, list)) and message:
        return str(message[0])
    return getattr(message, "type", None)


def _context(state: Any, source: ContextSource, key: str, *, quiet: bool = False) -> Mapping[str, str]:
    """The context to recall for; `quiet` to name the turn with it, without warning twice about one too long."""
    warn = (lambda text: None) if quiet else None
    if isinstance(source, Mapping):
        return source
    if callable(source):
        return fit_context(source(state), where="the context function's result", warn=warn)
    found = field(state, key)
    if found is not None:
        return fit_context(found, where=f"state[{key!r}]", warn=warn)
    found = context_within(_runtime_context(), key)
    if found is not None:
        return fit_context(found, where=f"the runtime context's {key!r}", warn=warn)
    raise InvalidContext(
        f"no context for Lamar's recall: put a mapping of strings in state[{key!r}], pass "
        "context=... to recall_node, or invoke the graph with context={...}")


def _in_namespace(marker: str) -> str:
    """The turn marker qualified by the enclosing (sub)graph's checkpoint namespace: a subgraph
    gets its own episode for a turn its parent already recalled for. The namespace's task ids
    are left out: they change with every run, and the turn must not."""
    try:
        namespace = get_config().get("configurable", {}).get("checkpoint_ns", "")
    except RuntimeError:  # outside a graph run
        return marker
    parent, _, _ = str(namespace).rpartition("|")  # drop this node's own task segment
    if not parent:
        return marker
    # A number is a retried subgraph's attempt (see attempts.py): the same turn as the first.
    kept = [segment.partition(":")[0] for segment in parent.split("|") if not segment.isdigit()]
    return "|".join(kept) + f"|{marker}"


def _runtime_context() -> Any:
    try:
        return get_runtime().context
    except (RuntimeError, KeyError, AttributeError):  # called outside a graph run
        return None
