"""A PostgreSQL store's URL: libpq's, plus the namespace and the mode, and the form of it that is
safe to show (no password)."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

from lamar._errors import StoreError

DEFAULT_NAMESPACE = "default"
URL_NAMESPACE = "lamar_namespace"  # postgresql://...?lamar_namespace=team-a
URL_FOLD = "lamar_fold"  # ...&lamar_fold=off: every engine folds the log itself (the fold mode is the default)
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")


def parse_url(url: str, namespace: str | None) -> tuple[str, str, str, bool]:
    """(conninfo for libpq, namespace, location, fold mode): the location names the namespace
    and the mode when it is not the default, and hides any password, so it is safe in messages
    and reopens the store when the password comes from PGPASSWORD or ~/.pgpass."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # a bracketed host left open: "postgresql://user@[::1/db"
        # Not echoed: the URL may hold a password.
        raise StoreError(f"the PostgreSQL URL does not parse ({exc}): use "
                         "postgresql://user@host:port/database?lamar_namespace=name") from exc
    # Query pieces other than ours pass to libpq untouched (it percent-decodes; "+" is a "+").
    pieces = [piece for piece in parts.query.split("&") if piece]
    modes = [unquote(piece.partition("=")[2]).lower() for piece in pieces if piece.partition("=")[0] == URL_FOLD]
    if any(mode not in ("on", "off") for mode in modes):
        raise StoreError(f"{URL_FOLD} is 'on' (PostgreSQL holds the folded state, the default) or 'off' "
                         f"(every engine folds the log itself); got {modes[-1]!r}")
    fold = not modes or modes[-1] == "on"
    pieces = [piece for piece in pieces if piece.partition("=")[0] != URL_FOLD]
    ours = [piece for piece in pieces if piece.partition("=")[0] == URL_NAMESPACE]
    rest = [piece for piece in pieces if piece not in ours]
    shown = [piece for piece in rest if not is_credential(unquote(piece.partition("=")[0]))]
    named = list(dict.fromkeys(unquote(piece.partition("=")[2]) for piece in ours))
    if len(named) > 1:  # the last would win: a URL pasted onto another would write elsewhere
        raise StoreError(f"the URL names namespaces {named[0]!r} and {named[-1]!r}; pick one")
    in_url = named[0] if named else None
    if in_url is not None and namespace is not None and in_url != namespace:
        raise StoreError(f"the URL names namespace {in_url!r} and namespace= says {namespace!r}; pick one")
    chosen = namespace if namespace is not None else in_url if in_url is not None else DEFAULT_NAMESPACE
    if not isinstance(chosen, str) or not _NAMESPACE.fullmatch(chosen):
        raise StoreError(f"invalid namespace {chosen!r}: use 1-63 letters, digits, '_', '.' or '-', "
                         "starting with a letter or digit")
    conninfo = urlunsplit(parts._replace(query="&".join(rest)))
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = user.split(":", 1)[0] + "@" + host
    query = "&".join(shown + [f"{URL_NAMESPACE}={chosen}"] + ([] if fold else [f"{URL_FOLD}=off"]))
    return conninfo, chosen, urlunsplit(parts._replace(netloc=netloc, query=query, fragment="")), fold


def is_credential(name: str) -> bool:
    """A URL parameter whose value must never be shown: password, sslpassword, any *token/*secret."""
    from lamar.safety.secrets import secret_key_kind

    return name.lower() in {"password", "sslpassword", "pass"} or secret_key_kind(name) is not None


__all__ = ["DEFAULT_NAMESPACE", "URL_FOLD", "URL_NAMESPACE", "is_credential", "parse_url"]
