"""`is_placeholder`: values that stand for a secret without being one (`<your key>`, `${TOKEN}`, `xxxx`)."""

from __future__ import annotations

import re

PLACEHOLDER = "[REDACTED:{kind}]"
REDACTED = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

# Documented in docs/guarantees.md, "No secret leaves through memory".
_PLACEHOLDER_WORDS = {
    "", "none", "null", "nil", "true", "false", "undefined", "redacted", "placeholder", "todo",
    "tbd", "replaceme", "replace_me", "replace-me", "example", "str", "string", "bytes", "int",
    "bool", "any", "secretstr", "optional[str]", "str|none", "required", "optional", "empty",
}
_TEMPLATE = re.compile(
    r"""^(?:\$\{?[A-Za-z_{(]|\{\{|\{%|<[^<>]*(?:>|$)|%[A-Za-z_]+%$|\#\{"""
    r"""|[A-Za-z_][\w.]*[(\[]|process\.env\b)"""
)
_FILLER = re.compile(r"^([x*.•_-])\1*$", re.IGNORECASE)
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def is_placeholder(value: str) -> bool:
    """True for values that stand for a secret without being one.

    Kept: template references (`${TOKEN}`, `{{ secrets.X }}`, `<your key>`, `%PASS%`, `os.getenv(...)`),
    fillers (`xxxx`, `****`, `...`), words such as `none`/`example`/`placeholder`, type names
    (`str`), values starting with "your" (`your-api-key-here`), dotted names (`settings.TOKEN`),
    paths and URLs (a URL's own credentials are caught by the URL rules). Weak real passwords
    such as `changeme` or `password` are NOT placeholders: they are redacted.

    >>> is_placeholder("<your key>"), is_placeholder("${API_KEY}"), is_placeholder("changeme")
    (True, True, False)
    """
    v = value.strip().strip("\"'").strip()
    low = v.lower().replace(" ", "")
    if low in _PLACEHOLDER_WORDS or REDACTED.fullmatch(v) or _FILLER.match(v):
        return True
    if low.startswith("your") or _TEMPLATE.match(v) or _DOTTED_NAME.match(v):
        return True
    return v.startswith(("/", "./", "../", "~/")) or "://" in v


__all__ = ["PLACEHOLDER", "REDACTED", "is_placeholder"]
