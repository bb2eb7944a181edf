"""What one turn of a long LangGraph thread costs when its state holds the most open episodes it
keeps (every earlier turn without an outcome, in a thread whose checkpoints predate lamar_waiting):
store calls and milliseconds per turn, by backend (docs/speed.md, "A LangGraph thread's turn").

    python tools/langgraph_turn.py [--postgres URL] [--turns 40] [--against OLD_CHECKOUT]

Each backend runs in a fresh process: a graph recall -> agent -> report whose turns get no outcome,
run until the state holds 100 open episodes, then `--turns` more turns timed and their store calls
counted (every call to the store's methods and, in PostgreSQL's fold mode, to its lesson rows).
With --against, the same runs with the lamar/ and integrations/ of another checkout (before).
Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any, get_type_hints

KEPT = 100  # open episodes a thread's state keeps (lamar_langgraph.nodes.KEPT)
STORE_CALLS = ("append", "read", "read_texts", "lookup", "load_state", "save_state")
ROW_CALLS = ("settled", "eligible", "lessons", "append")


def counted(obj: Any, names: tuple[str, ...], calls: list[int]) -> None:
    """Count every call to these methods of `obj` (on the instance, before the engine binds them);
    a call made inside another (SQLite's `read` reads through `read_texts`) is not one more."""
    for name in names:
        method = getattr(obj, name, None)
        if method is None:
            continue

        def wrapper(*args: Any, __method: Any = method, **kwargs: Any) -> Any:
            calls[0] += calls[1] == 0
            calls[1] += 1
            try:
                return __method(*args, **kwargs)
            finally:
                calls[1] -= 1

        setattr(obj, name, wrapper)


def run(location: str, turns: int) -> dict[str, float]:
    """Per-turn figures for `turns` turns of a thread whose state already holds KEPT open episodes."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from typing_extensions import TypedDict

    from lamar import Experience, ExperienceStore, Lamar, Scope
    from lamar_langgraph import LamarState, recall_node, report_node

    # LamarState without lamar_waiting, as a thread's older checkpoints hold it: its open episodes are
    # not known to have had no outcome, so a new turn keeps them (on LamarState it forgets them).
    keys = {**get_type_hints(MessagesState, include_extras=True), **get_type_hints(LamarState, include_extras=True)}
    State = TypedDict("State", {k: v for k, v in keys.items() if k != "lamar_waiting"}, total=False)  # type: ignore[misc]

    calls = [0, 0]  # calls, and how deep inside one the store is now
    store = ExperienceStore(location)
    counted(store, STORE_CALLS, calls)
    rows = getattr(store, "rows", None)  # PostgreSQL's fold mode: the lesson rows the engine reads
    if rows is not None:
        counted(rows, ROW_CALLS, calls)
    lam = Lamar(store, seed=1)
    for i in range(20):
        lam.add(Experience(f"the build fails, case {i}", f"fix {i}", scope=Scope(project="trace")))
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("agent", lambda state: {"messages": [AIMessage("done")]})
    graph.add_node("report", report_node(lam, outcome=lambda state: None))  # no turn gets an outcome
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    graph.add_edge("agent", "report")
    graph.add_edge("report", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "long"}}
    per_call: list[int] = []
    per_ms: list[float] = []
    for n in range(KEPT + turns):
        before, started = calls[0], time.perf_counter()
        state = app.invoke({"messages": [HumanMessage(f"turn {n}", id=f"m{n}")],
                            "lamar_context": {"project": "trace"}}, config)
        if n >= KEPT:
            per_ms.append((time.perf_counter() - started) * 1000)
            per_call.append(calls[0] - before)
    open_ = sum(status == "open" for status in state["lamar_episodes"].values())
    lam.close()
    return {"open": open_, "calls": statistics.mean(per_call), "ms": statistics.median(per_ms)}


def backends(postgres: str | None, side: str) -> list[tuple[str, str, str | None]]:
    """(label, location, PostgreSQL namespace) of each backend, fresh for one side's run."""
    folder = tempfile.mkdtemp(prefix="lamar-lgturn-")
    out: list[tuple[str, str, str | None]] = [("SQLite", os.path.join(folder, f"turns-{side}.db"), None)]
    if postgres:
        sep = "&" if "?" in postgres else "?"
        for mode in ("off", "on"):
            name = f"lgturn-{uuid.uuid4().hex[:10]}"
            label = "PostgreSQL, log mode" if mode == "off" else "PostgreSQL, fold mode"
            out.append((label, f"{postgres}{sep}lamar_namespace={name}&lamar_fold={mode}", name))
    return out


def child(location: str, turns: int, code: str | None) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if code is not None:  # its lamar/ and integrations/ first on the path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (code, os.path.join(code, "integrations"),
                                                          env.get("PYTHONPATH"))))
    script = (f"import json, sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
              "import langgraph_turn as t; print(json.dumps(t.run(sys.argv[1], int(sys.argv[2]))))")
    done = subprocess.run([sys.executable, "-c", script, location, str(turns)], env=env, check=False,
                          capture_output=True, text=True)
    if done.returncode != 0:  # its last line says why: a missing extra names the command that installs it
        said = done.stderr.strip().splitlines()
        raise SystemExit(f"langgraph_turn.py: the turns' process failed: {said[-1] if said else done.returncode}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="also a PostgreSQL store (log mode and fold mode)")
    parser.add_argument("--turns", type=int, default=40, help="turns measured once the state is full")
    parser.add_argument("--against", metavar="CHECKOUT", help="also run the code of this checkout (before)")
    args = parser.parse_args(argv)
    try:  # the integration names the extra to install when LangGraph is missing; the turns would only fail later
        importlib.import_module("lamar_langgraph")
    except ModuleNotFoundError as exc:
        parser.exit(1, f"langgraph_turn.py: {exc}\n")
    print(f"{'per turn, ' + str(KEPT) + ' open episodes':<34}{'':>4}{'store calls':>14}{'ms (median)':>14}")
    trees = ([("before", os.path.abspath(args.against))] if args.against else []) + [("after", None)]
    runs = {side: backends(args.postgres, side) for side, _ in trees}
    try:
        for i, (label, _, _) in enumerate(runs["after"]):
            for side, code in trees:
                got = child(runs[side][i][1], args.turns, code)
                print(f"{label:<34}{side if args.against else '':>6}{got['calls']:>12.1f}{got['ms']:>14.1f}"
                      f"   ({got['open']:.0f} open)")
    finally:
        from lamar.bench.fleet.clients import drop_namespace

        for side in runs.values():
            for _, _, namespace in side:
                if namespace is not None and args.postgres:
                    drop_namespace(args.postgres, namespace)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
