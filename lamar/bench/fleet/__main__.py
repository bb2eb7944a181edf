"""`python -m lamar.bench.fleet`: the fleet benchmark."""

from __future__ import annotations

import sys

from lamar.bench.arguments import command
from lamar.bench.fleet.cli import main

if __name__ == "__main__":
    sys.exit(command("python -m lamar.bench.fleet", main))
