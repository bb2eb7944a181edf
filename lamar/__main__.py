"""`python -m lamar ...` runs the `lamar` command, as `python -m lamar.cli` does."""

from __future__ import annotations

import sys

from lamar.cli import main

if __name__ == "__main__":
    sys.exit(main())
