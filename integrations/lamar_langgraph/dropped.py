"""LangGraph drops the keys a state schema does not declare: a schema without `LamarState` loses
every episode between the nodes. The nodes say so when a thread or run they recalled in holds none."""

from __future__ import annotations

import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import get_runtime

from lamar import Lamar

# The keys the recall node writes and the report node reads.
RECALL_WRITES = ("lamar_turn", "lamar_turns", "lamar_episode_id", "lamar_episodes")
# The threads (and runs without a thread) each engine recalled in, newest last, each with whether it
# was warned about (once is enough): a warning needs only the threads still in use.
REMEMBERED = 1024

FIX = ("Mix LamarState into the graph's state (class State(MessagesState, LamarState); a pydantic state subclasses "
       "LamarModel), since LangGraph drops the keys a state schema does not declare")

_threads: weakref.WeakKeyDictionary[Lamar, OrderedDict[Hashable, bool]] = weakref.WeakKeyDictionary()
# The engines told about a run without a thread: a graph compiled without a checkpointer drops the
# keys in every run alike, so once an engine is enough.
_told_runs: weakref.WeakSet[Lamar] = weakref.WeakSet()
_lock = threading.Lock()


def declared(state: Any, key: str) -> bool:
    return key in state if isinstance(state, Mapping) else hasattr(state, key)


def recalled(lamar: Lamar) -> None:
    """Remember that `lamar` recalled in the running graph's thread or run (its top level only)."""
    thread = _top_level_thread()
    if thread is not None:
        with _lock:
            seen = _threads.setdefault(lamar, OrderedDict())
            seen[thread] = seen.get(thread, False)
            seen.move_to_end(thread)
            while len(seen) > REMEMBERED:
                seen.popitem(last=False)


def check(lamar: Lamar, state: Any, node: str) -> None:
    """Warn when `lamar` recalled in this thread (or, without a checkpointer, earlier in this run), at
    the graph's top level, yet the state holds none of the keys the recall writes: the schema drops
    them, so every episode stays pending and the model node never gets `lamar_prompt`. Only the top
    level: a subgraph that recalls and reports inside itself may live in a parent that keeps none of
    its keys, and a thread the engine never recalled in (a report node first, on the first turn) has
    none yet."""
    thread = _top_level_thread()
    if thread is None or any(declared(state, key) for key in RECALL_WRITES):
        return
    with _lock:
        seen = _threads.get(lamar)
        if seen is None or seen.get(thread) is not False:  # not recalled in here, or told already
            return
        seen[thread] = True
        if not isinstance(thread, str):
            if lamar in _told_runs:
                return
            _told_runs.add(lamar)
    where = "this thread" if isinstance(thread, str) else "this run (a graph without a checkpointer)"
    warnings.warn(f"Lamar's {node} node finds none of the keys the recall node wrote in {where} "
                  f"({', '.join(RECALL_WRITES)}): the episodes stay pending and the model gets no lessons. "
                  f"{FIX}", UserWarning, stacklevel=3)


def _top_level_thread() -> Hashable | None:
    """The thread of the running graph when the node runs at its top level on the thread's state, its
    run when it has no thread (no checkpointer), else None: a `Send`'s task (LangGraph's path
    "__pregel_push") gets the Send's own payload, which holds no keys of the thread."""
    try:
        config = get_config()
    except RuntimeError:  # outside a graph run
        return None
    configurable, path = config.get("configurable", {}), config.get("metadata", {}).get("langgraph_path") or ("",)
    thread = configurable.get("thread_id")
    if "|" in str(configurable.get("checkpoint_ns", "")) or path[0] == "__pregel_push":
        return None
    return str(thread) if thread is not None else _run()


def _run() -> Hashable | None:
    """The running graph's run: its `RunControl`, one object a run that its subgraphs share (held, so
    that no later run reuses its id). None where LangGraph has none."""
    try:
        control = getattr(get_runtime(), "control", None)
    except (RuntimeError, KeyError, AttributeError):  # outside a graph run
        return None
    return control if isinstance(control, Hashable) and control is not None else None
