"""Write lamar/safety/needle_table.py: the needles of `scrub`'s rules, each with the shortest text a rule
holding it can match, which `lamar.safety.prefilter.may_hold_secret` looks for.

    python tools/needle_table.py

Read from the rules at every recall, they would cost a process its first recall (the rules compiled and parsed
again); so they are written here and committed, and tests/safety/test_prefilter.py checks that the committed
table is what this writes.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "lamar" / "safety" / "needle_table.py"


def shortest(pattern: object) -> int:
    parser = importlib.import_module("re._parser")
    return int(parser.parse(pattern.pattern, pattern.flags).getwidth()[0])  # type: ignore[attr-defined]


def tables() -> tuple[dict[str, int], dict[str, int], list[tuple[str, int]]]:
    """Needles matched as written and needles matched ignoring case (lowercase), each with the shortest match
    of a rule holding it; a needle holding a shorter one of its kind is left out, the shorter taking its width
    when less. Provider tokens are left out (`scrub` runs them only on a key run); rules without needles are
    returned apart (kind, shortest): the pre-filter has a pattern of its own for each."""
    sys.path.insert(0, str(ROOT))
    from lamar.safety.secrets import RULES

    plain: dict[str, int] = {}
    folded: dict[str, int] = {}
    bare: list[tuple[str, int]] = []
    for rule in RULES:
        if rule.token:
            continue
        width = shortest(rule.pattern)
        if rule.needles is None:
            bare.append((rule.kind, width))
            continue
        for needle, icase in rule.needles.found:
            found = folded if icase else plain
            found[needle] = min(width, found.get(needle, width))
    return _kept(plain), _kept(folded), bare


def _kept(needles: dict[str, int]) -> dict[str, int]:
    kept: dict[str, int] = {}
    for needle in sorted(needles, key=len):
        inside = [short for short in kept if short in needle]
        if inside:
            for short in inside:
                kept[short] = min(kept[short], needles[needle])
        else:
            kept[needle] = needles[needle]
    return dict(sorted(kept.items()))


def _lines(name: str, table: dict[str, int], what: str) -> list[str]:
    # One a line, in double quotes: as ruff formats it.
    entries = [f"    {json.dumps(needle, ensure_ascii=False)}: {width}," for needle, width in table.items()]
    return [f"{name}: dict[str, int] = {{  # {what}", *entries, "}"]


def render() -> str:
    plain, folded, _ = tables()
    return "\n".join(
        [
            '"""The needles of `scrub`\'s rules and the shortest text each can be found in, written by',
            '`python tools/needle_table.py` (tests/safety/test_prefilter.py checks it is current)."""',
            "",
            "from __future__ import annotations",
            "",
            *_lines("PLAIN", plain, "matched as written"),
            *_lines("FOLDED", folded, "matched in the text lowercased"),
            "",
        ]
    )


if __name__ == "__main__":
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(tables()[0])} + {len(tables()[1])} needles")
