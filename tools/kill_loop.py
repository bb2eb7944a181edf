"""SIGKILLs a writer (adding lessons, recalling, reporting, now and then a checkpoint) at seeded random
moments, and after each kill checks that the store opens, reads whole, holds every acknowledged write, and
takes a new writer. Usage: python tools/kill_loop.py [--kills 200] [--seed 7] [--backends json,db,pg] [--pg URL]"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The writer logs each write only once its call returned (an acknowledged write), with one unbuffered
# os.write, so a line in the log is a write the store promised to keep. A kill can land after a write
# was stored and before its line: the store may hold one unlogged lesson or report per kill, never fewer.
_CHILD = """
import os, sys
from lamar import Experience, Lamar, Scope
path, log, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
print("imported", flush=True)
lam = Lamar(path, k=2, seed=seed)
i = 0
while True:
    i += 1
    exp_id = lam.add(Experience(f"case {seed} {i} fails", f"do {seed} {i}", scope=Scope(task=f"t{i % 3}")))
    os.write(fd, f"add {exp_id}\\n".encode())
    rec = lam.recall({"task": f"t{i % 3}"})
    lam.report(rec.episode_id, ("shipped", "corrected", "accepted")[i % 3])
    os.write(fd, f"report {rec.episode_id}\\n".encode())
    if i % 17 == 0:
        lam.checkpoint()
        os.write(fd, b"checkpoint\\n")
"""


def _acknowledged(log: Path) -> tuple[list[str], list[str]]:
    words = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return [w[1] for w in words if w[0] == "add"], [w[1] for w in words if w[0] == "report"]


def check(path: str, log: Path, kills: int) -> tuple[int, int]:
    """Open the store, read and fold it whole, and hold it to the log; (lessons, reports) it holds."""
    from lamar import Lamar
    from lamar.store import open_store

    store = open_store(path)
    try:
        store.read(0)  # every event's checksum and form checked
    finally:
        store.close()
    adds, reports = _acknowledged(log)
    with Lamar(path, k=2, seed=0) as lam:
        held = {e.id for e in lam.experiences()}
        missing = set(adds) - held
        assert not missing, f"acknowledged lessons lost: {sorted(missing)[:3]}"
        assert len(held) <= len(adds) + kills, "more lessons than were written"
        count = lam.stats()["reports"]
        assert len(reports) <= count <= len(reports) + kills, f"{count} reports for {len(reports)} acknowledged"
        before = {e.id: lam.evidence(e.id) for e in lam.experiences()}
        lam.rebuild()  # the log folded from scratch decides as the saved state did
        assert {e.id: lam.evidence(e.id) for e in lam.experiences()} == before, "rebuild changed the evidence"
    return len(held), count


def run(path: str, kills: int, seed: int, folder: Path) -> dict[str, float]:
    rng = random.Random(seed)
    log = folder / ("pg.log" if path.startswith("postgresql") else f"{Path(path).name}.log")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    lessons = reports = 0
    for round_ in range(kills):
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, path, str(log), str(round_)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        # Up to 2 s after the imports: opening and the first write take about one, so some kills land in
        # the open and its first writes, the rest in the stream of writes and checkpoints.
        time.sleep(rng.random() * 2.0)
        if proc.poll() is not None:
            raise SystemExit(f"the writer stopped by itself in round {round_}: {proc.stderr.read()[-2000:]}")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        lessons, reports = check(path, log, round_ + 1)
    adds, acked = _acknowledged(log)
    return {"kills": kills, "lessons": lessons, "acked lessons": len(adds), "reports": reports,
            "acked reports": len(acked), "seconds": time.monotonic() - started}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--backends", default="json,db,pg")
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test",
                        help="a database; the run makes the schema faults_kill_loop in it and drops it after")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lamar-kill-loop-") as tmp:
        folder = Path(tmp)
        for backend in args.backends.split(","):
            path = f"{args.pg}?options=-c%20search_path%3D{_SCHEMA}" if backend == "pg" \
                else str(folder / f"killed.{backend}")
            if backend == "pg":
                _schema(args.pg, "DROP SCHEMA IF EXISTS {} CASCADE; CREATE SCHEMA {}")
            try:
                figures = run(path, args.kills, args.seed, folder)
            finally:
                if backend == "pg":
                    _schema(args.pg, "DROP SCHEMA IF EXISTS {} CASCADE")
            print(f"{backend:<5}" + "  ".join(f"{k} {v:.0f}" for k, v in figures.items()), flush=True)
    return 0


_SCHEMA = "faults_kill_loop"


def _schema(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in sql.format(_SCHEMA, _SCHEMA).split(";"):
            conn.execute(statement)


if __name__ == "__main__":
    raise SystemExit(main())
