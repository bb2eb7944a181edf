"""`python -m lamar.cli ...` runs the `lamar` command."""

from __future__ import annotations

import sys

from lamar.cli import main

if __name__ == "__main__":
    sys.exit(main())
