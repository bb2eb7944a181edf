"""`DESTRUCTION`: the pattern of a command that destroys what no undo brings back (a home or system
directory, a disk, a database, a shared branch, a cluster namespace), read by `action_reason`."""

from __future__ import annotations

import re

# A home or system directory, the whole of it or one level down (`/var/lib/<service>` too, where
# services keep their data); deeper paths (`/var/lib/apt/lists/*`, `/usr/local/go`) are ordinary
# clean-ups, and so are a project's own folders (`build/`, `node_modules`) and `/tmp`.
_SYSTEM = r"(?:bin|boot|dev|etc|home|lib|lib64|proc|root|sbin|sys|usr|var|users)"
_TARGET = (
    rf"[\"']?(?:/|/\*|~/?\*?|\$\{{?home\}}?/?\*?|/{_SYSTEM}(?:/[\w.-]+)?/?\*?|/var/lib/[\w.-]+/?\*?"
    r"|[a-z]:\\?\*?)[\"']?(?=$|[\s;|&)`])"
)
_RECURSIVE = r"(?=(?:-[\w-]+\s+)*?(?:-[a-z]*r|--recursive\b))(?:-[\w-]+\s+)+"

DESTRUCTION = re.compile(
    rf"\brm\s+{_RECURSIVE}(?:--\s+)?{_TARGET}"
    r"|\brm\s+[^\n;|&]{0,100}--no-preserve-root"
    rf"|\b(?:chmod|chown|chgrp)\s+{_RECURSIVE}\S+\s+{_TARGET}"
    rf"|\bfind\s+{_TARGET}[^\n;|&]{{0,200}}\s-delete\b"
    r"|\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*\S*/dev/"
    r"|\b(?:dd|cat|pv)\b[^\n;|&]{0,200}(?:\bof=|>\s*)/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|mapper/)"
    r"|\b(?:wipefs|shred|blkdiscard)\b[^\n;|&]{0,100}/dev/"
    r"|\bformat\s+[a-z]:(?=$|[\s;/])|\b(?:rd|rmdir|del)\s+/s\s+/q\s+[a-z]:\\?(?=$|[\s;])"
    # A whole database or schema always; a table unless `if exists`, the set-up line of a migration
    # or a test script, which re-creates what it drops.
    r"|\bdrop\s+(?:database|schema)\b|\bdropdb\s+(?!--help)\S"
    r"|\bdrop\s+table\s+(?!if\s+exists\b)[\w.\"`\[]"
    r"|\btruncate\s+table\s+[\w.\"`\[]|\btruncate\s+(?:only\s+)?[\w.\"]+(?:\s*,\s*[\w.\"]+)*\s*(?:;|\bcascade\b)"
    r"|\bflushall\b"
    r"|\bgit\s+push\b[^\n;|&]{0,200}?(?:--force(?!-with-lease)\b|\s-f\b)[^\n;|&]{0,200}?\b(?:main|master)\b"
    r"|\bgit\s+push\b[^\n;|&]{0,200}?\b(?:main|master)\b[^\n;|&]{0,200}?(?:--force(?!-with-lease)\b|\s-f\b)"
    r"|\bgit\s+push\b[^\n;|&]{0,200}?\s\+(?:main|master)\b"
    r"|\bgit\s+reset\s+--hard\b[^\n]{0,200}?\bgit\s+clean\s+-[a-z]*(?:x[a-z]*f|f[a-z]*x)"
    r"|\bkubectl\s+delete\s+(?:-\S+\s+)*(?:namespaces?|ns)\b|\bkubectl\s+delete\b[^\n;|&]{0,100}--all-namespaces\b"
    r"|\b(?:terraform|tofu|pulumi|cdk)\s+destroy\b"
    r"|\baws\s+s3\s+rb\b|\b(?:gsutil|gcloud\s+storage)\s+rm\s+-r\b"
    r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
)

__all__ = ["DESTRUCTION"]
