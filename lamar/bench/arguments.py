"""What the research command lines share: a run that would time nothing, or fail after it finished,
is an argument error before it starts; a Ctrl+C or a closed pipe ends it in one line, not a traceback."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lamar.atomic import write_output


def counts(parser: argparse.ArgumentParser, flag: str, text: str, *, empty: bool = False,
           most: int | None = None) -> list[int]:
    """The comma-separated whole numbers of `flag`, each at least 1, at most `most` and given once
    (none at all only if `empty`), or an argument error."""
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        numbers = [0]
    if (not numbers and not empty) or (numbers and min(numbers) < 1):
        parser.error(f"{flag} takes whole numbers of at least 1, comma separated; got {text!r}")
    repeated = [number for i, number in enumerate(numbers) if number in numbers[:i]]
    if repeated:  # `--sizes 10,10` timed the same configuration twice, as two rows
        parser.error(f"{flag} gives {repeated[0]} twice; give each value once")
    if most is not None and numbers:
        at_most(parser, flag, max(numbers), most)
    return numbers


def names(parser: argparse.ArgumentParser, flag: str, text: str, known: tuple[str, ...]) -> list[str]:
    """The comma-separated names of `flag`, each one of `known` and given once, or an argument error."""
    given = [name.strip() for name in text.split(",") if name.strip()]
    if not given or set(given) - set(known):
        parser.error(f"{flag} takes names from {','.join(known)}, comma separated; got {text!r}")
    if len(set(given)) != len(given):
        parser.error(f"{flag} gives {next(n for i, n in enumerate(given) if n in given[:i])} twice; give each "
                     "name once")
    return given


def at_most(parser: argparse.ArgumentParser, flag: str, value: int, most: int) -> None:
    """An argument error when a count is above `most`, where a run would go on for days or fill the
    memory before its first row instead of failing."""
    if value > most:
        parser.error(f"{flag} is from 1 to {most:_}; got {value:_} (more would run for days or fill the memory "
                     "before a row is printed): give a smaller count")


def processes(parser: argparse.ArgumentParser, flag: str, value: int | None) -> None:
    """An argument error when `flag` asks for more worker processes than 4 per CPU: the jobs are
    CPU-bound, so more only share the same CPUs, and each holds an interpreter's memory (a huge
    count forked until the machine ran out)."""
    most = 4 * (os.cpu_count() or 1)
    if value is not None and value > most:
        parser.error(f"{flag} is from 1 to {most} on this machine (4 per CPU: the runs are CPU-bound, so more "
                     f"processes only share the same CPUs); got {value:_}")


def positive(parser: argparse.ArgumentParser, **values: float) -> None:
    """An argument error naming the first of `values` (flag name -> value) that is not above 0."""
    for name, value in values.items():
        if not (math.isfinite(value) and value > 0):
            parser.error(f"--{name.replace('_', '-')} is a finite number above 0; got {value!r}")


def writable(parser: argparse.ArgumentParser, flag: str, path: str | None) -> None:
    """An argument error now, not after the run, when the file `flag` names cannot be written."""
    if path is not None and not path.strip():  # `--json "$OUT"` with OUT unset wrote no file, silently
        parser.error(f"{flag} names no file (an empty name); name the file to write, or leave {flag} out")
    if path and (os.path.isdir(path) or not os.path.isdir(os.path.dirname(os.path.abspath(path)))):
        parser.error(f"{flag} {path}: name a file in a folder that exists (it is written after the run)")
    if path:
        # Opening is the only test that a read-only folder or file fails (permission bits do not
        # bind root); appending leaves an existing file as it was, and a file made here is removed.
        existed = os.path.exists(path)
        try:
            with open(path, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            parser.error(f"{flag} {path}: cannot write it ({exc.strerror or exc}); name a file in a folder you can "
                         "write (it is written after the run)")
        if not existed:
            os.remove(path)


def quiet_worker() -> None:
    """A worker process's start: a Ctrl+C reaches the whole process group, and the parent alone
    answers it (and ends the workers), so each worker does not print a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def command(prog: str, main: Callable[[], int | None]) -> int:
    """Run a research command's `main` and return its exit status: a Ctrl+C prints one line and
    returns 130 (128 + SIGINT); a reader that went away (`| head -3`) ends it quietly with 0."""
    try:
        status = main()
        sys.stdout.flush()  # a closed pipe shows here, not in Python's own flush at exit
        return status or 0
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{prog}: error: interrupted\n")
        return 130
    except BrokenPipeError:
        try:  # Python flushes stdout again at exit and would complain about the same pipe
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is not a real file (captured): nothing to silence
            pass
        return 0


def save_rows(prog: str, path: str, rows: list[dict[str, Any]]) -> int:
    """Write `rows` to the --json file whole or not at all (`lamar.atomic.write_output`) and return
    the exit status: 0, or 1 after one line saying why when the file cannot take them (a full disk).
    Caught here, not around the whole run, so an OSError of the run's own keeps its traceback."""
    try:
        write_output(Path(path), json.dumps(rows, indent=1), "the rows to")
    except OSError as exc:
        sys.stderr.write(f"{prog}: error: {exc.strerror}\n")
        return 1
    return 0
