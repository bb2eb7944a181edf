"""`python -m lamar.bench`: the speed benchmark, or with `--cold` the cold-start one."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--cold" in args:
        from lamar.bench.cold import main as cold

        return cold([a for a in args if a != "--cold"])
    from lamar.bench.speed import main as speed

    return speed(args)


if __name__ == "__main__":
    from lamar.bench.arguments import command

    sys.exit(command("python -m lamar.bench", main))
