"""Argument checks the benchmarks' command lines share: a run that would time nothing, or fail
after it finished, is an argument error before it starts."""

from __future__ import annotations

import argparse
import math
import os


def counts(parser: argparse.ArgumentParser, flag: str, text: str, *, empty: bool = False) -> list[int]:
    """The comma-separated whole numbers of `flag`, each at least 1 (none at all only if `empty`),
    or an argument error."""
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        numbers = [0]
    if (not numbers and not empty) or (numbers and min(numbers) < 1):
        parser.error(f"{flag} takes whole numbers of at least 1, comma separated; got {text!r}")
    return numbers


def names(parser: argparse.ArgumentParser, flag: str, text: str, known: tuple[str, ...]) -> list[str]:
    """The comma-separated names of `flag`, each one of `known`, or an argument error."""
    given = [name.strip() for name in text.split(",") if name.strip()]
    if not given or set(given) - set(known):
        parser.error(f"{flag} takes names from {','.join(known)}, comma separated; got {text!r}")
    return given


def positive(parser: argparse.ArgumentParser, **values: float) -> None:
    """An argument error naming the first of `values` (flag name -> value) that is not above 0."""
    for name, value in values.items():
        if not (math.isfinite(value) and value > 0):
            parser.error(f"--{name.replace('_', '-')} is a finite number above 0; got {value!r}")


def writable(parser: argparse.ArgumentParser, flag: str, path: str | None) -> None:
    """An argument error now, not after the run, when the file `flag` names cannot be written."""
    if path and (os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):
        parser.error(f"{flag} {path}: name a file in a folder that exists (it is written after the run)")
