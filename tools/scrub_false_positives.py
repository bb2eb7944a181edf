"""Counts what `scrub()` redacts in this repository's own code and docs, where no real secret is.

    python tools/scrub_false_positives.py

Test files that hold fake secrets on purpose (tests/safety/, and any file naming a fake token)
are left out. Every redaction printed is a false positive or a fixture that escaped the filter.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lamar.safety import scrub

ROOT = Path(__file__).resolve().parent.parent
SKIP = ("tests/safety/", "tests/faults/", "tests/cli/", "tests/integrations/", "tests/sleep/")


def corpus() -> list[Path]:
    files = [*ROOT.glob("lamar/**/*.py"), *ROOT.glob("integrations/**/*.py"), *ROOT.glob("docs/**/*.md"),
             *ROOT.glob("tests/**/*.py"), ROOT / "README.md"]
    return sorted(p for p in files if not str(p.relative_to(ROOT)).startswith(SKIP)
                  and p.name not in ("secrets.py", "assignments.py", "placeholders.py", "providers.py", "entropy.py"))


def main() -> int:
    files = corpus()
    lines = redactions = 0
    size = 0
    spent = 0.0
    for path in files:
        text = path.read_text()
        size += len(text)
        lines += text.count("\n")
        start = time.perf_counter()
        cleaned, kinds = scrub(text)
        spent += time.perf_counter() - start
        found = cleaned.count("[REDACTED:")
        if found:
            redactions += found
            print(f"  {path.relative_to(ROOT)}: {found} ({', '.join(kinds)})")
    print(f"files {len(files)}, lines {lines}, {size / 1e6:.2f} MB, redactions {redactions}, "
          f"{size / 1e6 / spent:.2f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
