"""`require_extra`: an integration's framework imported up front, or an error naming the extra
that installs it, rather than a bare ModuleNotFoundError deep inside one of its modules."""

from __future__ import annotations

import importlib


def require_extra(package: str, framework: str, extra: str, *modules: str) -> None:
    """Import `modules` (what `package` builds on), or raise ModuleNotFoundError saying how to
    install the `extra` that brings `framework`.

    >>> require_extra("lamar_x", "X", "x", "json", "no_such_module")
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: lamar_x needs X (No module named 'no_such_module'), the x extra: pip install "lamar[x]" (in a clone of Lamar: pip install -e ".[x]")
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(
                f'{package} needs {framework} ({exc}), the {extra} extra: pip install "lamar[{extra}]" '
                f'(in a clone of Lamar: pip install -e ".[{extra}]")', name=exc.name) from exc


__all__ = ["require_extra"]
