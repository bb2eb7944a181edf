"""Counts what the fence marks and the screen names in this repository's docs and README, where no turn is.

    python tools/fence_false_positives.py                      # this tree
    python tools/fence_false_positives.py --against ../base    # and another checkout, side by side

Each non-blank line goes through `prompt_safe` (marked: a role word comes out "(quoted)"; changed:
anything else comes out rewritten, angle brackets and code fences most often) and each paragraph
through `injection_reason` (named: it gets a reason). The corpus is this tree's, for both trees;
the trees run in turns in fresh processes (best CPU time of the rounds kept), and the lines and
paragraphs only one tree marks or names are printed. Figures go to docs/guarantees.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus(root: Path) -> tuple[list[str], list[str]]:
    """The non-blank lines and the paragraphs of `root`'s docs/**/*.md and README.md."""
    texts = [p.read_text(encoding="utf-8") for p in sorted([*root.glob("docs/**/*.md"), root / "README.md"])]
    lines = [line for text in texts for line in text.splitlines() if line.strip()]
    paragraphs = [p for text in texts for p in text.split("\n\n") if p.strip()]
    return lines, paragraphs


def child(root: Path) -> None:
    """One pass: what is marked and named, and the CPU seconds each took."""
    from lamar.safety import injection_reason, prompt_safe
    from lamar.safety.boundary import prompt_form

    lines, paragraphs = corpus(root)
    start = time.process_time()
    shown = [prompt_safe(line) for line in lines]
    fence = time.process_time() - start
    start = time.process_time()
    reasons = [injection_reason(p) for p in paragraphs]
    screen = time.process_time() - start
    # A role word marked "(quoted)", or else any other change: angle brackets, code fences, template tokens.
    marked = [i for i, line in enumerate(lines) if shown[i].count("(quoted)") > line.count("(quoted)")]
    quoted = set(marked)
    changed = [i for i, line in enumerate(lines) if shown[i] != prompt_form(line) and i not in quoted]
    named = [i for i, reason in enumerate(reasons) if reason is not None]
    print(json.dumps({"fence": fence, "screen": screen, "marked": marked, "changed": changed, "named": named}))


def run(tree: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'integrations'}"}
    done = subprocess.run([sys.executable, __file__, "--child", str(ROOT)], env=env, capture_output=True,
                          text=True, check=True, cwd=tree)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout (e.g. the base commit) to run side by side")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    trees = [ROOT] + ([args.against.resolve()] if args.against else [])
    results: dict[Path, dict[str, object]] = {}
    best: dict[Path, list[float]] = {t: [float("inf"), float("inf")] for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            results[tree] = found = run(tree)
            best[tree] = [min(best[tree][0], float(found["fence"])),  # type: ignore[arg-type]
                          min(best[tree][1], float(found["screen"]))]  # type: ignore[arg-type]
    lines, paragraphs = corpus(ROOT)
    print(f"corpus: {len(lines)} non-blank lines, {len(paragraphs)} paragraphs")
    print(f"{'tree':40} {'lines marked':>12} {'otherwise changed':>17} {'paragraphs named':>16} {'fence ms':>9} "
          f"{'screen ms':>9}")
    for tree in trees:
        found = results[tree]
        print(f"{str(tree)[-40:]:40} {len(found['marked']):12} {len(found['changed']):17} "  # type: ignore[arg-type]
              f"{len(found['named']):16} {best[tree][0] * 1000:9.0f} {best[tree][1] * 1000:9.0f}")  # type: ignore[arg-type]
    if args.against:
        here, base = results[ROOT], results[trees[1]]
        for key, items in (("marked", lines), ("changed", lines), ("named", paragraphs)):
            for label, a, b in (("only here", here, base), ("only in base", base, here)):
                for i in sorted(set(a[key]) - set(b[key])):  # type: ignore[call-overload]
                    print(f"  {key} {label}: {items[i][:150]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
