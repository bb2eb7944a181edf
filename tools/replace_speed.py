"""N replacements on a log of M reported episodes (memory, SQLite): CPU ms per replacement beside a
recall + report and beside a refold of the whole log, for a random earlier episode and a recent one.

Usage: python tools/replace_speed.py M N
"""
import os
import random
import sys
import tempfile
import time

from lamar import Experience, Lamar, Scope, Signal


def run(store, m, n, recent, seed=0):
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
    log = lam._holder._log  # the whole refold a replacement cost before it refolded from a mark
    t0 = time.process_time()
    for _ in range(3):
        log.refold()
    per_refold = (time.process_time() - t0) / 3
    t0 = time.process_time()
    for _ in range(n):
        target = rng.choice(eps[-10:] if recent else eps)
        lam.report(target, rng.choice([Signal.SHIPPED, Signal.REVERTED]), replace=True)
    per_replace = (time.process_time() - t0) / n
    lam.close()
    return per_report, per_refold, per_replace

m, n = int(sys.argv[1]), int(sys.argv[2])
for name in ("memory", "sqlite"):
    for recent in (False, True):
        with tempfile.TemporaryDirectory() as d:
            store = ":memory:" if name == "memory" else os.path.join(d, "x.db")
            rep, refold, rpl = run(store, m, n, recent)
            which = "recent" if recent else "random"
            print(f"{name:7s} M={m} N={n} {which}: recall+report {rep*1e3:.2f} ms, whole refold {refold*1e3:.2f} ms, "
                  f"replacement {rpl*1e3:.2f} ms, total replacements {rpl*n:.2f} s")
