"""`lamar export` and `lamar import`: move a store's events to another backend, losing none."""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

from lamar._errors import EventConflict, StoreError
from lamar.cli.outputs import check_output, is_store_file
from lamar.cli.render import dump_json, plural
from lamar.cli.session import (
    UsageError,
    is_file_location,
    open_raw,
    store_source,
)
from lamar.cli.writers_held import writers_held
from lamar.store import Store, location_refusal
from lamar.store.transfer import TransferResult, transfer


def _same(a: str, b: str) -> bool:
    if is_file_location(a) and is_file_location(b):
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()
    return a == b


def _not_empty(source: Store) -> None:
    """Refuse an empty source before the target is opened (which would create it): a copy of
    nothing would report success and leave no store, or an empty one, behind."""
    if not source.read(0):
        raise UsageError(f"{source.location} holds no events: there is nothing to copy")


def _copy(source: Store, target: Store, *, append: bool) -> TransferResult:
    existing = len(target.read(0))
    if existing and not append:
        # A PostgreSQL target is a namespace of a database, not a file the user could rename.
        fresh = ("a new file" if is_file_location(target.location)
                 else "a namespace that holds none (lamar_namespace=NAME in the URL)")
        raise UsageError(
            f"{target.location} already holds {plural(existing, 'event')}: choose {fresh}, or pass --append "
            "to add these events after them"
        )
    try:  # saves the copy's state too, under the tuning its readers take (`agents_tuning`)
        result = transfer(source, target, append=append)
    except EventConflict as exc:
        if not append:
            raise
        # --append puts one store's history after another's; it never merges two that share events, whose
        # reports would then count twice in the lessons' evidence. So the usual cause is named, and the ways out.
        raise EventConflict(
            f"{exc}; nothing was written. {target.location} already holds events of {source.location}: it was "
            "imported there before, or both stores began as one copy. --append adds a store's events after "
            "another's and never merges two that share some. If it was imported before, there is nothing to do; "
            "to start over, import into a new store (without --append); to add the lessons only one of them "
            "holds, `lamar add --from FILE` them into the other"
        ) from None
    return result


def _copied(result: TransferResult, target: str, *, json_out: bool) -> int:
    """Print what a copy did, naming the target as the user did (not a temporary name it was written at).

    Raises:
        StoreError: the source took events while the copy ran, which the copy lacks.
    """
    if json_out:
        dump_json({"copied": result.copied, "source": result.source, "target": target,
                   "target_before": result.target_before, "written_since": result.written_since})
    else:  # verified only as the whole store: a copy lacking what was written meanwhile is not that
        print(f"copied {plural(result.copied, 'event')} from {result.source} to {target}"
              f"{'' if result.written_since else ' (verified)'}")
    if result.written_since:
        # Not status 0: a script that goes on to point its agents at the copy, or to delete the source,
        # would lose these reports, and a note on stderr is read by no script.
        missed = (f"{plural(result.written_since, 'event')} written to {result.source} after the copy read it "
                  f"{'is' if result.written_since == 1 else 'are'} not in {target}")
        if result.target_before:  # --append: the target's own events would go with it, so it is not deleted
            raise StoreError(
                f"{missed}, which held {plural(result.target_before, 'event')} of its own and now also holds "
                f"{result.source} as it was when read: first stop the agents and commands that write to "
                f"{result.source}; then put back a copy of {target} from before this import and import again with "
                f"--append, or keep {result.source} for the events only it holds (deleting {target} loses its own)")
        # A PostgreSQL namespace is no file to delete: Lamar has no command that drops one.
        fresh = (f"delete {target}, or name another" if is_file_location(target) else
                 "name another namespace, lamar_namespace=NAME in the URL, or delete this one's rows as "
                 "docs/postgres.md, \"The schema\", says")
        raise StoreError(
            f"{missed}, which holds the store as it was when read: to move a store, first stop the agents and "
            f"commands that write to it, then copy it again into an empty store ({fresh})")
    from lamar.last_sleep import carry_sleep

    carry_sleep(result.source, target)  # `lamar stats` on the copy says when sleep last ran, as on the source
    return 0


def _copy_into(source: Store, location: str, doing: str, *, append: bool, json_out: bool) -> int:
    """Copy `source` into the store at `location`, opened (or created) in place; what a failure
    made is undone and named as `_undone_on_failure` does, with `doing` ("export to", "import into")."""
    with _undone_on_failure(location, doing):
        target = open_raw(location, create=True)
        try:
            result = _copy(source, target, append=append)
        finally:
            target.close()
    return _copied(result, result.target, json_out=json_out)


@contextlib.contextmanager
def _undone_on_failure(location: str, doing: str, named: Path | None = None) -> Iterator[None]:
    """A copy into a file store that does not exist yet and fails takes away all it made: the
    store, the files beside it (`-wal`, `-shm`, `.lock`, ...) and the folders made for it; a
    file that was there before is never removed. A full disk or a file size limit is named, in a
    message that starts with `doing` ("export to", "import into") and names `named` (else `location`)."""
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
        raise StoreError(f"cannot {doing} {named or path}: {cause} ({exc}); nothing was left behind: {fix}, then run "
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
    location, hooks = store_source(args)
    if _same(location, args.out):
        raise UsageError(f"--out {args.out} is the store itself: name a different file")
    new = None
    if is_file_location(args.out):
        refusal = args.out and location_refusal(args.out)  # before --force advice, which cannot help there
        if refusal:
            raise StoreError(refusal)
        check_output(args.out, ours=is_store_file, what="the exported store", force=args.force)
        path = Path(args.out).expanduser()
        # No file there, or one only --force lets through: the store is made whole beside it.
        # A store there (one holding no events, or --append) takes the events in place.
        if not path.exists() or path.is_file() and not is_store_file(path):
            new = path
    source = open_raw(location, create=False, hooks=hooks)
    try:
        _not_empty(source)
        if new is not None:
            return _copied(_copy_aside(source, new, replace=new.exists(), append=args.append, command="export"),
                           str(new), json_out=args.json)
        return _copy_into(source, args.out, "export to", append=args.append, json_out=args.json)
    finally:
        source.close()


def _copy_aside(source: Store, path: Path, *, replace: bool, append: bool, command: str) -> TransferResult:
    """Copy `source` into a new store in a private folder beside `path`, then move it to `path`
    (a link's target) once whole and verified: killed at any moment, the copy leaves `path`
    as it was, and at most that folder (`.NAME.HEX.exporting`, `.importing`) beside it. A
    failure is undone and named as `_undone_on_failure` does; `command` is "export" or "import"."""
    at = Path(os.path.realpath(path))  # written through a link, as every output is (lamar/atomic.py)
    for log in (f"{at.name}-wal", f"{at.name}-journal"):
        if os.path.lexists(at.with_name(log)):  # a database's log outlives it when the file alone is moved away
            raise StoreError(f"{at.with_name(log)} lies beside {path}, left by a SQLite database that was there; "
                             "SQLite would replay it into the new store: move it back beside its database (or "
                             "delete it), then run again")
    # A name no one can guess, made new and private: the store, its -wal and the JSON store's
    # side files are made where no one else can plant a link or read them before they are whole.
    name = f".{at.name}.{secrets.token_hex(8)}.{command}ing"
    aside = at.with_name(name if len(os.fsencode(name)) <= 255 else f".lamar.{secrets.token_hex(8)}.{command}ing")
    doing = "export to" if command == "export" else "import into"
    with _undone_on_failure(str(aside / at.name), doing, named=path):
        try:
            at.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {path}: {exc.strerror or exc}; name a file in a folder"
                             ) from exc
        try:
            aside.mkdir(0o700)
        except OSError as exc:  # named for the user's file, not for a folder they never asked for
            raise StoreError(f"cannot {doing} {path}: cannot write in {at.parent} ({exc.strerror or exc}), where "
                             "the store is made before it is moved in: name a file in a folder you can write to"
                             ) from exc
        try:
            target = open_raw(str(aside / at.name), create=True)
        except StoreError as exc:  # named for the user's file, as a store opened in place is
            raise StoreError(str(exc).replace(str(aside / at.name), str(path))) from exc
        try:
            result = _copy(source, target, append=append)
        finally:
            target.close()  # SQLite folds its -wal into the file and removes it, with the -shm
        _move_in(aside / at.name, at, replace=replace, command=command, suffix=path.suffix.lower())
    return result


def _move_in(tmp: Path, path: Path, *, replace: bool, command: str, suffix: str) -> None:
    """Move the store written at `tmp` to `path` whole, with the JSON store's caches beside it,
    and remove the folder it was written in. `suffix` names the backend of the store's writers."""
    if tmp.with_name(tmp.name + "-wal").exists():  # never moved without it: its transactions would be lost
        raise StoreError(f"the copy at {tmp} kept a -wal file its close did not fold in; {path} was left as it was: "
                         "run the command again")
    with contextlib.suppress(FileNotFoundError):
        if replace:
            os.chmod(tmp, path.stat().st_mode & 0o777)  # the user's file keeps its permissions
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)  # the copy on the disk before the rename makes it the file
    finally:
        os.close(fd)
    moved = False
    if replace:
        # Looked at and replaced under the lock a writer of a store there takes: its first write into the file
        # comes before the look (its store is seen) or after the rename (into the copy).
        with writers_held(path, suffix) as head:
            if _replaceable(path, head):
                os.replace(tmp, path)  # atomic: the user's file, or the whole store, never half of either
                moved = True
    if not moved:
        _create(tmp, path, command)
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)  # the rename itself on the disk
        finally:
            os.close(folder)
    for cache in (".index", ".state"):  # valid for the moved file: they check its content, not its name
        with contextlib.suppress(OSError):
            os.replace(tmp.with_name(tmp.name + cache), path.with_name(path.name + cache))
    for left in tmp.parent.iterdir():  # the lock file, a -shm: nothing of the store's
        with contextlib.suppress(OSError):
            left.unlink()
    with contextlib.suppress(OSError):
        tmp.parent.rmdir()


def _replaceable(path: Path, head: bytes | None) -> bool:
    """Whether the file --force lets the copy replace is still there and still no store, by its first bytes `head`
    (None: no file) read under its writers' lock: it was checked before the copy, and while the copy ran a store
    may have been made there (another export's moved in, an agent's first write into it), which is never
    replaced. False when it is gone: the copy is then made new, as for no file."""
    from lamar.store.files import head_kind

    if head is None:
        return False
    if head_kind(head) is not None:
        raise UsageError(f"{path} became a Lamar store while the copy ran (another export's, or an agent's first "
                         "write); it was left as it is: name another file, or export into it with --append")
    return True


def _create(tmp: Path, path: Path, command: str) -> None:
    """Rename `tmp` to `path`, unless a file was made at `path` meanwhile (another copy to the
    same new name, an agent's first write): a rename would replace it, and a copy never replaces a store."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        # An import names the store it is for: made by an agent meanwhile, it takes the events in place.
        fix = ("name another file" if command == "export"
               else "run the import again (with --append if it holds events now)")
        raise UsageError(f"{path} was made by another process while the copy ran; it was left as it is: {fix}"
                         ) from None
    except OSError:  # a file system without hard links: the check before the copy stands
        os.replace(tmp, path)
        return
    tmp.unlink()


def cmd_import(args: argparse.Namespace) -> int:
    if not args.file.strip():  # `lamar import "$UNSET"`: the empty path would name the current folder
        raise UsageError("FILE is empty: name the store to import from (.json, .db or postgresql://)")
    location, hooks = store_source(args)
    if _same(location, args.file):
        raise UsageError(f"{args.file} is the store itself: name the file to import from")
    if is_file_location(args.file) and not Path(args.file).expanduser().exists():
        raise UsageError(f"nothing to import at {args.file}: name an existing .json or .db store")
    source = open_raw(args.file, create=False)
    try:
        _not_empty(source)
        new = Path(location).expanduser()
        if is_file_location(location) and not new.exists():
            # A new store: made whole beside its name, as an export's is.
            refusal = location_refusal(location)
            if refusal:
                raise StoreError(refusal)
            # The hooks' store holds their prompts' contexts: made, with its folder, as they make it, yours only.
            previous = os.umask(0o077) if hooks else None
            try:
                result = _copy_aside(source, new, replace=False, append=args.append, command="import")
            finally:
                if previous is not None:
                    os.umask(previous)
            return _copied(result, str(new), json_out=args.json)
        return _copy_into(source, location, "import into", append=args.append, json_out=args.json)
    finally:
        source.close()
