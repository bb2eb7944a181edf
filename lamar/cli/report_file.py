"""The sleep report file that `lamar review`, `lamar apply` and the UI share: read, checked, saved under a lock."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lamar._errors import StoreError, echoed
from lamar.cli.outputs import write_output
from lamar.cli.render import jsonable
from lamar.cli.session import UsageError
from lamar.program import program_name
from lamar.storable import storable_problem

REPORT_FORMAT = "lamar-sleep-report"


def load_report(path: str, *, redo: bool = False) -> dict[str, Any]:
    """The report file as a dict; UsageError when it is missing or not a sleep report. With
    `redo` (review --again, which asks every proposal afresh) a mangled decision list is emptied."""
    if not path.strip():  # Path("") is the current folder
        raise UsageError("REPORT.json is empty: name the file `lamar sleep --out REPORT.json` saved")
    try:
        text = Path(path).read_text(encoding="utf-8")
        if not text.strip():  # a `sleep --out - > FILE` that failed leaves one: no hand edit to undo
            raise UsageError(f"the sleep report {path} is an empty file: make one with "
                             f"`{program_name()} sleep --out {path}`")
        data = parse_report(text)
    except FileNotFoundError:
        raise UsageError(f"no report file {path}: make one with `{program_name()} sleep --out {path}`") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder: name the report file in it that `lamar sleep --out` saved") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read the sleep report {path}: it is not UTF-8 text, so not a report: name the "
                         "file `lamar sleep --out` saved") from None
    except RepeatedKey as exc:
        raise UsageError(f"cannot read the sleep report {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"cannot read the sleep report {path}: it is not valid JSON ({exc}): undo the edit that "
                         f"broke it, or make a new one with `{program_name()} sleep --out {path}`") from None
    except ValueError:  # a number of more digits than Python reads: no number sleep writes
        raise UsageError(f"cannot read the sleep report {path}: it holds a number of more than "
                         f"{sys.get_int_max_str_digits()} digits: undo the edit that wrote it, or make a new one "
                         f"with `{program_name()} sleep --out {path}`") from None
    except OSError as exc:
        raise UsageError(f"cannot read the sleep report {path}: {exc.strerror or exc}; name the file "
                         "`lamar sleep --out` saved") from None
    except RecursionError:
        raise UsageError(f"cannot read the sleep report {path}: its JSON is nested too deep") from None
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise UsageError(f"{path} is not a sleep report (made by `{program_name()} sleep --out {path}`)")
    problem = storable_problem(data)
    if problem:
        raise UsageError(f"the sleep report {path} {problem}; make a new one with "
                         f"`{program_name()} sleep --out {path}`")
    problem = decisions_problem(data, path)
    if problem and redo:
        for name in ("approved", "rejected"):
            if decisions_problem({name: data.get(name, [])}, path):
                data[name] = []
    elif problem:
        raise UsageError(problem)
    return data


class RepeatedKey(ValueError):
    """A key written twice in one object of a report; the message says which and what to do."""


def parse_report(text: str) -> Any:
    """The JSON of a sleep report file's text. A byte-order mark, which some editors write at the start of
    UTF-8, is passed over; a key written twice in one object is RepeatedKey.

    >>> parse_report('\\ufeff{"format": "lamar-sleep-report"}')
    {'format': 'lamar-sleep-report'}
    >>> try: parse_report('{"approved": [], "approved": ["merge_1"]}')
    ... except RepeatedKey as exc: print(exc)
    the key 'approved' is written twice in one object; JSON keeps only the last: delete the one not meant
    """
    return json.loads(text.removeprefix("\ufeff"), object_pairs_hook=_once)


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys: an "approved" list added by hand above the one
    # review wrote would be ignored, and which of the two the person meant is not ours to guess.
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            ids = [value for name, value in pairs if name == "id" and isinstance(value, str)]
            of = f" (the one whose id is {' or '.join(map(echoed, ids))})" if ids else ""
            raise RepeatedKey(f"the key {echoed(key)} is written twice in one object{of}; JSON keeps only the "
                              "last: delete the one not meant")
        seen.add(key)
    return dict(pairs)


def decisions_problem(data: Mapping[str, Any], path: str) -> str:
    """Why the report's "approved" or "rejected" list (edited by hand) is unusable, or ""."""
    for name in ("approved", "rejected"):
        decided = data.get(name, [])
        if not isinstance(decided, list) or not all(isinstance(i, str) for i in decided):
            return (f"{path}: {name!r} must be a list of proposal ids; fix it or run "
                    f"`{program_name()} review {path} --again`")
    both = [pid for pid in data.get("approved", []) if pid in data.get("rejected", [])]
    if both:  # an id added to one list by hand and left in the other: which was meant is not apply's guess
        return (f"{path}: proposal {both[0]} is both approved and rejected; take it out of one list, "
                f"or run `{program_name()} review {path} --again`")
    return ""


def save_report(path: str, data: Mapping[str, Any]) -> None:
    """Write the report atomically (`write_output`): a crash or a full disk leaves the old one whole."""
    text = json.dumps(jsonable(data), indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    write_output(Path(path), text, "the sleep report")


@contextlib.contextmanager
def report_held(path: str, timeout: float = 30.0) -> Iterator[None]:
    """The report file to this process alone while its decisions are read and written back (a review's
    answers, a decision in `lamar ui`, a new report of sleep): two writers that each read the file, then
    save it, would otherwise drop what the other saved in between. The lock is a file beside the report.

    Raises:
        StoreError: another process kept the lock past `timeout` seconds, or it cannot be made.
    """
    from lamar.store.file_lock import NOFOLLOW, exclusive, fcntl

    if fcntl is None:  # no POSIX locks (Windows): saved unlocked, so one reviewer at a time (docs/limitations.md)
        yield
        return
    at = Path(path)
    lock = at.with_name(at.name + ".lock")
    try:
        fd = exclusive(lock, timeout, flags=NOFOLLOW, mode=0o600)
    except OSError as exc:
        raise StoreError(f"cannot lock the sleep report {path} (via {lock}): {exc.strerror or exc}; nothing was "
                         f"saved: name a report in a folder you can write, or remove {lock} if it is a link") from exc
    if fd is None:
        raise StoreError(f"another `lamar review`, `lamar sleep` or `lamar ui` held {lock} past {timeout:g} s while "
                         f"saving {path}; nothing was saved: run this again once it is done")
    try:
        yield
    finally:
        os.close(fd)  # lets go of the lock
