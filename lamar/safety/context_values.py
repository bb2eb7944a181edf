"""`scrub_context`: a recall's context as the store keeps it, each value scrubbed where it may hold a credential."""

from __future__ import annotations

from collections.abc import Mapping

from lamar.safety.prefilter import may_hold_secret

# A key that names a credential holds one of these, ignoring case (`lamar.safety.assignments.KEY_NEEDLES`, which a
# test holds this to): other keys, most of them, never load the rules that read a key.
KEY_WORDS = ("pass", "pw", "psk", "secret", "token", "key", "credential", "pat", "auth")
# Alone, these name what a context sorts by (an auth method, a path's short name) as often as a credential: their
# values are scrubbed for what they hold, never replaced whole, so `auth=oauth` and `auth=saml` stay two slices.
_LABEL_KEYS = frozenset({"auth", "pat"})


def scrub_context(context: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """`context` with every credential in its values replaced by `[REDACTED:<kind>]`, as `scrub_trace` does
    a trace's context: a value under a key that names a credential (`db_password`) goes whole; under a key that
    is only `auth` or `pat`, which a context uses for a method or a name, it is scrubbed for what it holds.

    Every recall stores its context this way. A pre-filter clears a short label in microseconds, so the full
    scrub runs (and its rules load) only for a value that may hold a credential.

    Args:
        context: a mapping of strings (keys are kept as they are).

    Returns:
        The scrubbed copy and the kinds found (each once).

    >>> scrub_context({"task": "deploy", "note": "push with ghp_" + "a1B2c3D4e5" * 4, "db_password": "hunter2"})
    ({'task': 'deploy', 'note': 'push with [REDACTED:github-token]', 'db_password': '[REDACTED:password]'}, \
['github-token', 'password'])
    """
    kinds: list[str] = []
    out: dict[str, str] = {}
    for key, value in context.items():
        cleaned, found = _scrubbed(value) if may_hold_secret(value) else (value, [])
        if not found and any(word in key.lower() for word in KEY_WORDS) and key.strip().lower() not in _LABEL_KEYS:
            from lamar.safety.secrets import PLACEHOLDER
            from lamar.safety.traces import secret_by_key

            if (kind := secret_by_key(key, value)) is not None:
                cleaned, found = PLACEHOLDER.format(kind=kind), [kind]
        kinds += [k for k in found if k not in kinds]
        out[key] = cleaned
    return out, kinds


def _scrubbed(value: str) -> tuple[str, list[str]]:
    from lamar.safety.secrets import scrub

    return scrub(value)


__all__ = ["KEY_WORDS", "scrub_context"]
