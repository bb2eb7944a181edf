"""Counts the labelled pairs of tools/lesson_pairs.json that lamar takes for one lesson.

    python tools/lesson_pairs.py                      # this tree
    python tools/lesson_pairs.py --before 228f750d    # and that commit's lamar/, side by side

Two checks read a pair: sleep's merge (both lessons in a fresh in-memory store, one scope, then `sleep`;
the pair counts when one merge names both) and the near-copy check of a proposal and of `import-rules`
(`LessonWords.similarity` at the default threshold). A tree runs in its own process. Figures go to docs/sleep.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import side_by_side

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).with_suffix(".json")


def child() -> None:
    """One tree: the indices of the pairs sleep merges, and of those the near-copy check calls copies."""
    from lamar import Experience, Lamar, Scope
    from lamar.sleep.similarity import NEAR_DUPLICATE, LessonWords

    shop = Scope(project="shop")
    merged, copies = [], []
    for n, pair in enumerate(json.loads(DATA.read_text(encoding="utf-8"))["pairs"]):
        lam = Lamar(":memory:", seed=1)
        ids = {lam.add(Experience(*pair[side], scope=shop)) for side in ("a", "b")}
        if any(ids <= set(p.experience_ids) for p in lam.sleep().of_kind("merge")):
            merged.append(n)
        if LessonWords.of(*pair["a"]).similarity(LessonWords.of(*pair["b"])) >= NEAR_DUPLICATE:
            copies.append(n)
    print(json.dumps({"merged": merged, "copies": copies}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    found = side_by_side.pairs_and_columns(parser, argv, __file__, child, DATA)
    if found is None:
        return 0
    pairs, columns = found
    same = [n for n, p in enumerate(pairs) if p["same"]]
    other = [n for n, p in enumerate(pairs) if not p["same"]]
    print(f"{len(pairs)} labelled pairs ({DATA.relative_to(ROOT)}): {len(same)} one lesson, {len(other)} two")
    print(f"{'':44}" + "".join(f"{name:>20}" for name in columns))
    for check, key in (("sleep merges", "merged"), ("near-copy check", "copies")):
        for label, wanted in (("same-lesson pairs", same), ("two-lesson pairs (false merges)", other)):
            print(f"{check + ', ' + label:44}" + "".join(
                f"{len(set(c[key]) & set(wanted))} of {len(wanted)}".rjust(20) for c in columns.values()))
    last = columns["this tree"]
    for name, chosen in (("missed", [n for n in same if n not in last["merged"]]),
                         ("merged, two lessons", [n for n in other if n in last["merged"]])):
        for n in chosen:
            a, b = pairs[n]["a"], pairs[n]["b"]
            print(f"{name}: {a[0]!r}: {a[1]!r} / " + (f"{b[1]!r}" if a[0] == b[0] else f"{b[0]!r}: {b[1]!r}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
