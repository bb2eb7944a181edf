"""Counts the ordinary lines `action_reason` names: the corpora's ordinary lines and this repository's docs.

    python tools/action_false_positives.py

Every line printed is a false positive, or a docs line that shows a dangerous command on purpose.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lamar.safety.actions import action_reason
from tests.safety import fifth_formats, fourth_formats, heldout_corpus, third_formats
from tests.safety.test_dangerous_actions import BENIGN


def main() -> int:
    corpora = {"third": list(third_formats.ORDINARY), "fourth": list(fourth_formats.ORDINARY),
               "fifth": list(fifth_formats.ORDINARY), "heldout": list(heldout_corpus.ORDINARY),
               "benign lessons": list(BENIGN)}
    docs = [line for path in sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md"])
            for line in path.read_text().splitlines() if line.strip()]
    corpora["docs lines"] = docs
    for name, lines in corpora.items():
        named = [(line, reason) for line in lines if (reason := action_reason(line))]
        print(f"{name}: {len(named)} of {len(lines)} named")
        for line, reason in named:
            print(f"  {reason}  <- {line[:100]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
