"""Figures for the fifth held-out corpus (tests/safety/fifth_formats.py): secrets, fence break-outs, ordinary text.

    python tools/fifth_corpus.py            # the figures and every miss
    python tools/fifth_corpus.py --all      # every case, caught or not
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lamar.safety import injection_reason, prompt_safe
from tests.safety.fifth_formats import BREAKOUTS, MARKERS, ORDINARY, SECRETS, Breakout

sys.path.insert(0, str(ROOT / "tools"))  # the third and fourth corpora's tools: how each case counts
from fourth_corpus import reading, secret_caught
from third_corpus import ordinary_figures


def fenced(case: Breakout) -> tuple[bool, str]:
    """Caught when `prompt_safe` marks a role word `(quoted)` or leaves no trace of the marker as a model reads it."""
    shown = prompt_safe(case.text)
    if shown.count("(quoted)") > case.text.count("(quoted)"):
        return True, shown
    return reading(MARKERS[case.kind]) not in reading(shown), shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print every case, not only the misses")
    args = parser.parse_args()

    caught = 0
    for case in SECRETS:
        ok, note = secret_caught(case)  # type: ignore[arg-type]  # reads only .line and .secret
        caught += ok
        if args.all or not ok:
            print(f"  secret {'caught' if ok else 'MISSED'}: {case.name}: {case.line!r}: {note}  ({case.doc})")
    fence = screen = 0
    for look in BREAKOUTS:
        ok, shown = fenced(look)
        reason = injection_reason(look.text)
        fence += ok
        screen += reason is not None
        if args.all or not ok:
            print(f"  fence {'caught' if ok else 'MISSED'}: {look.kind}: {shown!r}  (screen: {reason})")
    changed, marked, named = ordinary_figures(ORDINARY)
    n, m, k = len(SECRETS), len(BREAKOUTS), len(ORDINARY)
    print(f"secrets caught: {caught} of {n} formats ({100 * caught / n:.0f}%)")
    print(f"fence break-outs marked or defanged by prompt_safe: {fence} of {m}; "
          f"named by injection_reason: {screen} of {m}")
    print(f"ordinary lines changed by scrub: {changed} of {k}; marked by the fence: {marked}; "
          f"named by the screen: {named}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
