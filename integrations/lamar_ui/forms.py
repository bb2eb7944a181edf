"""What the app reads from a request: the launch token, the path's segments, a filter's value,
KEY=VALUE pairs; each answers bad input with a message that says what to write, as `REFUSAL` tells another user."""

from __future__ import annotations

import secrets
from urllib.parse import quote, unquote

from starlette.requests import Request

from lamar import Status, Verdict
from lamar.cli.pairs import one_value_each

# What another user's request is told (`lamar.loopback.other_user`): what happened and what to do, and no more (not
# who started it, nor what it serves). Its own user meets it only with a browser run as someone else (sudo -u).
REFUSAL = ("this lamar ui answers only the user of this machine who started it, and this request comes from "
           "a program of another user: start `lamar ui` as the user who runs your browser")


def same_token(given: str, token: str) -> bool:
    """Whether `given` is the launch token, in constant time; any text at all may be given.

    `secrets.compare_digest` raises TypeError on a str that is not ASCII, which answered a
    hand-made token with a 500 that carried none of the security headers.
    """
    return secrets.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8"))


def segments(request: Request) -> list[str]:
    """The path's segments, each decoded alone ('%2F' stays inside its segment)."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else quote(request.url.path)
    return [unquote(part) for part in path.split("?", 1)[0].split("/")]


def choice(name: str, value: str, kind: type[Status | Verdict]) -> None:
    """A hand-edited ?verdict= or ?status= gets the list of values to use, not Python's enum error."""
    allowed = [member.value for member in kind]
    if value and value not in allowed:
        raise ValueError(f"{name} {value!r} is not one of {', '.join(allowed)}; leave it empty for any {name}")


def page_number(text: str) -> int:
    """A hand-edited ?page= gets what to write, not a 500; empty: the first page."""
    if not text:
        return 1
    if not (text.isascii() and text.isdigit()) or int(text) < 1 or len(text) > 9:
        raise ValueError(f"page {text[:40]!r} is not a page number: write 1 or more, or leave it out for the first")
    return int(text)


def pairs(text: str, what: str = "scope") -> dict[str, str]:
    """'k=v k2=v2' -> {'k': 'v', 'k2': 'v2'}; ValueError saying what to write otherwise.

    A key given two values is refused as `lamar` refuses it (`lamar.cli.pairs.one_value_each`).
    """
    parsed: list[tuple[str, str]] = []
    for pair in text.split():
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{what} {pair!r} is not KEY=VALUE (e.g. language=swift)")
        parsed.append((key, value))
    return one_value_each(parsed, what)


__all__ = ["REFUSAL", "choice", "page_number", "pairs", "same_token", "segments"]
