"""Figures for the third held-out corpus (tests/safety/third_formats.py): secrets, fence look-alikes, ordinary text.

    python tools/third_corpus.py            # the figures and every miss
    python tools/third_corpus.py --all      # every case, caught or not
"""

from __future__ import annotations

import argparse
import html
import sys
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

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


def report(secrets: Iterable[Any], looks: Iterable[Any], ordinary: Iterable[str], *, all_cases: bool,
           caught: Callable[[Any], tuple[bool, str]], fenced_by: Callable[[Any], tuple[bool, str]],
           secret_label: Callable[[Any, str], str], look_label: Callable[[Any], str], looks_word: str) -> int:
    """Print a corpus's misses (every case with `all_cases`) and its three figures: the third, fourth and fifth
    corpora are scored alike and differ only in how a case is named."""
    secrets, looks, ordinary = list(secrets), list(looks), list(ordinary)
    found = 0
    for case in secrets:
        ok, note = caught(case)
        found += ok
        if all_cases or not ok:
            print(f"  secret {'caught' if ok else 'MISSED'}: {secret_label(case, note)}")
    fence = screen = 0
    for look in looks:
        ok, shown = fenced_by(look)
        reason = injection_reason(look.text)
        fence += ok
        screen += reason is not None
        if all_cases or not ok:
            print(f"  fence {'caught' if ok else 'MISSED'}: {look_label(look)}: {shown!r}  (screen: {reason})")
    changed, marked, named = ordinary_figures(ordinary)
    n, m, k = len(secrets), len(looks), len(ordinary)
    print(f"secrets caught: {found} of {n} formats ({100 * found / n:.0f}%)")
    print(f"fence {looks_word} marked or defanged by prompt_safe: {fence} of {m}; "
          f"named by injection_reason: {screen} of {m}")
    print(f"ordinary lines changed by scrub: {changed} of {k}; marked by the fence: {marked}; "
          f"named by the screen: {named}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="print every case, not only the misses")
    args = parser.parse_args()
    return report(SECRETS, LOOKALIKES, ORDINARY, all_cases=args.all, caught=secret_caught, fenced_by=fenced,
                  secret_label=lambda case, note: f"{case.name}: {note}  ({case.source})",
                  look_label=lambda look: look.name, looks_word="look-alikes")


if __name__ == "__main__":
    raise SystemExit(main())
