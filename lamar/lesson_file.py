"""Many lessons read from text, for `lamar add --from`, `lamar ui` and programs: JSON Lines (one object
a line) or Markdown (one bullet a lesson, as `lamar ls` prints it: "When X, do Y, because Z.")."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from lamar._errors import InvalidArgument, InvalidContext, InvalidExperience
from lamar.experience import Experience, Scope, check_context
from lamar.safety.boundary import admitted

FIELDS = ("precondition", "action", "rationale", "scope", "status")
# Possessive: a run of spaces after the marker, given back one by one to `.*\S`, cost its square in time.
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s++(?P<text>.*\S)\s*$")
# "If X, Y" and "Whenever X, Y" state the condition as "When X, Y" does (a model lists lessons so, and the
# rules import reads them so); the lesson is stored and shown with "When".
_WHEN = re.compile(r"^(?:when|whenever|if)\s+(?P<rest>.+)$", re.IGNORECASE | re.DOTALL)
_BECAUSE = re.compile(r",\s+because\s+", re.IGNORECASE)
_FORM = '"When <precondition>, <action>[, because <rationale>]"'
# Markdown emphasis a model puts on a lesson's words ("- **When X**, Y."): the lesson is its plain words. A
# marker opens and closes outside a word, so `pkg_resources` and a code span's `__init__.py` keep theirs; a span
# is bounded, lest a line of lone markers cost the square of its length.
_CODE_SPAN = re.compile(r"(`[^`]*`)")
_EMPHASIS = (re.compile(r"(?<![\w*])(\*\*|__)(?=\S)(.{1,200}?)(?<=\S)\1(?![\w*])"),
             re.compile(r"(?<![\w*])([*_])(?=\S)(.{1,200}?)(?<=\S)\1(?![\w*])"))


def is_json_lines(name: str, text: str) -> bool:
    """JSON Lines by the file's suffix (.jsonl, .ndjson, .json), else by its first character."""
    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix in ("jsonl", "ndjson", "json"):
        return True
    if suffix in ("md", "markdown", "txt"):
        return False
    return text.lstrip().startswith("{")


def read_lessons(text: str, *, name: str = "the text", scope: Mapping[str, str] | None = None,
                 status: str = "active", via: str = "read_lessons") -> list[Experience]:
    """Every lesson in `text`, checked, in file order; nothing is stored here (`Lamar.add` each).

    One bad line raises before a caller adds any lesson, so a file with a bad line adds nothing.

    Args:
        text: the file's content.
        name: the file's name, for its format (JSON Lines by a .jsonl, .ndjson or .json suffix or
            a first "{", else Markdown) and the lessons' provenance.
        scope: fields every lesson gets (a JSON line's own scope adds to them and wins).
        status: "active" or "candidate", unless a JSON line says otherwise.
        via: recorded in each lesson's provenance.

    Raises:
        InvalidExperience: a line that is not a lesson (the message names the file and the line
            number), or a file with no lesson at all.
        InvalidArgument: `text`, `name` or `via` is not a string.
        InvalidContext: `scope` is not a mapping of strings.

    >>> [e.render() for e in read_lessons("- When a lint error, run the formatter, because it fixes most\\n",
    ...                                    name="rules.md")]
    ['When a lint error, run the formatter, because it fixes most.']
    """
    for arg, value in (("text", text), ("name", name), ("via", via)):
        if not isinstance(value, str):
            raise InvalidArgument(f"{arg} must be a string; got {type(value).__name__}")
    scope = {} if scope is None else check_context(scope)
    # Editors on Windows start UTF-8 files with a byte order mark; it would hide the first lesson.
    text = text.removeprefix("\ufeff")
    parse = _json_line if is_json_lines(name, text) else _markdown_line
    lines = text.splitlines()
    forbidden = _forbidden(lines) if parse is _markdown_line else []
    lessons: list[Experience] = []
    for number, line in enumerate(lines, start=1):
        try:
            fields = parse(line)
            if fields is None:
                continue
            if forbidden and forbidden[number - 1]:
                _refuse_under(forbidden[number - 1], fields)
            own_scope = fields.pop("scope", None) or {}
            provenance = {"source": "manual", "via": via, "file": name, "line": number}
            exp = Experience.from_dict({"status": status, **fields, "scope": {**scope, **own_scope},
                                        "provenance": provenance})
            admitted(exp)  # the same screen add() runs, so a secret on line 40 stops line 1 too
        except (InvalidExperience, InvalidContext) as exc:
            raise InvalidExperience(f"{name}, line {number}: {exc}; nothing was added") from None
        lessons.append(exp)
    if not lessons:
        kind = "JSON object" if parse is _json_line else f"Markdown bullet {_FORM}"
        raise InvalidExperience(f"{name} holds no lesson: write one {kind} per line; nothing was added")
    return lessons


class Held(NamedTuple):
    """A lesson of a text that is not new, and the lesson that already holds it."""

    lesson: Experience
    """The text's lesson (its provenance names its line)."""
    by: Experience
    """The stored lesson with the same words, or the earlier lesson of the text that has them."""
    stored: bool
    """`by` is a stored lesson (else an earlier lesson of the same text)."""


def new_lessons(stored: Iterable[Experience], lessons: Iterable[Experience]) -> tuple[list[Experience], list[Held]]:
    """The lessons that neither `stored` nor an earlier one of `lessons` holds, and a `Held` for each other one.

    Held means the same precondition and action (any case, punctuation or spacing) in the same scope.
    A text added again, after an interruption or with a line added to it, would otherwise copy
    every lesson already stored, each copy a second arm splitting the evidence of the first;
    skipping them makes adding a text again complete it.

    >>> done = read_lessons("- When the build fails, clear the cache\\n")
    >>> new, held = new_lessons(done, read_lessons("- When the Build fails, clear the cache!\\n"
    ...                                            "- When a test flakes, rerun it alone\\n"
    ...                                            "- When a test flakes, rerun it alone.\\n"))
    >>> [e.render() for e in new], [(h.lesson.provenance["line"], h.stored) for h in held]
    (['When a test flakes, rerun it alone.'], [(1, True), (3, False)])
    """
    from lamar.sleep.similarity import normalize

    def key(exp: Experience) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        return normalize(exp.precondition), normalize(exp.action), exp.scope.items_key

    known: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[Experience, bool]] = {}
    for exp in stored:  # the first stored wins: a later one is a copy, retired as such
        known.setdefault(key(exp), (exp, True))
    new: list[Experience] = []
    held: list[Held] = []
    for exp in lessons:
        holder = known.get(key(exp))
        if holder is None:
            known[key(exp)] = (exp, False)
            new.append(exp)
        else:
            held.append(Held(exp, *holder))
    return new, held


def _json_line(line: str) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise InvalidExperience(f"not JSON ({exc.args[0].split(':')[0]}): write one object per line, like "
                                '{"precondition": "...", "action": "...", "scope": {"project": "x"}}') from None
    except RecursionError:  # the decoder's own limit: text crafted to exhaust it (a client of the MCP tool, say)
        raise InvalidExperience("nested deeper than a lesson ever is: write one flat object per line, like "
                                '{"precondition": "...", "action": "...", "scope": {"project": "x"}}') from None
    if not isinstance(data, dict):
        raise InvalidExperience(f"a lesson is a JSON object; got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise InvalidExperience(f"unknown field {', '.join(map(repr, unknown))}: a lesson has {', '.join(FIELDS)}")
    if data.get("status", "active") not in ("active", "candidate"):
        raise InvalidExperience(f"status {data['status']!r}: a new lesson is active or candidate")
    scope = data.get("scope") or {}
    if not isinstance(scope, Mapping):
        raise InvalidExperience(f"scope must be an object of strings, like {{\"project\": \"x\"}}; got {scope!r}")
    Scope(scope)  # an InvalidContext naming the bad field
    return data


def _forbidden(lines: list[str]) -> list[str]:
    from lamar.safety.prohibitions import forbidding_labels

    return forbidding_labels(lines)


def _refuse_under(label: str, fields: dict[str, Any]) -> None:
    """Refuse a bullet under "## Never" that does not forbid in its own words: the heading only groups the
    bullets, so the lesson read would tell the agent to do what the file forbids."""
    from lamar.safety.prohibitions import opens_forbidding

    action = str(fields["action"])
    if opens_forbidding(action):
        return
    raise InvalidExperience(f"this lesson sits under {label!r}, which is not read into it, so it would tell the "
                            f"agent to do what that forbids: write the prohibition in the bullet, like \"When "
                            f"{fields['precondition']}, never {action}\"")


def _markdown_line(line: str) -> dict[str, Any] | None:
    bullet = _BULLET.match(line)
    if bullet is None:  # headings, prose and blank lines group the bullets; they are not lessons
        return None
    text = _plain(bullet.group("text").strip())
    when = _WHEN.match(text)
    if when is None:
        raise InvalidExperience(f"a lesson bullet reads {_FORM}; got {text[:60]!r}")
    rest = when.group("rest").rstrip().rstrip(".")
    precondition, comma, tail = rest.partition(",")
    if not comma:
        raise InvalidExperience(f"no comma after the precondition: write {_FORM}; got {text[:60]!r}")
    parts = _BECAUSE.split(tail, maxsplit=1)
    action, rationale = parts[0], (parts[1] if len(parts) > 1 else "")
    return {"precondition": precondition.strip(), "action": action.strip(), "rationale": rationale.strip()}


def _plain(text: str) -> str:
    """`text` without Markdown emphasis outside its code spans.

    >>> _plain("**When the cart total is wrong**, _always_ run `make __init__`")
    'When the cart total is wrong, always run `make __init__`'
    """
    pieces = _CODE_SPAN.split(text)
    for n in range(0, len(pieces), 2):  # the odd ones are code spans
        for emphasis in _EMPHASIS:
            pieces[n] = emphasis.sub(r"\2", pieces[n])
    return "".join(pieces)


__all__ = ["FIELDS", "Held", "is_json_lines", "new_lessons", "read_lessons"]
