"""`lamar search TEXT`: the lessons whose text, scope or id hold every word of TEXT."""

from __future__ import annotations

import argparse

from lamar.cli.observe import dump_lessons, lesson_rows, parse_pairs, print_lessons
from lamar.cli.session import UsageError
from lamar.search import matching


def words_of(text: str) -> list[str]:
    """The words to look for, case-folded; a search for nothing is a usage error.

    >>> words_of("  DerivedData  build ")
    ['deriveddata', 'build']
    """
    words = text.casefold().split()
    if not words:
        raise UsageError("search for some text, e.g. lamar search DerivedData (every word must appear)")
    return words


def cmd_search(args: argparse.Namespace) -> int:
    words = words_of(" ".join(args.text))
    scope = parse_pairs(args.scope, "--scope")
    rows, unknown = lesson_rows(args, scope, lambda lam: matching(lam.experiences(status=args.status,
                                                                                  scope=scope or None), words))
    if args.json:
        dump_lessons(rows)
    elif rows:
        print_lessons(rows, args.width)
    else:
        print(f"no lesson holds {' '.join(args.text)!r}" + (" in that scope" + unknown if scope else ""))
    return 0


__all__ = ["cmd_search", "words_of"]
