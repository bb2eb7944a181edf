"""Check that a built wheel holds every file git tracks under the packages pyproject.toml ships.

    python tools/wheel_contents.py dist/lamar-0.1.0-py3-none-any.whl

A resource that is not Python (a .sql file, a stylesheet, py.typed) is easy to leave out of a
wheel; the editable install and the tests would never notice. Exit 1, listing them, if any is missing.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shipped_packages(root: Path = ROOT) -> list[str]:
    """The package folders of `[tool.hatch.build.targets.wheel] packages`, e.g. "integrations/lamar_ui"."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"])


def expected_files(root: Path = ROOT) -> set[str]:
    """Each tracked file of each package, named as the wheel names it (lamar_ui/app.py)."""
    expected = set()
    for package in shipped_packages(root):
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", package], check=True,
                                capture_output=True, text=True).stdout
        parent = Path(package).parent
        for name in filter(None, listed.split("\0")):
            expected.add(Path(name).relative_to(parent).as_posix())
    return expected


def missing_from(wheel: Path, root: Path = ROOT) -> list[str]:
    """The tracked package files the wheel lacks, sorted."""
    with zipfile.ZipFile(wheel) as archive:
        held = set(archive.namelist())
    return sorted(expected_files(root) - held)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(argv[0])
    missing = missing_from(wheel)
    expected = len(expected_files())
    if missing:
        print(f"{wheel.name} lacks {len(missing)} of the {expected} files git tracks in its packages:")
        for name in missing:
            print(f"  {name}")
        return 1
    print(f"{wheel.name} holds all {expected} files git tracks in its {len(shipped_packages())} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
