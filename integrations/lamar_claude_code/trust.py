"""The trust step for a repository's `.claude/lamar.toml`, as direnv has for `.envrc` (docs/claude-code.md)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

TRUST_FILE = "~/.lamar/claude-code-trusted.json"


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _listing(trust_file: Path) -> dict[str, str]:
    try:
        data = json.loads(trust_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def is_trusted(path: Path, trust_file: str | os.PathLike[str] = TRUST_FILE) -> bool:
    """Whether this exact content of `path` was trusted.

    A cloned repository's config runs its regular expressions on every prompt, so it is read only
    once its owner ran `lamar claude-code trust` on that exact content; any change to the file
    needs trusting again. The list is `~/.lamar/claude-code-trusted.json` (path -> SHA-256).
    """
    known = _listing(Path(trust_file).expanduser()).get(os.path.realpath(path))
    try:
        return known is not None and known == fingerprint(path)
    except OSError:
        return False


def trust(path: Path, trust_file: str | os.PathLike[str] = TRUST_FILE, *, revoke: bool = False) -> str:
    """Trust the current content of `path` (or forget it); returns what was done."""
    from lamar_claude_code.state import write_atomically

    listing_path = Path(trust_file).expanduser()
    listing = _listing(listing_path)
    key = os.path.realpath(path)
    if revoke:
        done = f"{path}: no longer trusted" if listing.pop(key, None) else f"{path}: was not trusted"
    else:
        listing[key] = fingerprint(path)
        done = f"{path}: trusted as it is now (sha256 {listing[key][:12]}); a change to it needs trusting again"
    listing_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomically(listing_path, (json.dumps(listing, indent=2, sort_keys=True) + "\n").encode())
    return done


__all__ = ["TRUST_FILE", "fingerprint", "is_trusted", "trust"]
