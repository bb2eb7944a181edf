"""Flips one random bit of a JSON or SQLite store's file, many times over, and counts whether opening
it refuses it, reads it back unchanged, or reads back other events silently (docs/guarantees.md).
Usage: python tools/store_bitflips.py [--flips 600] [--seed 1] [--episodes 40] [--whatif [--table] [--older N]]"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from lamar import Experience, Lamar, LamarError, Scope, Signal
from lamar.store import open_store
from lamar.whatif.cache import fold_store

# Each store holds 3 lessons and 40 reported episodes, closed (a SQLite write-ahead log folded into
# its file), its sidecars kept. Each trial copies it, flips one bit at a uniformly drawn byte of the
# store's file, opens it, reads every event and folds it (as `lamar stats`), and ends one of:
#     refused   the open, the read or the fold raised a LamarError (CorruptStore naming the file)
#     harmless  it opened and every event read back exactly as written
#     wrong     it opened and read back other events: a silent corruption
# Printed per backend with a 95% Wilson interval on each share. `--whatif` reads each copy as
# `lamar whatif` does instead (SQLite through its episode table, with an empty what-if cache) and
# compares the fold of its episodes; `--table` flips bits of SQLite's episode table alone (the pages
# of its rows, slates, sums and indexes, and of `meta`, which holds the seq it folds through).
# `--older N` has a Lamar from before the table's sums (tools/older_writer_table.py) write N more
# episodes to the SQLite store first, so that every read repairs the table from the log.


def make(path: Path, episodes: int = 40) -> list[tuple[object, ...]]:
    """A store at `path`; its events as (seq, kind, key, time, data)."""
    lam = Lamar(str(path), k=2, seed=1)
    for i in range(3):
        lam.add(Experience(f"case {i} fails", f"do fix {i}", scope=Scope(task="t")))
    rng = random.Random(2)
    for _ in range(episodes):
        lam.report(lam.recall({"task": "t"}).episode_id, rng.choice(list(Signal)))
    lam.close()
    return events_of(path)


def events_of(path: Path) -> list[tuple[object, ...]]:
    lam = Lamar(str(path), k=2, seed=1)
    try:
        lam.stats()  # the fold, as `lamar stats` does
        return [(e.seq, e.kind, e.key, e.time, e.data) for e in lam.store.read(0)]
    finally:
        lam.close()


def whatif_of(path: Path) -> str:
    """The fold `lamar whatif` reads, through a cache folder of its own left empty."""
    os.environ["XDG_CACHE_HOME"] = str(path.parent.parent / "cache")
    shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)
    store = open_store(str(path))
    try:
        return fold_store(store).to_json("store")
    finally:
        store.close()


def table_bytes(path: Path) -> list[int]:
    """The offsets of the bytes of the SQLite episode table's pages and of `meta`'s: in a store this
    small each of their tables and indexes is its root page alone."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = [page for (page,) in db.execute(  # each table's and index's every page (`dbstat`)
            "SELECT DISTINCT pageno FROM dbstat WHERE name IN (SELECT name FROM sqlite_master "
            "WHERE tbl_name LIKE 'episode%' OR tbl_name = 'meta')")]
    finally:
        db.close()
    return [(page - 1) * size + i for page in sorted(pages) for i in range(size)]


def trial(original: Path, expected: object, rng: random.Random, folder: Path,
          read: Callable[[Path], object] = events_of, spots: list[int] | None = None) -> str:
    for old in folder.iterdir():
        old.unlink()
    for part in original.parent.iterdir():
        shutil.copy(part, folder / part.name)
    target = folder / original.name
    data = bytearray(target.read_bytes())
    at = rng.randrange(len(data)) if spots is None else spots[rng.randrange(len(spots))]
    data[at] ^= 1 << rng.randrange(8)
    target.write_bytes(bytes(data))
    try:
        got = read(target)
    except LamarError:
        return "refused"
    return "harmless" if got == expected else "wrong"


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def measure(suffix: str, flips: int, seed: int, whatif: bool = False, table: bool = False, episodes: int = 40,
            older: int = 0) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        source, work = Path(tmp) / "source", Path(tmp) / "work"
        source.mkdir()
        work.mkdir()
        original = source / f"store{suffix}"
        expected: object = make(original, episodes)
        read: Callable[[Path], object] = events_of
        if older:
            from older_writer_table import OLDER, append_as_older, older_lamar  # tools/, beside this one

            (Path(tmp) / "older").mkdir()
            append_as_older(original, older_lamar(OLDER, Path(tmp) / "older"), older)
        for extra in source.iterdir():
            if extra.name.endswith(("-wal", "-shm", ".lock")):
                extra.unlink()
        if whatif:
            read = whatif_of
            (Path(tmp) / "unflipped").mkdir()
            for part in source.iterdir():  # read from a copy: a read may repair the table it reads
                shutil.copy(part, Path(tmp) / "unflipped" / part.name)
            expected = whatif_of(Path(tmp) / "unflipped" / original.name)
        spots = table_bytes(original) if table else None
        rng = random.Random(seed)
        counts = {"refused": 0, "harmless": 0, "wrong": 0}
        for _ in range(flips):
            counts[trial(original, expected, rng, work, read, spots)] += 1
        return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flips", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--whatif", action="store_true", help="read each copy as `lamar whatif` does")
    parser.add_argument("--table", action="store_true", help="with --whatif: flip bits of SQLite's episode table only")
    parser.add_argument("--episodes", type=int, default=40, help="episodes in each store")
    parser.add_argument("--older", type=int, default=0, metavar="N",
                        help="with --whatif: a Lamar from before the table's sums writes N more episodes to SQLite")
    args = parser.parse_args(argv)
    if args.table and not args.whatif:
        parser.error("--table goes with --whatif: it flips the table only `lamar whatif` reads")
    if args.older and not args.whatif:
        parser.error("--older goes with --whatif: it changes the table only `lamar whatif` reads")
    print(f"{'backend':8} {'flips':>6} {'refused':>16} {'harmless':>16} {'wrong (silent)':>22}")
    for name, suffix in (("json", ".json"), ("sqlite", ".db")):
        if (args.table or args.older) and suffix != ".db":
            continue  # only SQLite keeps the table
        counts = measure(suffix, args.flips, args.seed, args.whatif, args.table, args.episodes, args.older)
        cells = []
        for outcome in ("refused", "harmless", "wrong"):
            low, high = wilson(counts[outcome], args.flips)
            cells.append(f"{counts[outcome]:>5} [{low:5.1%},{high:5.1%}]")
        print(f"{name:8} {args.flips:>6} {cells[0]:>16} {cells[1]:>16} {cells[2]:>22}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
