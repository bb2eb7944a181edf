"""`marked_read_only`: whether a user's file (a rules file, a settings file) is marked read-only by its mode."""

from __future__ import annotations

import os
import stat


def marked_read_only(path: str | os.PathLike[str]) -> bool:
    """Whether the file's mode bits deny writing it to whoever runs this (False when it is missing).

    A write that replaces a file (a temporary file renamed over it) needs only the folder to be
    writable, and root passes every permission check, so neither the write nor `os.access` would
    notice a file its owner made read-only on purpose (chmod 444): the mode bits are read instead.
    As root, a file is marked read-only when no one may write it.

    >>> marked_read_only("a file that is not there")
    False
    """
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    user = os.geteuid() if hasattr(os, "geteuid") else -1
    if user == 0:
        return not found.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    if user == found.st_uid:
        return not found.st_mode & stat.S_IWUSR
    return not os.access(path, os.W_OK)


__all__ = ["marked_read_only"]
