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

from lamar.safety import injection_reason, prompt_safe, scrub
from tests.safety.fourth_formats import BREAKOUTS, ORDINARY, SECRETS, Breakout, Secret

sys.path.insert(0, str(ROOT / "tools"))  # the third corpus's tool: how a leak and an ordinary line count
from third_corpus import leaked, ordinary_figures


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

    caught = 0
    for case in SECRETS:
        ok, note = secret_caught(case)
        caught += ok
        if args.all or not ok:
            print(f"  secret {'caught' if ok else 'MISSED'}: {case.family}: {case.line!r}: {note}")
    fence = screen = 0
    for look in BREAKOUTS:
        ok, shown = fenced(look)
        reason = injection_reason(look.text)
        fence += ok
        screen += reason is not None
        if args.all or not ok:
            print(f"  fence {'caught' if ok else 'MISSED'}: {look.family}: {shown!r}  (screen: {reason})")
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
