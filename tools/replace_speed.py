"""N replacements on a log of M reported episodes (memory, SQLite): CPU ms per replacement beside a recall + report.

Usage: python tools/replace_speed.py M N
"""
import os
import random
import sys
import tempfile
import time

from lamar import Experience, Lamar, Scope, Signal


def run(store, m, n, seed=0):
    rng = random.Random(seed)
    lam = Lamar(store, k=3, seed=seed)
    for i in range(20):
        lam.add(Experience(f"pre {i}", f"act {i}", scope=Scope(project=f"p{i % 3}")))
    eps = []
    t0 = time.process_time()
    for i in range(m):
        rec = lam.recall({"project": f"p{i % 3}", "lang": rng.choice(["py", "go"])})
        lam.report(rec.episode_id, rng.choice([Signal.SHIPPED, Signal.REVERTED]))
        eps.append(rec.episode_id)
    per_report = (time.process_time() - t0) / m
    t0 = time.process_time()
    for _ in range(n):
        lam.report(rng.choice(eps), rng.choice([Signal.SHIPPED, Signal.REVERTED]), replace=True)
    per_replace = (time.process_time() - t0) / n
    lam.close()
    return per_report, per_replace

m, n = int(sys.argv[1]), int(sys.argv[2])
for name in ("memory", "sqlite"):
    with tempfile.TemporaryDirectory() as d:
        store = ":memory:" if name == "memory" else os.path.join(d, "x.db")
        rep, rpl = run(store, m, n)
        print(f"{name:7s} M={m} N={n}: recall+report {rep*1e3:.2f} ms, replacement {rpl*1e3:.2f} ms, total replacements {rpl*n:.2f} s")
