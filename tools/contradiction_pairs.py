"""Counts the labelled pairs of tools/contradiction_pairs.json that sleep flags as a contradiction.

    python tools/contradiction_pairs.py                      # this tree
    python tools/contradiction_pairs.py --before dd4e6c7d    # and that commit's lamar/, side by side

Each pair's two lessons go into a fresh in-memory store (one precondition, scope project=shop), then
`sleep`; a pair is flagged when one contradiction names both. The walk-through imports the file's
CLAUDE.md into a git repository named shop, adds each hand lesson ("working on shop") alone, and
counts the lessons sleep's contradictions name. A tree runs in its own process. Figures go to docs/sleep.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import side_by_side

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).with_suffix(".json")


def child() -> None:
    """One tree: the indices of the pairs flagged, and the lessons named per walk-through lesson."""
    from lamar import Experience, Lamar, Scope
    from lamar.rules import import_rules

    data = json.loads(DATA.read_text(encoding="utf-8"))
    shop = Scope(project="shop")
    flagged = []
    for n, pair in enumerate(data["pairs"]):
        lam = Lamar(":memory:", seed=1)
        ids = {lam.add(Experience(pair["precondition"], pair[side], scope=shop)) for side in ("a", "b")}
        if any(ids <= set(p.experience_ids) for p in lam.sleep().of_kind("contradiction")):
            flagged.append(n)
    named = []
    for action in data["walkthrough"]["added"]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "shop"
            repo.mkdir()
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            (repo / "CLAUDE.md").write_text(data["walkthrough"]["claude_md"], encoding="utf-8")
            lam = Lamar(":memory:", seed=1)
            rules = len(import_rules(lam, repo, apply=True).lessons)
            lam.add(Experience("working on shop", action, scope=shop))
            named.append([rules, sum(len(p.experience_ids) for p in lam.sleep().of_kind("contradiction"))])
    print(json.dumps({"flagged": flagged, "walkthrough": named}))


def _count(column: dict[str, list[int]], wanted: list[int]) -> str:
    return f"{len(set(column['flagged']) & set(wanted))} of {len(wanted)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    found = side_by_side.pairs_and_columns(parser, argv, __file__, child, DATA)
    if found is None:
        return 0
    pairs, columns = found
    conflict = [n for n, p in enumerate(pairs) if p["conflict"]]
    other = [n for n, p in enumerate(pairs) if not p["conflict"]]
    print(f"{len(pairs)} labelled pairs ({DATA.relative_to(ROOT)}): {len(conflict)} conflict, {len(other)} do not")
    print(f"{'':60}" + "".join(f"{name:>20}" for name in columns))
    for label, wanted in (("conflicting pairs flagged", conflict), ("non-conflicting pairs flagged", other)):
        print(f"{label:60}" + "".join(f"{_count(c, wanted):>20}"
                                      for c in columns.values()))
    rules = next(iter(columns.values()))["walkthrough"][0][0]
    print(f"walk-through, {rules} imported rules + one lesson by hand: lessons sleep's contradictions name")
    for n, action in enumerate(json.loads(DATA.read_text(encoding="utf-8"))["walkthrough"]["added"]):
        print(f"  {action!r:58}" + "".join(f"{c['walkthrough'][n][1]:>20}" for c in columns.values()))
    last = columns["this tree"]["flagged"]
    for name, chosen in (("missed", [n for n in conflict if n not in last]),
                         ("flagged, no conflict", [n for n in other if n in last])):
        for n in chosen:
            p = pairs[n]
            event = "" if p["precondition"].startswith("working on") else " (an event: rival answers, all flagged)"
            print(f"{name}: {p['precondition']!r}: {p['a']!r} / {p['b']!r}{event}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
