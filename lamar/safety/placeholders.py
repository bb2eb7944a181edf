"""`is_placeholder`: values that stand for a secret without being one (`<your key>`, `${TOKEN}`, `xxxx`)."""

from __future__ import annotations

import re

from lamar.safety.entropy import mixes_like_a_key

PLACEHOLDER = "[REDACTED:{kind}]"
REDACTED = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

# Documented in docs/guarantees.md, "No secret leaves through memory".
_PLACEHOLDER_WORDS = {
    "", "none", "null", "nil", "true", "false", "undefined", "redacted", "placeholder", "todo",
    "tbd", "replaceme", "replace_me", "replace-me", "example", "str", "string", "bytes", "int",
    "bool", "any", "secretstr", "optional[str]", "str|none", "required", "optional", "empty",
    # answers and permissions: MySQL's "(using password: YES)", a workflow's "id-token: write"
    "yes", "no", "read", "write",
}
_TEMPLATE = re.compile(
    r"""^(?:\$\{?[A-Za-z_{(]|\{\{|\{%|<[^<>]*(?:>|$)|%[A-Za-z_]+%$|\#\{"""
    r"""|[A-Za-z_][\w.:]*[(\[]|process\.env\b)"""
)
# "dummy" or "fake" as a word of its own (dummy-token, fakeKey, FAKE_KEY), not the start of a longer one
# (Fakeroo2024!, dummy2024), and followed by words alone: a weak real password may be such a word and
# digits or signs (Dummy!2024, fake-8sT!kq2Lm).
_MOCK = re.compile(r"(?:(?:[dD]ummy|[fF]ake)(?![a-z0-9])|(?:DUMMY|FAKE)(?![A-Za-z0-9]))[A-Za-z_.-]*\Z")
_FILLER = re.compile(r"^([x*.•…_-])\1*$", re.IGNORECASE)
# A provider's prefix and a filler, as docs and READMEs write a key: sk_test_..., sk-…, ghp_xxxx, glpat-****.
# The prefix ends in "_" or "-", so a real value trailing off ("hunter2...") is not one.
_PREFIX_FILLER = re.compile(
    r"^[A-Za-z][A-Za-z0-9]{0,11}(?:[_-][A-Za-z0-9]{1,12}){0,2}[_-](?:\.{3,}|…+|([xX*•])\1{2,})$"
)
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# Shortest part of a dotted value that can read as a key rather than a name: a name's parts are
# words (settings.SECRET_KEY, api.example.com), a token's (app.K8sXq9...) are drawn at random.
_KEY_PART = 16


def _dotted_name(value: str) -> bool:
    if not _DOTTED_NAME.match(value):
        return False
    return not any(len(part) >= _KEY_PART and mixes_like_a_key(part) for part in value.split("."))


def prefix_then_filler(value: str) -> bool:
    """True for a key's prefix followed by a filler (`sk_test_...`, `ghp_xxxx`): how docs show a key.

    >>> prefix_then_filler("sk_test_..."), prefix_then_filler("ghp_" + "x" * 36), prefix_then_filler("hunter2...")
    (True, True, False)
    """
    return _PREFIX_FILLER.match(value) is not None


def is_placeholder(value: str) -> bool:
    """True for values that stand for a secret without being one.

    Kept: template references (`${TOKEN}`, `{{ secrets.X }}`, `<your key>`, `%PASS%`, `os.getenv(...)`),
    fillers (`xxxx`, `****`, `...`, `…`, also after a key's prefix: `sk_test_...`), words such as
    `none`/`example`/`placeholder`/`yes`/`write`, type names (`str`), values starting with "your", or with "dummy" or
    "fake" as a word (`your-api-key-here`, `dummy-token`),
    dotted names (`settings.TOKEN`, `api.example.com`), paths and URLs (a URL's own credentials are caught
    by the URL rules).
    Weak real passwords such as `changeme` or `password` are NOT placeholders: they are redacted,
    and so is a dotted value with a part that looks drawn at random (`app.K8sXq9mZ2pLr7vT4wN`).

    >>> is_placeholder("<your key>"), is_placeholder("${API_KEY}"), is_placeholder("changeme")
    (True, True, False)
    """
    v = value.strip().strip("\"'").strip()
    low = v.lower().replace(" ", "")
    if low in _PLACEHOLDER_WORDS or REDACTED.fullmatch(v) or _FILLER.match(v) or prefix_then_filler(v):
        return True
    if low.startswith("your") or _MOCK.match(v) or _TEMPLATE.match(v) or _dotted_name(v):
        return True
    return v.startswith(("/", "./", "../", "~/")) or "://" in v


__all__ = ["PLACEHOLDER", "REDACTED", "is_placeholder", "prefix_then_filler"]
