"""How long a fold-mode checkpoint holds the namespace's write lock exclusively (every writer waits), and what
it does meanwhile: fold what was written since its fold, read the rows' order, build the snapshot, rewrite.

Usage: python tools/pg_checkpoint_hold.py [URL] [--episodes 16000] [--runs 3]

Builds the log in a temporary SQLite file (20 lessons in 3 scopes), copies it into a new PostgreSQL namespace
(lamar_namespace=pgstate_hold_<hex>, the fold mode, dropped at the end), folds it once so that its state is
saved, then checkpoints it with a new engine, `--runs` times on fresh copies. Prints the wall milliseconds of
the checkpoint, of the lock held, and of each step under the lock (least of the runs). Asserts nothing.
"""
import argparse
import contextlib
import os
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from lamar import Experience, Lamar, Scope
from lamar.bench.fleet.clients import drop_namespace
from lamar.state import follower, snapshot  # noqa: F401 - the modules it patches, loaded
from lamar.store import Event, open_store
from lamar.store.postgres import locks
from lamar.store.transfer import transfer

_STEPS = ("sync", "places", "snapshot", "rewrite", "  its JSON")


def build(path: str, episodes: int) -> None:
    rng = random.Random(0)
    with Lamar(path, k=3, seed=0) as lam:
        for i in range(20):
            lam.add(Experience(f"pre {i}", f"act {i}", scope=Scope(project=f"p{i % 3}")))
        for _ in range(episodes):
            lam.report(lam.recall({"project": f"p{rng.randrange(3)}"}).episode_id, rng.choice([1.0, -1.0]))


def timed(record: dict[str, float], name: str, call: Callable[..., Any], held: list[bool]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            if held[0]:
                record[name] = record.get(name, 0.0) + (time.perf_counter() - started) * 1e3
    return run


def checkpoint_once(url: str, source: str) -> dict[str, float]:
    namespace = f"pgstate_hold_{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in url else "?"
    location = f"{url}{sep}lamar_namespace={namespace}&lamar_fold=on"
    try:
        src, dst = open_store(source), open_store(location)
        try:
            transfer(src, dst)
        finally:
            src.close()
            dst.close()
        with Lamar(location, k=3, seed=0) as lam:
            lam.stats()
        record: dict[str, float] = {}
        held = [False]
        exclusive = locks.exclusive

        @contextlib.contextmanager
        def watched(db: Any) -> Iterator[None]:
            with exclusive(db):
                held[0] = True
                started = time.perf_counter()
                try:
                    yield
                finally:
                    record["lock held"] = (time.perf_counter() - started) * 1e3
                    held[0] = False

        locks.exclusive = watched  # type: ignore[assignment]
        # Wherever the checkpoint calls it from (an older Lamar on PYTHONPATH: the follower itself).
        snapshot_of, data_json = snapshot.snapshot_of, Event.data_json
        callers = [m for n, m in sys.modules.items() if n.startswith("lamar.state.") and n != "lamar.state.snapshot"
                   and getattr(m, "snapshot_of", None) is snapshot_of]
        for module in callers:
            module.snapshot_of = timed(record, "snapshot", snapshot_of, held)  # type: ignore[attr-defined]
        Event.data_json = timed(record, "  its JSON", data_json, held)  # type: ignore[method-assign]
        try:
            checkpointer = Lamar(location, k=3, seed=0)
            log = checkpointer._log  # the engine's own steps, measured
            for name, owner in (("sync", log), ("places", log)):
                attr = "_in_rows_order" if name == "places" else "sync"
                setattr(owner, attr, timed(record, name, getattr(owner, attr), held))
            store = checkpointer.store
            store.rewrite = timed(record, "rewrite", store.rewrite, held)  # type: ignore[attr-defined]
            started = time.perf_counter()
            checkpointer.checkpoint()
            record["checkpoint"] = (time.perf_counter() - started) * 1e3
            checkpointer.close()
        finally:
            locks.exclusive = exclusive  # type: ignore[assignment]
            for module in callers:
                module.snapshot_of = snapshot_of  # type: ignore[attr-defined]
            Event.data_json = data_json  # type: ignore[method-assign]
        return record
    finally:
        drop_namespace(url, namespace)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--episodes", type=int, default=16000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="lamar-pg-checkpoint-hold-")
    source = os.path.join(folder, "log.db")
    try:
        build(source, args.episodes)
        runs = [checkpoint_once(args.url, source) for _ in range(args.runs)]
    finally:
        for name in os.listdir(folder):
            os.remove(os.path.join(folder, name))
        os.rmdir(folder)
    print(f"checkpoint of {args.episodes:,} episodes (20 lessons), least of {args.runs} runs, ms:")
    for name in ("checkpoint", "lock held", *_STEPS):
        print(f"  {name:<12}{min(run.get(name, 0.0) for run in runs):>10.0f}")


if __name__ == "__main__":
    main()
