"""*Many lessons at once* given a rules file's text: the refusal names the command that reads its rules as written."""

from __future__ import annotations

# The refusal `read_lessons` gives a bullet that is not "When X, Y" (`lamar.lesson_file`): what a rules file's
# instructions ("- Run `make test` before you commit") meet, with no file name to tell the two kinds of text apart.
_NOT_A_LESSON = "a lesson bullet reads"


def rules_hint(message: str) -> str:
    """`message`, and where it refuses a bullet, the command that imports a CLAUDE.md or AGENTS.md pasted here.

    >>> rules_hint("the text, line 2: a lesson bullet reads ...; nothing was added").endswith("as written")
    True
    """
    if _NOT_A_LESSON not in message:
        return message
    return (f"{message}. Rules from a CLAUDE.md, AGENTS.md or other rules file are not written as lessons: "
            "`lamar import-rules --file FILE` reads each of them as written")
