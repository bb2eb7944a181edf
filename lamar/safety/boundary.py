"""The one gate lesson text passes on its way in: normalised to what the prompt shows, then screened."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any

from lamar._errors import InvalidExperience
from lamar.experience import Experience
from lamar.safety.plain import plain_text
from lamar.safety.secrets import scrub

TEXT_FIELDS = ("precondition", "action", "rationale")
MAX_LESSON_CHARS = 6_000
"""Most characters a lesson's precondition, action and rationale may hold together: it is injected
into every prompt of its scope, and screened wherever it comes in."""
MAX_SCOPE_CHARS = 4_000
"""Most characters a lesson's scope keys and values may hold together."""
MAX_PROVENANCE_CHARS = 16_000
"""Most characters a lesson's provenance may hold as JSON (what Lamar's folds add, the merges, past
scopes and version, not counted): `lamar show`, MCP's `lessons` and the UI show it."""


def size_problem(precondition: str, action: str, rationale: str, scope: Mapping[str, str]) -> str:
    """Why the lesson is too long to store, or "" when it is not.

    >>> size_problem("the build fails", "x" * 7_000, "", {}).startswith("the lesson is 7,015 characters")
    True
    """
    size = len(precondition) + len(action) + len(rationale)
    if size > MAX_LESSON_CHARS:
        return (f"the lesson is {size:,} characters long; a lesson is injected into every prompt of its scope, "
                f"so it may hold at most {MAX_LESSON_CHARS:,} (a few sentences): put long material in a file and "
                "let the lesson say where it is")
    size = sum(len(k) + len(v) for k, v in scope.items())
    if size > MAX_SCOPE_CHARS:
        return (f"the lesson's scope is {size:,} characters long, at most {MAX_SCOPE_CHARS:,}: a scope names "
                "a project, a language, a task")
    return ""


def provenance_problem(provenance: Mapping[str, Any]) -> str:
    """Why the provenance is too long to store, or "" when it is not.

    >>> provenance_problem({"source": "manual", "note": "x" * 20_000}).startswith("the lesson's provenance is 20,")
    True
    """
    from lamar.policy.fold import FOLD_PROVENANCE

    # The folds' own keys grow with merges and narrowings the lesson went through, not with what it was given.
    given = {key: value for key, value in provenance.items() if key not in FOLD_PROVENANCE}
    size = len(json.dumps(given, ensure_ascii=False))
    if size > MAX_PROVENANCE_CHARS:
        return (f"the lesson's provenance is {size:,} characters long as JSON, at most {MAX_PROVENANCE_CHARS:,}: "
                "it says where the lesson came from (a source, a file and line, trace ids); keep long "
                "material in a file and let the provenance name it")
    return ""


def scrubbed_provenance(provenance: Mapping[str, Any]) -> Mapping[str, Any]:
    """The provenance with every credential in its strings, keys included, redacted; `provenance`
    itself when it holds none, so that a clean one is stored exactly as given.

    >>> scrubbed_provenance({"source": "manual", "note": ["OPENAI_API_KEY=sk-proj-4fQ9x2LmZ7vR1tY8uW3eK6pA0sD5gH"]})
    {'source': 'manual', 'note': ['OPENAI_API_KEY=[REDACTED:openai-api-key]']}
    """
    def strings(value: Any) -> Iterable[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, Mapping):
            for key, item in value.items():
                yield key
                yield from strings(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                yield from strings(item)

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return scrub(value)[0]
        if isinstance(value, Mapping):
            return {clean(key): clean(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(item) for item in value]
        return value

    # One scrub of every string, one a line, first: a clean provenance (nearly every one) then costs
    # one call, not one per trace id; a credential found sends each string to its own scrub.
    if not scrub("\n".join(strings(provenance)))[1]:
        return provenance
    cleaned = clean(provenance)
    # Redacted rather than refused: the prompt never carries the provenance, and a lesson is
    # still worth keeping when the note on where it came from quoted a key.
    return provenance if cleaned == provenance else cleaned


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


def kinds_by_lines(texts: Iterable[str]) -> list[str]:
    """The kinds of credential `texts` hold as written, line breaks kept: a `.pgpass` line or a
    Markdown table's cell is known by its lines, which the prompt form joins into one."""
    from lamar.safety.files import line_spans

    kinds: list[str] = []
    for text in texts:
        if len(text.splitlines()) > 1:  # every other shape the scrub of the joined text finds
            kinds += [kind for _, _, kind in line_spans(plain_text(text)) if kind not in kinds]
    return kinds


def admitted(experience: Experience) -> Experience:
    """The lesson in prompt form, or InvalidExperience when that form holds a credential.

    A lesson's words are stored in the form `as_prompt()` will show them (NFKC, invisible and
    control characters removed, whitespace collapsed), so what is scrubbed and screened is what
    the model will read: a key hidden by a zero-width space or full-width letters cannot pass the
    check and reappear in the prompt. Every way in calls this: `Lamar.add`, import, a mined
    candidate, `apply` of a candidate.

    Raises:
        InvalidExperience: the lesson (as the model would read it) holds what looks like a
            secret (the message names its kind and says how to write the lesson instead), its
            text holds a lone surrogate, or it is longer than MAX_LESSON_CHARS (its scope than
            MAX_SCOPE_CHARS, its provenance than MAX_PROVENANCE_CHARS). A credential in the
            provenance, which no prompt carries, is redacted instead.
    """
    too_long = size_problem(experience.precondition, experience.action, experience.rationale, experience.scope)
    too_long = too_long or provenance_problem(experience.provenance)
    if too_long:  # checked first: the screens' cost grows with the text, so refuse a huge one before them
        raise InvalidExperience(too_long)
    for name in TEXT_FIELDS:
        try:
            getattr(experience, name).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidExperience(f"Experience.{name} holds a lone surrogate (not valid Unicode): decode the "
                                    "text properly (e.g. bytes.decode('utf-8', errors='replace'))") from None
    exp = normalized(experience)
    kinds = secret_kinds(exp)
    kinds += [k for k in kinds_by_lines(getattr(experience, name) for name in TEXT_FIELDS) if k not in kinds]
    if kinds:
        raise InvalidExperience(
            f"the lesson holds what looks like a secret ({', '.join(kinds)}), and lessons are shown to "
            "the model: write a placeholder instead (<your token>, ${API_KEY}) and keep the secret in "
            "a secret store"
        )
    provenance = scrubbed_provenance(exp.provenance)
    return exp if provenance is exp.provenance else dataclasses.replace(exp, provenance=provenance)


__all__ = ["MAX_LESSON_CHARS", "MAX_PROVENANCE_CHARS", "MAX_SCOPE_CHARS", "TEXT_FIELDS", "admitted", "kinds_by_lines",
           "normalized", "prompt_form", "provenance_problem", "scrubbed_provenance", "secret_kinds", "size_problem"]
