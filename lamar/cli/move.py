"""`lamar export` and `lamar import`: move a store's events to another backend, losing none."""

from __future__ import annotations

import argparse
from pathlib import Path

from lamar.cli.outputs import check_output, is_store_file
from lamar.cli.render import dump_json
from lamar.cli.session import UsageError, is_file_location, open_raw, store_location
from lamar.store import Store
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
            f"{target.location} already holds {existing} events: choose a new file, or pass --append "
            "to add these events after them"
        )
    result = transfer(source, target, append=append)
    if json_out:
        dump_json({"copied": result.copied, "source": result.source, "target": result.target,
                   "target_before": result.target_before})
    else:
        print(f"copied {result.copied} events from {result.source} to {result.target} (verified)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    location = store_location(args)
    if _same(location, args.out):
        raise UsageError(f"--out {args.out} is the store itself: name a different file")
    if is_file_location(args.out):
        check_output(args.out, ours=is_store_file, what="the exported store", force=args.force)
    source = open_raw(location, create=False)
    try:
        _not_empty(source)
        target = open_raw(args.out, create=True)
        try:
            return _copy(source, target, append=args.append, json_out=args.json)
        finally:
            target.close()
    finally:
        source.close()


def cmd_import(args: argparse.Namespace) -> int:
    location = store_location(args)
    if _same(location, args.file):
        raise UsageError(f"{args.file} is the store itself: name the file to import from")
    if is_file_location(args.file) and not Path(args.file).expanduser().exists():
        raise UsageError(f"nothing to import at {args.file}: name an existing .json or .db store")
    source = open_raw(args.file, create=False)
    try:
        _not_empty(source)
        target = open_raw(location, create=True)
        try:
            return _copy(source, target, append=args.append, json_out=args.json)
        finally:
            target.close()
    finally:
        source.close()
