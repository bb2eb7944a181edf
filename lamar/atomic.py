"""`replace_file`: a file replaced whole or not at all (temporary file, fsync, rename), `write_output`, the same
with a failure that names what was written and says what to do, and `own_folder`: Lamar's folders are private."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path


def lamar_home() -> Path:
    """~/.lamar: the folder Lamar writes reports, logs and the default store into, for this user alone."""
    return Path.home() / ".lamar"


def own_folder(folder: Path) -> None:
    """Make `folder` (parents too) readable by this user alone: what Lamar keeps there quotes lessons and prompts,
    and a file made 0600 in it is still listed, and a 0644 one read, by anyone the folder lets in. In ~/.lamar, one
    that exists open to others is closed to them, and each folder up to ~/.lamar, saying so (once: it stays so)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        home = os.path.realpath(lamar_home())
    except (OSError, RuntimeError):  # no home folder: no ~/.lamar to close
        return
    for each in (folder, *folder.parents):
        real = os.path.realpath(each)
        if not (real + os.sep).startswith(home + os.sep):
            # Outside ~/.lamar (a file store's folder, where its sleep report goes beside it): the user's,
            # shared with a team or served, perhaps; only a folder made here is made private.
            break
        _close_to_others(Path(real))
        if real == home:
            break


def _close_to_others(folder: Path) -> None:
    """chmod go-rwx `folder` when this user owns it and others may enter it; a folder that cannot be
    changed (another's, a read-only mount) is left as it is: its files are made private all the same."""
    uid = getattr(os, "getuid", None)
    if uid is None:  # Windows: a folder's access is its ACL, which a mode neither shows nor sets
        return
    try:
        found = os.stat(folder)
        mode = found.st_mode
        if not mode & 0o077 or found.st_uid != uid():
            return
        os.chmod(folder, stat.S_IMODE(mode) & 0o700)
    except OSError:
        return
    import logging

    logging.getLogger("lamar").warning(
        "lamar: made %s readable by you alone (chmod %03o, it was %03o): the lessons, prompts and reports Lamar "
        "keeps there are yours", folder, stat.S_IMODE(mode) & 0o700, stat.S_IMODE(mode))


def in_lamar_home(path: Path) -> bool:
    """Whether `path` is in ~/.lamar: there every file Lamar writes is private (0600), whatever wrote it."""
    try:
        home, parent = os.path.realpath(lamar_home()), os.path.realpath(path.parent)
    except (OSError, RuntimeError):  # no home folder to be in
        return False
    return parent == home or parent.startswith(home + os.sep)


def replace_file(path: Path, data: bytes) -> None:
    """Replace the file at `path` by `data`: a crash, a full disk or a file size limit leaves the
    file that was there whole (its permissions too; in ~/.lamar, never readable by others), and no temporary copy
    beside it. A `path`
    that is a symbolic link has its target replaced, as writing to it would. A device or a pipe
    (`/dev/null`, `/dev/stdout`) is written into: it has no old content to keep whole."""
    try:
        mode_now = os.stat(path).st_mode
        special = stat.S_ISCHR(mode_now) or stat.S_ISFIFO(mode_now)
    except OSError:  # not there yet, or a dangling link: made as a regular file below
        special = False
    if special:
        # A rename over it would put a regular file where the device was, for every program after.
        with open(path, "wb") as handle:
            handle.write(data)
        return
    path = path.resolve() if path.is_symlink() else path
    # A name no one can guess, made new (O_EXCL): in a folder others may write, a link planted
    # at a temporary name would otherwise have the data written through it.
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else None
        if in_lamar_home(path):  # Lamar's own folder: private, even where an older writer left a file open
            mode = 0o600 if mode is None else mode & 0o700
        # Made with the replaced file's mode: a private file (a sleep report quoting prompts) is
        # never readable by others while its copy is written.
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode), "wb") as handle:
            handle.write(data)
            handle.flush()  # Python's buffer -> the OS
            os.fsync(handle.fileno())  # the OS -> the disk, before the rename makes it visible
        if mode is not None:
            os.chmod(tmp, mode)  # the user's file keeps its permissions
        os.replace(tmp, path)  # atomic: readers see the old file or the new one, never half
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()  # a write cut short (an error, a Ctrl+C) leaves it; once replaced it is gone


def write_output(path: Path, text: str, what: str) -> None:
    """`replace_file` with `text`, for a file the user named.

    Raises:
        OSError: with the cause's errno, `path` as its filename, and a message that names `what`
            and `path` and says what to do.
    """
    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        kept = "was left as it was" if path.exists() else "was not written"
        raise OSError(exc.errno, f"could not write {what} {path}: {exc.strerror or exc}; {path.name} {kept}: "
                      "make room or name a file elsewhere, and run again", str(path)) from exc


__all__ = ["in_lamar_home", "lamar_home", "own_folder", "replace_file", "write_output"]
