"""Figures for the third held-out corpus (tests/safety/third_formats.py): secrets, fence look-alikes, ordinary text.

    python tools/third_corpus.py            # the figures and every miss
    python tools/third_corpus.py --all      # every case, caught or not
"""

from __future__ import annotations

import argparse
import html
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lamar.safety import injection_reason, prompt_safe, scrub
from tests.safety.third_formats import LOOKALIKES, ORDINARY, SECRETS, Lookalike, Secret

RUN = 12  # a secret counts as leaked while any run of this many of its characters is left in the text


def leaked(secret: str, text: str) -> bool:
    width = min(RUN, len(secret))
    return any(secret[i:i + width] in text for i in range(len(secret) - width + 1))


def secret_caught(case: Secret) -> tuple[bool, str]:
    cleaned, kinds = scrub(case.text)
    if leaked(case.secret, cleaned):
        return False, f"left in the text (kinds {kinds or 'none'})"
    if not kinds:
        return False, "changed but no kind named"
    return True, ", ".join(kinds)


def reading(text: str) -> str:
    """The text as a model reads it: compatibility forms folded, character references read."""
    return html.unescape(unicodedata.normalize("NFKC", text))


def fenced(case: Lookalike) -> tuple[bool, str]:
    shown = prompt_safe(case.text)
    if case.kind == "role":
        ok = shown.count("(quoted)") > case.text.count("(quoted)")
    elif case.kind == "token":
        assert case.token in reading(case.text), case.name
        ok = case.token not in reading(shown)
    else:
        ok = not set(case.token) & set(shown)
    return ok, shown


def ordinary_figures(lines: Iterable[str]) -> tuple[int, int, int]:
    """How many of the ordinary `lines` scrub changes, the fence marks and the screen names, each one printed."""
    changed = marked = named = 0
    for line in lines:
        cleaned, kinds = scrub(line)
        shown = prompt_safe(line)
        reason = injection_reason(line)
        if cleaned != line:
            changed += 1
            print(f"  ordinary REDACTED: {cleaned!r} {kinds}")
        if shown.count("(quoted)") > line.count("(quoted)"):
            marked += 1
            print(f"  ordinary MARKED by the fence: {shown!r}")
        if reason is not None:
            named += 1
            print(f"  ordinary NAMED by the screen: {line!r}: {reason}")
    return changed, marked, named


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print every case, not only the misses")
    args = parser.parse_args()

    caught = 0
    for case in SECRETS:
        ok, note = secret_caught(case)
        caught += ok
        if args.all or not ok:
            print(f"  secret {'caught' if ok else 'MISSED'}: {case.name}: {note}  ({case.source})")
    fence = screen = 0
    for look in LOOKALIKES:
        ok, shown = fenced(look)
        reason = injection_reason(look.text)
        fence += ok
        screen += reason is not None
        if args.all or not ok:
            print(f"  fence {'caught' if ok else 'MISSED'}: {look.name}: {shown!r}  (screen: {reason})")
    changed, marked, named = ordinary_figures(ORDINARY)
    n, m, k = len(SECRETS), len(LOOKALIKES), len(ORDINARY)
    print(f"secrets caught: {caught} of {n} formats ({100 * caught / n:.0f}%)")
    print(f"fence look-alikes marked or defanged by prompt_safe: {fence} of {m}; "
          f"named by injection_reason: {screen} of {m}")
    print(f"ordinary lines changed by scrub: {changed} of {k}; marked by the fence: {marked}; "
          f"named by the screen: {named}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
