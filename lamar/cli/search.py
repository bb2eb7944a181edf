"""`lamar search TEXT`: the lessons whose text, scope or id hold every word of TEXT."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from lamar.cli.observe import parse_pairs, print_lessons
from lamar.cli.render import dump_json, scope_text
from lamar.cli.session import UsageError, open_engine
from lamar.experience import Experience


def words_of(text: str) -> list[str]:
    """The words to look for, case-folded; a search for nothing is a usage error.

    >>> words_of("  DerivedData  build ")
    ['deriveddata', 'build']
    """
    words = text.casefold().split()
    if not words:
        raise UsageError("search for some text, e.g. lamar search DerivedData (every word must appear)")
    return words


def matching(lessons: Iterable[Experience], words: list[str]) -> list[Experience]:
    """The lessons holding every word (a substring, any case) in their text, scope or id, in order.

    >>> from lamar.experience import Scope
    >>> lesson = Experience("the build fails", "clear DerivedData", scope=Scope(language="swift"))
    >>> [len(matching([lesson], w)) for w in (["deriveddata"], ["swift", "build"], ["python"])]
    [1, 1, 0]
    """
    found = []
    for exp in lessons:
        haystack = f"{exp.id} {exp.render()} {scope_text(exp.scope)}".casefold()
        if all(word in haystack for word in words):
            found.append(exp)
    return found


def cmd_search(args: argparse.Namespace) -> int:
    words = words_of(" ".join(args.text))
    scope = parse_pairs(args.scope, "--scope")
    lam = open_engine(args)
    try:
        lessons = matching(lam.experiences(status=args.status, scope=scope or None), words)
        rows = [(exp, lam.evidence(exp.id)) for exp in lessons]
    finally:
        lam.close()
    if args.json:
        dump_json([{**exp.to_dict(), "evidence": ev.to_dict()} for exp, ev in rows])
    elif rows:
        print_lessons(rows, args.width)
    else:
        print(f"no lesson holds {' '.join(args.text)!r}" + (" in that scope" if scope else ""))
    return 0


__all__ = ["cmd_search", "matching", "words_of"]
