"""A Griffe extension for the docs build: a bare doctest in a docstring renders as code.

Our docstrings end with doctests that pytest runs (`--doctest-modules`), outside any
`Examples:` section. Markdown would read their output (`['a', 'b']`) as links; this
extension fences every run of `>>>` lines at the docstring's own indentation as ```pycon.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """Wrap each top-level doctest (prompts and the output under them) in a pycon fence.

    >>> print(fence_doctests("Why.\\n\\n>>> 1 + 1\\n2"))
    Why.
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    """
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if not inside and line.startswith(">>>"):
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line)
    if inside:
        out.append("```")
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Fence the doctests of every object before its docstring is parsed."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ">>>" in obj.docstring.value:
            obj.docstring.value = fence_doctests(obj.docstring.value)
