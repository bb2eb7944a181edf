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
from lamar_langgraph.cleared import settle, unreported, unsent
from lamar_langgraph.dropped import FIX, RECALL_WRITES, check, declared, recalled

log = logging.getLogger(__name__)

ContextSource = Mapping[str, str] | Callable[[Any], Mapping[str, str]] | None
TurnMarker = Callable[[Any], str | None]
Outcome = Signal | str | float


OPEN = "open"
REPORTED = "reported"
# A parent whose recalls all run in `Send` branches or subgraphs never starts a turn in its own
# state, so no recall forgets what they merge into it: the reducers keep only the newest reported
# episodes and turns, more than one turn's fan-out lists. A thread whose turns get no outcome
# keeps as many open episodes (its recall node forgets the oldest), so its checkpoint and the next
# outcome's reports stay bounded too. A `Send` fan-out's branches see none of the parent's state,
# so only the reducer can bound what they merge: it keeps more open episodes than one turn's
# fan-out usually has, or a report node after the join would miss the oldest branches.
KEPT = 100
KEPT_OPEN = 10 * KEPT


def last_value(left: Any, right: Any) -> Any:
    """Reducer of the single-valued keys: several branches may write them in one step (a
    `Send` fan-out, two recall nodes side by side); the last write stands, and every
    episode stays listed in `lamar_episodes`."""
    return right


def last_outcome(left: Any, right: Any) -> Any:
    """`last_value` for the outcome, a Signal kept as its name: LangGraph's checkpointers read an
    enum of another package back with a warning, or not at all under LANGGRAPH_STRICT_MSGPACK.
    LangGraph stores a key's first value without its reducer: the recall node's None comes first."""
    return right.value if isinstance(right, Signal) else right


def merge_episodes(left: dict[str, str] | None, right: dict[str, str | None] | None) -> dict[str, str]:
    """Reducer of `lamar_episodes` (episode id -> "open" or "reported"): a union in which
    "reported" wins, so parallel branches, subgraphs and a later report all merge. None
    forgets an episode (a new turn forgets the reported ones and the oldest open ones: see
    `_forgotten`). Only the newest `KEPT` reported and `KEPT_OPEN` open episodes stay: the next
    outcome reports every open one, and an older one stays pending in the store, for the store's
    pending policy."""
    merged = dict(left or {})
    for episode, status in (right or {}).items():
        if status is None:
            merged.pop(episode, None)
        elif merged.get(episode) != REPORTED:
            merged[episode] = status
    for kind, kept in ((REPORTED, KEPT), (OPEN, KEPT_OPEN)):
        listed = [episode for episode, status in merged.items() if status == kind]
        for episode in listed[:-kept]:  # the oldest first: an episode keeps its place once listed
            del merged[episode]
    return merged


def merge_turns(left: dict[str, str] | None, right: dict[str, str | None] | None) -> dict[str, str]:
    """Reducer of `lamar_turns` (turn -> its episode): a union, so a subgraph's turn and its
    parent's, both written back into one state, are each remembered. None forgets a turn; only
    the newest `KEPT` stay."""
    merged = {**(left or {}), **(right or {})}
    kept = [(turn, episode) for turn, episode in merged.items() if episode is not None]
    return dict(kept[-KEPT:])  # a turn forgotten this way comes back only as a new turn's marker


def _cleared(lamar: Lamar, state: Any, outcome_key: str) -> set[str]:
    opened = [episode for episode, status in (_field(state, "lamar_episodes") or {}).items() if status == OPEN]
    return settle(lamar, opened, _field(state, outcome_key))


def _forgotten(state: Any, raw: str | None, settled: set[str], outcome_key: str) -> dict[str, Any]:
    """The updates that forget what a new turn no longer needs: the turns whose episodes are
    reported (but those of this same turn in another (sub)graph), the reported episodes, and the
    open ones the store has `settled` since (the pending policy, the app) or that are older than
    the newest `KEPT` (left to the pending policy). Kept, a long-lived thread's checkpoint would
    grow by one entry of each with every turn, and the next outcome would replace what the
    pending policy recorded for turns long gone."""
    episodes = _field(state, "lamar_episodes") or {}
    still = [episode for episode, status in episodes.items() if status == OPEN and episode not in settled]
    unreported(_field(state, outcome_key), still)  # the new turn clears the outcome they wait for
    settled = settled | set(still[:-(KEPT - 1)])  # this turn's episode makes `KEPT` open ones
    kept: set[str] = set()
    turns: dict[str, None] = {}
    for name, episode in (_field(state, "lamar_turns") or {}).items():
        if (episodes.get(episode) == OPEN and episode not in settled) or (
                raw is not None and (name == raw or name.endswith(f"|{raw}"))):
            kept.add(episode)
        else:
            turns[name] = None
    gone = {episode: None for episode, status in episodes.items()
            if (status == REPORTED or episode in settled) and episode not in kept}
    return {"lamar_turns": turns, "lamar_episodes": gone}


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
        lamar_turns: the turns that have their episode, turn -> episode (written by recall;
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
    messages = _field(state, "messages")
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

    def plan(state: Any) -> tuple[Mapping[str, str], str | None, str | None] | None:
        raw = turn(state) if turn is not None else None
        marker = _in_namespace(raw) if raw is not None else None  # a subgraph's turn is its own
        if marker is not None and (marker in (_field(state, "lamar_turns") or {}) or (
                _field(state, "lamar_turn") == marker and _field(state, "lamar_episode_id"))):
            return None  # this turn already has its episode (the second test: a state from before lamar_turns)
        check(lamar, state, "recall")  # before it writes: a thread it recalled in holds its keys
        recalled(lamar)
        return _context(state, context, context_key), marker, raw

    def written(rec: Recall, marker: str | None, forget: dict[str, Any]) -> dict[str, Any]:
        turns, episodes = forget["lamar_turns"], forget["lamar_episodes"]
        update = {"lamar_turn": marker, "lamar_episode_id": rec.episode_id, "lamar_lessons": rec.ids,
                  "lamar_prompt": rec.as_prompt(), outcome_key: None, "lamar_reported": None,
                  "lamar_episodes": {**episodes, rec.episode_id: OPEN}}
        return {**update, "lamar_turns": turns if marker is None else {**turns, marker: rec.episode_id}}

    def without_lessons(exc: StoreError, marker: str | None) -> dict[str, Any]:
        log.warning("Lamar could not recall (the turn goes on without lessons): %s", exc)
        return {"lamar_turn": marker, "lamar_episode_id": None, "lamar_lessons": [], "lamar_prompt": "",
                outcome_key: None, "lamar_reported": None}

    attempts = Attempts()

    def recall_sync(state: Any) -> dict[str, Any]:
        todo = plan(state)
        if todo is None:
            return {}
        forget = _forgotten(state, todo[2], _cleared(lamar, state, outcome_key), outcome_key)
        try:
            rec = attempts.earlier(lamar, todo[0], todo[1]) or lamar.recall(todo[0], k=k)
        except StoreError as exc:
            return without_lessons(exc, todo[1])
        attempts.remember(rec, todo[0], todo[1])
        return written(rec, todo[1], forget)

    async def recall_async(state: Any) -> dict[str, Any]:
        todo = plan(state)
        if todo is None:
            return {}
        forget = _forgotten(state, todo[2], await asyncio.to_thread(_cleared, lamar, state, outcome_key), outcome_key)
        try:
            rec = (await asyncio.to_thread(attempts.earlier, lamar, todo[0], todo[1])
                   or await lamar.arecall(todo[0], k=k))
        except StoreError as exc:
            return without_lessons(exc, todo[1])
        attempts.remember(rec, todo[0], todo[1])
        return written(rec, todo[1], forget)

    return RunnableLambda(recall_sync, afunc=recall_async, name=name)


def report_node(lamar: Lamar, *, outcome_key: str = "lamar_outcome",
                outcome: Callable[[Any], Outcome | None] | None = None,
                name: str = "lamar_report") -> RunnableLambda[Any, Any]:
    """A node that reports the outcome of the episodes recalled since the last report, once.

    It reads the outcome from ``state[outcome_key]`` (or `outcome(state)`): a `Signal`, a
    Signal name, or a float reward in [-1, 1]. With no episode or no outcome yet it does
    nothing (an unreported episode is fine); it warns when an outcome finds a state without
    the keys the recall node writes (a schema without `LamarState`). It reports the current
    episode and every episode still open in `lamar_episodes` (the branches of a fan-out, a
    subgraph's, a turn that got no outcome of its own): the outcome is the first news about
    each of them. After reporting it marks them reported, so passing through again, or
    resuming the thread, does not report twice; an episode already reported elsewhere is left
    as it is.

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
    warning (and cleared from ``state[outcome_key]``): its episodes stay open, and the run goes on.

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, or `outcome` is not a function.
        DuplicateReport: (in the run) the turn's episode already has another outcome, such as
            one a second reviewer resuming the same interrupt recorded first.
    """

    engine(lamar, "report_node")
    _callable_or_none(outcome, "outcome")

    def plan(state: Any) -> tuple[list[str], Outcome, str | None] | None:
        value = outcome(state) if outcome is not None else _field(state, outcome_key)
        if value is None:
            check(lamar, state, "report")
            return None
        episodes = [e for e, status in (_field(state, "lamar_episodes") or {}).items() if status == OPEN]
        current = _field(state, "lamar_episode_id")
        if current and _field(state, "lamar_reported") != current and current not in episodes:
            episodes.append(current)  # a state from before lamar_episodes existed
        if not episodes and not any(declared(state, key) for key in RECALL_WRITES):
            warnings.warn(f"Lamar's report node has the outcome {value!r} but no episode to report: the state "
                          f"holds none of the keys the recall node writes ({', '.join(RECALL_WRITES)}). {FIX}, "
                          "and run a recall node before this one", UserWarning, stacklevel=2)
        return (episodes, value, current) if episodes else None

    def written(episodes: list[str]) -> dict[str, Any]:
        return {"lamar_reported": episodes[-1], "lamar_episodes": dict.fromkeys(episodes, REPORTED)}

    def refused(episodes: list[str], value: Outcome) -> dict[str, Any] | None:
        """The update for an outcome that is not one, else None. The node fails open: a checkpointed
        thread keeps the value, so raising would fail every later run of the thread on it."""
        try:
            to_reward(value)
        except InvalidReward as exc:
            log.warning("Lamar ignored the outcome %r: %s; episodes %s stay open for the thread's next outcome, "
                        "or lam.report(episode_id, signal)", value, exc, ", ".join(episodes))
            return {} if outcome is not None else {outcome_key: None}
        return None

    def report_sync(state: Any) -> dict[str, Any]:
        todo = plan(state)
        if todo is None:
            return {}
        if (update := refused(todo[0], todo[1])) is not None:
            return update
        done = []
        for episode in todo[0]:
            try:
                lamar.report(episode, todo[1])
            except DuplicateReport:
                # Reported already: by a run whose checkpoint was not saved (the same outcome), or
                # by another resume of this thread or the app (maybe another: refused, not dropped).
                if episode == todo[2]:
                    _same_outcome(lamar, episode, todo[1])
            except UnknownEpisode:  # compacted by sleep, or recalled in another store: marked done, not retried
                log.warning("%s", not_in_store(lamar, episode, "report"))
            except StoreError as exc:  # fail open: it stays open, for the next report node to try
                unsent(episode, todo[1], exc)
                continue
            done.append(episode)
        return written(done) if done else {}

    async def report_async(state: Any) -> dict[str, Any]:
        todo = plan(state)
        if todo is None:
            return {}
        if (update := refused(todo[0], todo[1])) is not None:
            return update
        done = []
        for episode in todo[0]:
            try:
                await lamar.areport(episode, todo[1])
            except DuplicateReport:
                if episode == todo[2]:
                    await asyncio.to_thread(_same_outcome, lamar, episode, todo[1])
            except UnknownEpisode:
                log.warning("%s", not_in_store(lamar, episode, "report"))
            except StoreError as exc:
                unsent(episode, todo[1], exc)
                continue
            done.append(episode)
        return written(done) if done else {}

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

def _field(state: Any, key: str) -> Any:
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def _speaker(message: Any) -> str | None:
    if isinstance(message, Mapping):
        return message.get("role") or message.get("type")
    if isinstance(message, (tuple, list)) and message:
        return str(message[0])
    return getattr(message, "type", None)


def _context(state: Any, source: ContextSource, key: str) -> Mapping[str, str]:
    if isinstance(source, Mapping):
        return source
    if callable(source):
        return fit_context(source(state), where="the context function's result")
    found = _field(state, key)
    if found is not None:
        return fit_context(found, where=f"state[{key!r}]")
    found = context_within(_runtime_context(), key)
    if found is not None:
        return fit_context(found, where=f"the runtime context's {key!r}")
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
