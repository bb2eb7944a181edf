"""The one gate lesson text passes on its way in: normalised to what the prompt shows, then screened.

A lesson's words are stored in the form `as_prompt()` will show them (NFKC, invisible and
control characters removed, whitespace collapsed), so what is scrubbed and screened is what
the model will read: a key hidden by a zero-width space or full-width letters cannot pass the
check and reappear in the prompt. Every way in calls this: `Lamar.add`, import, a mined
candidate, `apply` of a candidate.
"""

from __future__ import annotations

import dataclasses

from lamar._errors import InvalidExperience
from lamar.experience import Experience
from lamar.safety.plain import plain_text
from lamar.safety.secrets import scrub

TEXT_FIELDS = ("precondition", "action", "rationale")


def prompt_form(text: str) -> str:
    """`text` as the prompt shows it: NFKC, no invisible characters, one line.

    >>> prompt_form("clear  Ｄerived\\u200bData\\nfirst")
    'clear DerivedData first'
    """
    return " ".join(plain_text(text).split())


def normalized(experience: Experience) -> Experience:
    """The experience with its text in prompt form; InvalidExperience if that leaves it empty."""
    changes = {name: prompt_form(getattr(experience, name)) for name in TEXT_FIELDS}
    if all(changes[name] == getattr(experience, name) for name in TEXT_FIELDS):
        return experience
    return dataclasses.replace(experience, precondition=changes["precondition"], action=changes["action"],
                               rationale=changes["rationale"])


def secret_kinds(experience: Experience) -> list[str]:
    """The kinds of credential the lesson would put in a prompt (its rendering and its scope)."""
    kinds: list[str] = []
    for text in (experience.render(), *experience.scope.values()):
        kinds += [k for k in scrub(text)[1] if k not in kinds]
    return kinds


def admitted(experience: Experience) -> Experience:
    """The lesson in prompt form, or InvalidExperience when that form holds a credential.

    Raises:
        InvalidExperience: the lesson (as the model would read it) holds what looks like a
            secret (the message names its kind and says how to write the lesson instead), or
            its text holds a lone surrogate.
    """
    for name in TEXT_FIELDS:
        try:
            getattr(experience, name).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidExperience(f"Experience.{name} holds a lone surrogate (not valid Unicode): decode the "
                                    "text properly (e.g. bytes.decode('utf-8', errors='replace'))") from None
    exp = normalized(experience)
    kinds = secret_kinds(exp)
    if kinds:
        raise InvalidExperience(
            f"the lesson holds what looks like a secret ({', '.join(kinds)}), and lessons are shown to "
            "the model: write a placeholder instead (<your token>, ${API_KEY}) and keep the secret in "
            "a secret store"
        )
    return exp


__all__ = ["TEXT_FIELDS", "admitted", "normalized", "prompt_form", "secret_kinds"]
