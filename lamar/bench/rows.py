"""Lesson-row benchmark: `python -m lamar.bench.rows` times what a fold-mode client does to one
lesson's state on every recall and fold: decode its row's text, copy it (a fold changes a copy), encode it."""

from __future__ import annotations

import argparse
import random
import sys
import timeit
from collections.abc import Callable

from lamar.bench.arguments import positive
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.policy.lesson import LessonState
from lamar.signals import Signal
from lamar.state.cache import FoldCache
from lamar.store.postgres import row_text


def states(values: int, lessons: int = 5, episodes: int = 300) -> list[LessonState]:
    """Lessons scoped to one task, recalled in contexts whose free key `lang` takes `values` values.

    The states are an in-memory engine's after `episodes` reports (a slice per value of `lang`),
    folded again from its log as a fold-mode client holds them; no server is needed.
    """
    lam = Lamar(":memory:", k=3, seed=7)
    for i in range(lessons):
        lam.add(Experience(f"working on case {i}", f"apply fix {i}", scope=Scope(task="bench")))
    rng, signals = random.Random(7), list(Signal)
    for _ in range(episodes):
        rec = lam.recall({"task": "bench", "lang": f"l{rng.randrange(values)}"})
        lam.report(rec.episode_id, rng.choice(signals))
    cache = FoldCache(lam.policy, lam.store.location)  # the engine's fold, redone from its log
    cache.fold_log(lam.store.read(0))
    return [s for s in cache.lessons.values() if s.eligible]


def measure(values: int, number: int = 2000) -> dict[str, float]:
    """Microseconds per lesson to decode, copy and encode the `states(values)`, best of 5 rounds
    of `number` (`main` measures 1 and 4 values of the free key)."""
    found = states(values)
    texts = [row_text.encode(s, row_text.lesson_text(s.experience)) for s in found]
    lessons = {text.partition("\n")[0]: s.experience for text, s in zip(texts, found, strict=True)}

    def best(run: Callable[[], object]) -> float:
        rounds = timeit.repeat(run, number=number, repeat=5)
        return min(rounds) / number / len(found) * 1e6

    return {
        "slices": sum(len(s.slices.slices) for s in found) / len(found),
        "bytes": sum(len(t) for t in texts) / len(texts),
        "decode_us": best(lambda: [row_text.decode(t, lessons.__getitem__) for t in texts]),
        "copy_us": best(lambda: [s.copy() for s in found]),
        "encode_us": best(lambda: [row_text.encode(s, "x") for s in found]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.rows", description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per round")
    args = parser.parse_args(argv)
    positive(parser, number=args.number)
    print("one lesson's state after 300 reports, microseconds per lesson (best of 5 rounds)")
    print(f"{'slices':>7}{'row bytes':>11}{'decode':>9}{'copy':>9}{'encode':>9}")
    for values in (1, 4):
        row = measure(values, args.number)
        print(f"{row['slices']:>7.1f}{row['bytes']:>11.0f}{row['decode_us']:>9.1f}{row['copy_us']:>9.1f}"
              f"{row['encode_us']:>9.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
