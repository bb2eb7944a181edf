"""What a checkpoint costs the writers of a PostgreSQL fold-mode namespace: writer threads recall and report
while a new engine checkpoints (resumed from the state saved beside the log); each write's milliseconds (wall
clock), during the checkpoint beside the rest of the run, and their ratio.

Usage: python tools/pg_checkpoint_writers.py [URL] [--episodes 4000] [--writers 2]
"""
import argparse
import random
import statistics
import threading
import time
import uuid

from lamar import Experience, Lamar, Scope, Signal
from lamar.bench.fleet.clients import drop_namespace


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def measure(url: str, episodes: int, writers: int) -> tuple[float, list[float], list[float]]:
    rng = random.Random(0)
    lam = Lamar(url, k=3, seed=0)
    for i in range(20):
        lam.add(Experience(f"pre {i}", f"act {i}", scope=Scope(project=f"p{i % 3}")))
    for _ in range(episodes):
        lam.report(lam.recall({"project": f"p{rng.randrange(3)}"}).episode_id, rng.choice([1.0, -1.0]))
    lam.stats()  # folds the log: the engine, which wrote, saves its state at close
    lam.close()
    stop = threading.Event()
    writes: list[tuple[float, float]] = []  # (start, end), perf_counter seconds

    def writer(seed: int) -> None:
        own, draw = Lamar(url, k=3, seed=seed), random.Random(seed)
        while not stop.is_set():
            t0 = time.perf_counter()
            own.report(own.recall({"project": f"p{draw.randrange(3)}"}).episode_id, Signal.SHIPPED)
            writes.append((t0, time.perf_counter()))
        own.close()

    threads = [threading.Thread(target=writer, args=(seed,)) for seed in range(1, writers + 1)]
    for thread in threads:
        thread.start()
    time.sleep(3.0)
    checkpointer = Lamar(url, k=3, seed=0)
    start = time.perf_counter()
    checkpointer.checkpoint()
    end = time.perf_counter()
    checkpointer.close()
    time.sleep(3.0)
    stop.set()
    for thread in threads:
        thread.join()
    during = [(b - a) * 1e3 for a, b in writes if b > start and a < end]
    rest = [(b - a) * 1e3 for a, b in writes if not (b > start and a < end)]
    return (end - start) * 1e3, during, rest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", nargs="?", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--episodes", type=int, default=4000)
    parser.add_argument("--writers", type=int, default=2)
    args = parser.parse_args()
    namespace = f"pgfold-checkpoint-writers-{uuid.uuid4().hex[:8]}"
    sep = "&" if "?" in args.url else "?"
    try:
        took, during, rest = measure(f"{args.url}{sep}lamar_namespace={namespace}&lamar_fold=on", args.episodes,
                                     args.writers)
    finally:
        drop_namespace(args.url, namespace)
    print(f"checkpoint of {args.episodes:,} episodes: {took:.0f} ms; writes (recall + report) in ms")
    print(f"{'':<28}{'writes':>8}{'p50':>10}{'p99':>10}{'max':>10}")
    for name, values in (("during the checkpoint", during), ("the rest of the run", rest)):
        print(f"{name:<28}{len(values):>8}{statistics.median(values) if values else float('nan'):>10.1f}"
              f"{quantile(values, 0.99):>10.1f}{max(values, default=float('nan')):>10.1f}")
    print(f"{'ratio (during / rest)':<28}{'':>8}{statistics.median(during) / statistics.median(rest):>10.1f}"
          f"{quantile(during, 0.99) / quantile(rest, 0.99):>10.1f}")


if __name__ == "__main__":
    main()
