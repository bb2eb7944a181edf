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

from lamar.safety import prompt_safe
from tests.safety.fifth_formats import BREAKOUTS, MARKERS, ORDINARY, SECRETS, Breakout

sys.path.insert(0, str(ROOT / "tools"))  # the third and fourth corpora's tools: how each case counts
from fourth_corpus import reading, secret_caught
from third_corpus import report


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
    return report(SECRETS, BREAKOUTS, ORDINARY, all_cases=args.all,
                  caught=secret_caught,  # type: ignore[arg-type]  # reads only .line and .secret
                  fenced_by=fenced, secret_label=lambda case, note: f"{case.name}: {case.line!r}: {note}  ({case.doc})",
                  look_label=lambda look: look.kind, looks_word="break-outs")


if __name__ == "__main__":
    raise SystemExit(main())
