"""`python -m lamar.bench.fleet`: the fleet benchmark."""

from __future__ import annotations

import sys

from lamar.bench.fleet.cli import main

if __name__ == "__main__":
    sys.exit(main())
