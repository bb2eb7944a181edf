"""A replaced report beside a fresh one in PostgreSQL's fold mode, on namespaces of 1 000, 4 000 and 16 000
episodes side by side: milliseconds per report (wall clock: the server's time counts) and the ratio to a fresh one.

Usage: python tools/pg_replace_speed.py [URL] [--episodes 1000,4000,16000] [--reports 40]
"""
import argparse
import random
import statistics
import time
import uuid

from lamar import Experience, Lamar, Scope, Signal
from lamar.bench.fleet.clients import drop_namespace

SIGNALS = [Signal.SHIPPED, Signal.REVERTED, Signal.ACCEPTED]


def timed(call) -> float:
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1e3


def measure(url: str, episodes: int, reports: int, seed: int = 0) -> dict[str, float]:
    rng = random.Random(seed)
    lam = Lamar(url, k=3, seed=seed)
    for i in range(20):
        lam.add(Experience(f"pre {i}", f"act {i}", scope=Scope(project=f"p{i % 3}")))

    def recall() -> str:
        return lam.recall({"project": f"p{rng.randrange(3)}", "lang": rng.choice(["py", "go"])}).episode_id

    eps = []
    for _ in range(episodes):
        eps.append(recall())
        lam.report(eps[-1], rng.choice(SIGNALS))
    out: dict[str, float] = {}
    # A new engine's first replacement folds the log once: whole where no state is saved; else from the state the
    # engine closed before saved at the end of the log, going back to an undo mark saved with it.
    for name in ("first in an engine, no saved state", "first in an engine, a state saved after it"):
        lam.close()
        lam = Lamar(url, k=3, seed=seed)
        out[name] = timed(lambda: lam.report(eps[-rng.randrange(1, 50)], rng.choice(SIGNALS), replace=True))  # noqa: B023
        for _ in range(100):
            eps.append(recall())
            lam.report(eps[-1], rng.choice(SIGNALS))
    fresh, again, recent = [], [], []
    for _ in range(reports):  # then, in that engine: a report, the same report replaced, a recent one replaced
        eps.append(recall())
        fresh.append(timed(lambda: lam.report(eps[-1], rng.choice(SIGNALS))))
        again.append(timed(lambda: lam.report(eps[-1], rng.choice(SIGNALS), replace=True)))
        recent.append(timed(lambda: lam.report(eps[-rng.randrange(1, 100)], rng.choice(SIGNALS), replace=True)))
    out["fresh report"] = statistics.median(fresh)
    out["replaced at once"] = statistics.median(again)
    out["a recent one replaced"] = statistics.median(recent)
    lam.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--episodes", default="1000,4000,16000")
    parser.add_argument("--reports", type=int, default=40)
    args = parser.parse_args()
    sizes = [int(n) for n in args.episodes.split(",")]
    results = {}
    for n in sizes:
        namespace = f"pgfold-replace-speed-{uuid.uuid4().hex[:8]}"
        sep = "&" if "?" in args.url else "?"
        try:
            results[n] = measure(f"{args.url}{sep}lamar_namespace={namespace}&lamar_fold=on", n, args.reports)
        finally:
            drop_namespace(args.url, namespace)
    print(f"{'ms (median over ' + str(args.reports) + ' reports; ratio to a fresh report)':<44}"
          + "".join(f"{n:>20,} episodes" for n in sizes))
    for name in results[sizes[0]]:
        cells = "".join(f"{results[n][name]:>12.1f} ({results[n][name] / results[n]['fresh report']:>6.1f}x)"
                        for n in sizes)
        print(f"{name:<44}{cells}")


if __name__ == "__main__":
    main()
