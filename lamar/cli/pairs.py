"""KEY=VALUE pairs (a scope, a context) as `lamar` and `lamar ui` read them: one refusal of a key
given two values, whichever reads them."""

from __future__ import annotations

from collections.abc import Iterable

from lamar._errors import InvalidArgument


def one_value_each(pairs: Iterable[tuple[str, str]], what: str) -> dict[str, str]:
    """The (key, value) pairs as a mapping; InvalidArgument when a key comes with two values.

    A scope or context holds one value a key: keeping either would store or match one the user
    did not write. The same value twice says one thing, and is kept once.

    >>> one_value_each([("team", "a"), ("team", "a")], "scope")
    {'team': 'a'}
    >>> one_value_each([("team", "a"), ("team", "b")], "scope")
    Traceback (most recent call last):
    ...
    lamar._errors.InvalidArgument: scope gives 'team' twice (team=a and team=b): keep the one you mean
    """
    out: dict[str, str] = {}
    for key, value in pairs:
        if out.setdefault(key, value) != value:
            from lamar.safety.secrets import scrub  # the message is printed: a repeated token shows redacted

            said = scrub(f"{what} gives {key!r} twice ({key}={out[key]} and {key}={value}): ")[0]
            raise InvalidArgument(said + "keep the one you mean")
    return out


__all__ = ["one_value_each"]
