"""`lamar export` and `lamar import`: move a store's events to another backend, losing none."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from lamar._errors import StoreError
from lamar.cli.outputs import check_output, is_store_file
from lamar.cli.render import dump_json, plural
from lamar.cli.session import UsageError, is_file_location, open_raw, store_location
from lamar.store import Store, location_refusal
from lamar.store.transfer import transfer


def _same(a: str, b: str) -> bool:
    if is_file_location(a) and is_file_location(b):
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()
    return a == b


def _not_empty(source: Store) -> None:
    """Refuse an empty source before the target is opened (which would create it): a copy of
    nothing would report success and leave no store, or an empty one, behind."""
    if not source.read(0):
        raise UsageError(f"{source.location} holds no events: there is nothing to copy")


def _copy(source: Store, target: Store, *, append: bool, json_out: bool) -> int:
    existing = len(target.read(0))
    if existing and not append:
        raise UsageError(
            f"{target.location} already holds {plural(existing, 'event')}: choose a new file, or pass --append "
            "to add these events after them"
        )
    result = transfer(source, target, append=append)
    if json_out:
        dump_json({"copied": result.copied, "source": result.source, "target": result.target,
                   "target_before": result.target_before})
    else:
        print(f"copied {plural(result.copied, 'event')} from {result.source} to {result.target} (verified)")
    return 0


@contextlib.contextmanager
def _undone_on_failure(location: str, doing: str) -> Iterator[None]:
    """A copy into a file store that does not exist yet and fails takes away all it made: the
    store, the files beside it (`-wal`, `-shm`, `.lock`, ...) and the folders made for it; a
    file that was there before is never removed. A full disk or a file size limit is named, in a
    message that starts with `doing` ("export to", "import into")."""
    path = Path(location).expanduser().absolute()
    if not is_file_location(location) or path.exists():
        yield  # an existing store keeps whatever it holds: its own files are its to recover
        return
    made = [folder for folder in path.parents if not folder.exists()]  # deepest first
    existing = next(folder for folder in path.parents if folder.exists())
    before = set(_beside(path))
    try:
        yield
    except BaseException as exc:
        for left in set(_beside(path)) - before:
            with contextlib.suppress(OSError):
                left.unlink()
        for folder in made:
            with contextlib.suppress(OSError):  # not empty: someone else wrote there meanwhile
                folder.rmdir()
        said = str(exc).lower()
        cause = _no_room(existing) if isinstance(exc, (StoreError, OSError)) and any(
            hint in said for hint in _NO_ROOM_SAID) else None
        if cause is None:
            raise
        fix = "free some space or name a file on another disk" if cause.startswith("its disk") else (
            "raise the limit (`ulimit -f unlimited`)")
        raise StoreError(f"cannot {doing} {path}: {cause} ({exc}); nothing was left behind: {fix}, then run "
                         "again") from exc


# How a write that found no room fails: the OS's words, and SQLite's (whose rollback of the
# transaction the failed write ended finds none to roll back).
_NO_ROOM_SAID = ("no space", "too large", "quota", "disk i/o error", "disk is full", "no transaction is active")


def _beside(path: Path) -> Iterator[Path]:
    """The store at `path` and every file a store makes beside it (its name with a suffix, or a
    hidden temporary copy of it)."""
    with contextlib.suppress(OSError):
        for entry in path.parent.iterdir():
            if entry.name.startswith((path.name, f".{path.name}.")) and not entry.is_dir():
                yield entry


def _no_room(folder: Path) -> str | None:
    """Why a write under `folder` fails, when the disk is full or files are capped; else None."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY:
            return f"this process may write files of at most {limit} bytes (a file size limit, `ulimit -f`)"
    except (ImportError, OSError, ValueError):  # no such limit on this system
        pass
    try:
        if shutil.disk_usage(folder).free < 1 << 20:
            return f"its disk is full (under 1 MiB free in {folder})"
    except OSError:
        pass
    return None


def cmd_export(args: argparse.Namespace) -> int:
    if args.out == "-":  # `lamar html --out -` prints its page; a store is a file or a database
        raise UsageError("--out -: export writes a store, which stdout cannot hold: name a .json or .db file, "
                         "or a postgresql:// URL (./- for a file called -)")
    location = store_location(args)
    if _same(location, args.out):
        raise UsageError(f"--out {args.out} is the store itself: name a different file")
    replaced = None
    if is_file_location(args.out):
        refusal = args.out and location_refusal(args.out)  # before --force advice, which cannot help there
        if refusal:
            raise StoreError(refusal)
        check_output(args.out, ours=is_store_file, what="the exported store", force=args.force)
        path = Path(args.out).expanduser()
        if path.is_file() and not is_store_file(path):  # passed only with --force: the user asked to replace it
            replaced = path
    source = open_raw(location, create=False)
    try:
        _not_empty(source)
        with _replacing(replaced), _undone_on_failure(args.out, "export to"):
            target = open_raw(args.out, create=True)
            try:
                return _copy(source, target, append=args.append, json_out=args.json)
            finally:
                target.close()
    finally:
        source.close()


@contextlib.contextmanager
def _replacing(path: Path | None) -> Iterator[None]:
    """The file at `path` (one --force replaces) steps aside for the new store, and is removed
    once the copy is done; a copy that fails puts it back as it was, its name and permissions."""
    if path is None:
        yield
        return
    aside = path.with_name(f".{path.name}.{os.getpid()}.replaced")
    os.replace(path, aside)  # a rename: the file's bytes are never rewritten, so never lost part-way
    try:
        yield
    except BaseException:
        os.replace(aside, path)  # after _undone_on_failure has taken away what the copy made
        raise
    with contextlib.suppress(OSError):
        aside.unlink()


def cmd_import(args: argparse.Namespace) -> int:
    if not args.file.strip():  # `lamar import "$UNSET"`: the empty path would name the current folder
        raise UsageError("FILE is empty: name the store to import from (.json, .db or postgresql://)")
    location = store_location(args)
    if _same(location, args.file):
        raise UsageError(f"{args.file} is the store itself: name the file to import from")
    if is_file_location(args.file) and not Path(args.file).expanduser().exists():
        raise UsageError(f"nothing to import at {args.file}: name an existing .json or .db store")
    source = open_raw(args.file, create=False)
    try:
        _not_empty(source)
        with _undone_on_failure(location, "import into"):
            target = open_raw(location, create=True)
            try:
                return _copy(source, target, append=args.append, json_out=args.json)
            finally:
                target.close()
    finally:
        source.close()
