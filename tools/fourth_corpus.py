"""Figures for the fourth held-out corpus (tests/safety/fourth_formats.py): secrets, fence break-outs, ordinary text.

    python tools/fourth_corpus.py            # the figures and every miss
    python tools/fourth_corpus.py --all      # every case, caught or not
"""

from __future__ import annotations

import argparse
import html
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lamar.safety import prompt_safe, scrub
from tests.safety.fourth_formats import BREAKOUTS, ORDINARY, SECRETS, Breakout, Secret

sys.path.insert(0, str(ROOT / "tools"))  # the third corpus's tool: how a leak and an ordinary line count
from third_corpus import leaked, report


def secret_caught(case: Secret) -> tuple[bool, str]:
    cleaned, kinds = scrub(case.line)
    if leaked(case.secret, cleaned):
        return False, f"left in the text (kinds {kinds or 'none'})"
    if not kinds:
        return False, "changed but no kind named"
    return True, ", ".join(kinds)


def reading(text: str) -> str:
    """The text as a model reads it: compatibility forms folded, character references read, spaces collapsed."""
    return " ".join(html.unescape(unicodedata.normalize("NFKC", text)).split())


def fenced(case: Breakout) -> tuple[bool, str]:
    """Caught when `prompt_safe` marks a role word `(quoted)` or leaves no trace of the marker as a model reads it."""
    shown = prompt_safe(case.text)
    if shown.count("(quoted)") > case.text.count("(quoted)"):
        return True, shown
    return reading(case.marker) not in reading(shown), shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print every case, not only the misses")
    args = parser.parse_args()
    return report(SECRETS, BREAKOUTS, ORDINARY, all_cases=args.all, caught=secret_caught, fenced_by=fenced,
                  secret_label=lambda case, note: f"{case.family}: {case.line!r}: {note}",
                  look_label=lambda look: look.family, looks_word="break-outs")


if __name__ == "__main__":
    raise SystemExit(main())
