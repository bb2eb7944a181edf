"""Started by the interpreter a docs check runs a block in: the packages that block's extra does not
install fail to import, as they do in a reader's venv that has only that extra."""

import os
import sys
from importlib.abc import MetaPathFinder


class _Absent(MetaPathFinder):
    def __init__(self, names: frozenset[str], why: str) -> None:
        self.names, self.why = names, why

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} ({self.why})", name=name)


if os.environ.get("LAMAR_DOCS_ABSENT"):
    sys.meta_path.insert(0, _Absent(frozenset(os.environ["LAMAR_DOCS_ABSENT"].split(",")),
                                    os.environ.get("LAMAR_DOCS_WHY", "not installed by the page's extra")))
