"""The app's forms as HTML strings: add one lesson or many, edit one, and the confirmation every
write asks for first; every value escaped, as in `pages`."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape
from urllib.parse import quote

from lamar.cli.render import plural, scope_text
from lamar.experience import Experience
from lamar_ui.bidi import lesson, said
from lamar_ui.pages import hidden_token

# Where a form's answer opens focused, so a keyboard lands on what to read next and a screen reader reads it: the
# question a review asks (the next Tab reaches its Yes), or why the form was refused, said at once (role="alert").
_ASKED = '<p class="asked" tabindex="-1" autofocus>'


def refusal(error: str) -> str:
    """Why a form was refused, above the form sent back (see `_ASKED`); "" when it was not."""
    return f'<p class="error" role="alert" tabindex="-1" autofocus>{escape(error)}</p>' if error else ""


def confirm_page(action: str, question: str, token: str, fields: Mapping[str, str], *, button: str,
                 back: str, extra: str = "") -> str:
    """A form that asks once more before a lever changes the store (`extra`: more inputs, as HTML)."""
    inputs = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items())
    return (f'<form class="confirm" method="post" action="{escape(action)}">{_ASKED}{question}</p>{hidden_token(token)}'
            f'{inputs}{extra}<button type="submit" name="confirm" value="yes">{escape(button)}</button> '
            f'<a href="{escape(back)}">Cancel</a></form>')


# What a lever did, said on the lesson's page it leads back to while the lesson is as the lever left it: a page
# that follows the store must not say "Retired" of a lesson revived since.
_DONE = {"retire": ("retired", "Retired: it is no longer injected; its evidence and audit trail are kept."),
         "revive": ("active", "Revived: it is active and eligible again."),
         "erase": ("retired", "Erased: its text is gone from the store; its evidence and audit trail are kept.")}


_EDITED = {"restarted": "its evidence restarts, as the new text earns its own verdict.",
           "kept": "its evidence is kept, for a wording fix."}


def done_note(exp: Experience, lever: str) -> str:
    """The lesson page's line saying what `lever` did, where focus opens and a screen reader reads it; "" if none.
    An edit's `lever` reads "edit:VERSION:kept" (or ":restarted"): said while the lesson is at that version."""
    status, words = _DONE.get(lever, ("", ""))
    version, _, evidence = lever.removeprefix("edit:").partition(":")
    if lever.startswith("edit:") and version == str(exp.version) and evidence in _EDITED:
        status, words = exp.status.value, f"Edited: version {version} stored; {_EDITED[evidence]}"
    if not words or exp.status.value != status or (lever == "erase") != bool(exp.provenance.get("erased")):
        return ""
    return f'<div id="said" role="status" tabindex="-1" autofocus><p class="message">{words}</p></div>'


def lever_refused(exp: Experience | None, lever: str, error: str, token: str, reason: str, extra: str = "") -> str:
    """A lever the store refused (`exp`: the lesson as it is now, None if it cannot be read): why, and while the
    lesson still takes the lever (a lock held past the wait, a full disk), its form to send again as it was sent
    (`extra`: its other inputs); a lesson that no longer takes it (erased since) gets only the way back."""
    back = escape(f"/lessons/{quote(exp.id, safe='')}") if exp else "/"
    erased = exp is None or bool(exp.provenance.get("erased"))
    takes = not erased and (lever == "erase" or (exp is not None and (exp.status.value == "retired") ==
                                                 (lever == "revive")))
    again = (f'<form class="confirm" method="post" action="{back}/{lever}">{hidden_token(token)}'
             f'<input type="hidden" name="reason" value="{escape(reason)}">{extra}'
             '<button type="submit" name="confirm" value="yes">Try again</button> ') if takes else "<p>"
    return f'{refusal(error)}{again}<a href="{back}">Back to the lesson</a>{"</form>" if takes else "</p>"}'


_LINE = 70  # characters a field's line holds at its narrowest, for the rows a long text needs


def text_field(name: str, label: str, value: str, hint: str = "") -> str:
    """A lesson's text field: a box that shows the whole text and keeps the lines a person types (a one-line
    input cuts a long lesson to a strip and drops a newline, gluing the words either side of it). The store
    keeps the text in prompt form, one line, as the review shows it."""
    rows = min(20, max(2, sum(-(-len(line) // _LINE) or 1 for line in value.split("\n"))))
    placeholder = f' placeholder="{escape(hint)}"' if hint else ""
    # The newline after the tag is the one the HTML parser drops, so a text that starts with one keeps it.
    return (f'<label>{label}<textarea name="{name}" class="lesson-field" dir="auto" rows="{rows}"{placeholder}>\n'
            f"{escape(value)}</textarea></label>")


def add_page(token: str, values: Mapping[str, str], error: str = "") -> str:
    def field(name: str, label: str, hint: str) -> str:
        if name != "scope":
            return text_field(name, label, values.get(name, ""), hint)
        return (f'<label>{label}<input name="{name}" dir="auto" value="{escape(values.get(name, ""))}" '
                f'placeholder="{escape(hint)}"></label>')

    return (
        refusal(error)
        + '<form class="add" method="post" action="/add">' + hidden_token(token)
        + field("precondition", "When", "the Xcode build fails after a dependency bump")
        + field("action", "do", "clear DerivedData before rebuilding")
        + field("rationale", "because", "stale module maps survive a clean build")
        + field("scope", "Scope (key=value, space separated)", "project=trace language=swift")
        + '<button type="submit" name="confirm" value="">Review…</button></form>'
        + "<p>A new lesson starts as a cold arm: it is tried, held out at random, and earns its verdict.</p>"
        + many_form(token, values)
    )


def edit_page(exp: Experience, token: str, values: Mapping[str, str], error: str = "") -> str:
    """The form for a lesson's next version, filled with `values` (the lesson's own at first)."""
    def field(name: str, label: str) -> str:
        if name != "scope":
            return text_field(name, label, values.get(name, ""))
        return f'<label>{label}<input name="{name}" dir="auto" value="{escape(values.get(name, ""))}"></label>'

    checked = " checked" if values.get("keep") == "yes" else ""
    return (
        refusal(error)
        + f'<p class="lesson-text">{lesson(exp)}</p>'
        + f'<form class="add" method="post" action="/lessons/{quote(exp.id, safe="")}/edit">' + hidden_token(token)
        + f'<input type="hidden" name="version" value="{exp.version}">'  # the version this text replaces
        + field("precondition", "When") + field("action", "do") + field("rationale", "because")
        + field("scope", "Scope (key=value, space separated)")
        + f'<label class="check"><input type="checkbox" name="keep" value="yes"{checked}> Keep the evidence: a '
        "wording fix that changes neither the action nor the scope</label>"
        + '<button type="submit" name="confirm" value="">Review…</button></form>'
        + "<p>The lesson keeps its id and its history. Its evidence restarts unless kept: a new text is a new "
        "treatment, which must earn its own verdict.</p>"
    )


def retired_page(exp: Experience, typed: Mapping[str, str]) -> str:
    """An edit of a retired lesson, refused before anything is typed, or once it was (`typed`: the form's
    fields, shown to be kept elsewhere): what to do instead, and no form that could only be refused again."""
    back = f"/lessons/{quote(exp.id, safe='')}"
    if exp.provenance.get("erased"):
        why, lever = f"lesson {exp.id} was erased: its text is gone and it cannot be edited; add a new lesson", ""
    else:
        why = f"lesson {exp.id} is retired: revive it to edit it, or add a new lesson"
        lever = f'<a class="button" href="{back}/revive">Revive…</a> '
    kept = " ".join(f"{name}: <q>{said(text)}</q>" for name, text in typed.items() if text.strip())
    return (refusal(why) + (f"<p>What you typed, not stored: {kept}</p>" if kept else "")
            + f'<p>{lever}<a href="/add">Add a lesson</a> <a href="{back}">Back to the lesson</a></p>')


def many_form(token: str, values: Mapping[str, str]) -> str:
    """Many lessons at once, as `lamar add --from` reads them: Markdown bullets or JSON lines."""
    return (
        '<h2>Many lessons at once</h2><form class="many" method="post" action="/add/many">' + hidden_token(token)
        + '<label>One lesson per line: a Markdown bullet "- When X, do Y, because Z" or a JSON object '
        '{"precondition": …, "action": …}<textarea name="lessons" dir="auto" rows="8">'
        + escape(values.get("lessons", "")) + "</textarea></label>"
        + '<label>Scope for all of them<input name="scope" dir="auto" value="' + escape(values.get("many_scope", ""))
        + '" placeholder="project=trace"></label>'
        + '<button type="submit" name="confirm" value="">Review…</button></form>'
    )


def many_confirm_page(token: str, text: str, scope: str, lessons: Sequence[Experience], ids: Sequence[str],
                      *, added: Collection[str] = (), error: str = "") -> str:
    """Every lesson the text holds, once more before any is written (`ids`: the ids they will take).
    After a store failed part-way (`error`), each lesson says whether it was added (`added`: ids)."""
    def mark(exp_id: str) -> str:
        if not error:
            return ""
        return (f' <strong class="added">added</strong> <code>{escape(exp_id)}</code>' if exp_id in added
                else ' <strong class="error">not added</strong>')

    items = "".join(f"<li>{lesson(e)} <code>{said(scope_text(e.scope))}</code>{mark(i)}</li>"
                    for e, i in zip(lessons, ids))
    rest = len([i for i in ids if i not in added])
    question = (f"Add the {plural(rest, 'lesson')} not added?" if error
                else "Add this lesson?" if len(lessons) == 1 else f"Add these {plural(len(lessons), 'lesson')}?")
    return (refusal(error)
            + f'<form class="confirm" method="post" action="/add/many">{"<p>" if error else _ASKED}{question}</p>'
            f"<ol>{items}</ol>{hidden_token(token)}"
            f'<textarea name="lessons" hidden>{escape(text)}</textarea>'
            f'<input type="hidden" name="scope" value="{escape(scope)}">'
            f'<input type="hidden" name="ids" value="{escape(" ".join(ids))}">'
            f'<button type="submit" name="confirm" value="yes">Yes, add {plural(rest, "lesson")}</button> '
            '<a href="/add">Cancel</a></form>')


__all__ = ["add_page", "confirm_page", "done_note", "edit_page", "lever_refused", "many_confirm_page", "many_form",
           "refusal", "retired_page", "text_field"]
