"""What one recall and its report cost a `LangGraphStore` in calls to the BaseStore beneath: batches
(each a round trip and, on SqliteStore and PostgresStore, a transaction) and the operations in them.

    python tools/langgraph_store_trips.py [--postgres URL] [--runs 50] [--against OLD_CHECKOUT]

Counts `batch` calls on InMemoryStore, SqliteStore and (with --postgres) PostgresStore, over
`lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)` after a first one (which also
saves the engine's state), and the milliseconds per recall+report. With --against, the same with the
integrations/ of another checkout (before). Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(backend: str, url: str | None, runs: int) -> dict[str, Any]:
    """Batches and operations per recall+report, and milliseconds per recall+report."""
    from langgraph.store.base import GetOp, PutOp, SearchOp

    from lamar import Experience, Lamar, Scope, Signal
    from lamar_langgraph import LangGraphStore

    counted: Counter[str] = Counter()

    def counting(cls: type) -> type:
        class Counting(cls):  # type: ignore[misc, valid-type]
            def batch(self, ops: Any) -> Any:
                ops = list(ops)
                counted["batches"] += 1
                for op, name in ((GetOp, "gets"), (PutOp, "puts"), (SearchOp, "searches")):
                    counted[name] += sum(isinstance(o, op) for o in ops)
                return super().batch(ops)
        return Counting

    namespace = ("lamar", f"trips-graphs-{uuid.uuid4().hex[:8]}")
    with tempfile.TemporaryDirectory() as folder:
        if backend == "memory":
            from langgraph.store.memory import InMemoryStore

            base = counting(InMemoryStore)()
        elif backend == "sqlite":
            import sqlite3

            from langgraph.store.sqlite import SqliteStore

            conn = sqlite3.connect(os.path.join(folder, "store.db"), check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            base = counting(SqliteStore)(conn)
            base.setup()
        else:
            import psycopg
            from langgraph.store.postgres import PostgresStore
            from psycopg.rows import dict_row

            conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
            base = counting(PostgresStore)(conn)
            base.setup()
        # Counting overrides `batch`, handing the ops on whole: said, where the checkout takes it, else the
        # wrapper would count the path a store whose `batch` may split them takes.
        import inspect

        said = {"ordered_batch": True} if "ordered_batch" in inspect.signature(LangGraphStore).parameters else {}
        lam = Lamar(LangGraphStore(base, namespace, **said))
        lam.add(Experience("the build fails", "read the log", scope=Scope(project="p")))
        lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)
        counted.clear()
        start = time.perf_counter()
        for _ in range(runs):
            lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)
        ms = (time.perf_counter() - start) * 1000 / runs
        lam.close()
        if backend == "postgres":
            conn.execute("DELETE FROM store WHERE prefix LIKE %s", (".".join(namespace) + "%",))
            conn.close()
    return {"ms": ms, **{name: counted[name] / runs for name in ("batches", "gets", "puts", "searches")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="also over a PostgresStore on this database")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--against", metavar="OLD_CHECKOUT", help="also with another checkout's integrations/")
    parser.add_argument("--one", nargs=2, metavar=("BACKEND", "URL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one[0], args.one[1] or None, args.runs)))
        return 0
    backends = ["memory", "sqlite"] + (["postgres"] if args.postgres else [])
    checkouts = [("after", ROOT)] + ([("before", args.against)] if args.against else [])
    print(f"{'backend':<10}{'code':<8}{'batches':>9}{'gets':>7}{'puts':>7}{'searches':>10}{'ms':>8}")
    for backend in backends:
        for label, checkout in checkouts:
            path = os.pathsep.join([os.path.join(checkout, "integrations"), ROOT, os.path.join(ROOT, "integrations")])
            out = subprocess.run([sys.executable, __file__, "--runs", str(args.runs), "--one", backend,
                                  args.postgres or ""], env={**os.environ, "PYTHONPATH": path},
                                 capture_output=True, text=True, check=True).stdout
            row = json.loads(out)
            print(f"{backend:<10}{label:<8}{row['batches']:>9.1f}{row['gets']:>7.1f}{row['puts']:>7.1f}"
                  f"{row['searches']:>10.1f}{row['ms']:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
