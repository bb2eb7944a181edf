"""A console or shell line is a command a reader may paste: a synopsis, with its options in brackets, is
shown as text instead, where no one takes it for a command to run."""
from __future__ import annotations

import re

from tests.docblocks import pages, parse

# `[--flag`, `[FOLDER]` or `...]`: the brackets of a synopsis; a shell test (`[ -f x ]`) has none of them.
SYNOPSIS = re.compile(r"\[--?\w|\[[A-Z][A-Z_:]*\]|\.\.\.\]")


def test_no_shell_line_is_a_synopsis() -> None:
    found = []
    for path in pages():
        for block in parse(path):
            if block.lang in {"console", "bash", "sh", "shell"}:
                for line in block.code.splitlines():
                    command = line[2:] if line.startswith("$ ") else line if block.lang != "console" else ""
                    if SYNOPSIS.search(command.split("#")[0]):
                        found.append(f"{block.where}: {line}")
    assert not found, found
