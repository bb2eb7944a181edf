"""Credentials known by their place in a file: a `.pgpass` line's last field, a Terraform variable's
default, a Markdown table's cell under a column (or beside a row name) that names a credential."""

from __future__ import annotations

import re

from lamar.safety.assignments import said_is_harmless, secret_key_kind
from lamar.safety.placeholders import REDACTED, is_placeholder

# hostname:port:database:username:password, a whole line. The port is a number or "*" and the host
# holds a letter, a dot or is "*", so times and counters (01:02:03:04:05) and the format's own
# description (hostname:port:...) stay; the password has no colon, so /etc/passwd lines and IPv6
# addresses, which have more fields, stay too. The pattern starts at the host's colon, which the
# engine scans for quickly, and `pgpass_is_harmless` reads the host back to the line's start.
# The line may also stand in a command that writes it to a .pgpass file, quoted (echo '...' >> ~/.pgpass)
# or not (echo ... > .pgpass); then the host is read back to the opening quote or to the word's start.
PGPASS = re.compile(
    r":(?:\d{1,5}|\*):[^\s:]{1,100}:[^\s:]{1,100}:(?P<secret>[^\s:]{1,200}?)(?:[ \t]*\r?$"
    r"|(?:\\n)?(?P<close>[\"'])(?=[\s)\];,]|$)|(?P<to>[ \t]*>>?[ \t]*[^\s:]*pgpass\b))", re.MULTILINE
)
_FORMAT = re.compile(r"%[-+ #0-9.]*[a-z]|\{[\w.!:]*\}")  # printf '...:%s\n' "$PW" writes the password
_HOST = re.compile(r"[ \t]*(?:\*|(?=[\w.-]{0,200}[A-Za-z.])[\w.-]{1,200})")
# variable "db_password" { ... default = "..." }: the default of a variable whose name says credential.
TERRAFORM_DEFAULT = re.compile(
    r"""\bvariable[ \t]+"(?P<key>[A-Za-z_][\w-]{0,80})"[ \t]*\{[^{}]{0,300}?\bdefault[ \t]*=[ \t]*"""
    r"""(?P<secret>"[^"\n]{1,200}")"""
)


def pgpass_is_harmless(match: re.Match[str]) -> bool:
    text, at = match.string, match.start()
    start = text.rfind("\n", 0, at) + 1
    if match.group("close"):
        quote = text.rfind(match.group("close"), start, at)
        line_end = text.find("\n", at)
        # A quoted string of that shape in code is as often a cache key ("user:42:session:x:y"):
        # it counts where its line names the file it goes to.
        if quote < 0 or "pgpass" not in text[start:len(text) if line_end < 0 else line_end].lower():
            return True
        start = quote + 1
    elif match.group("to"):
        start = max(start, text.rfind(" ", start, at) + 1, text.rfind("\t", start, at) + 1)
    host = _HOST.fullmatch(text, start, at)
    secret = match.group("secret")
    return host is None or is_placeholder(secret) or _FORMAT.fullmatch(secret) is not None


def terraform_is_harmless(match: re.Match[str]) -> bool:
    return secret_key_kind(match.group("key")) is None or is_placeholder(match.group("secret").strip('"'))


def terraform_kind(match: re.Match[str]) -> str:
    return secret_key_kind(match.group("key")) or "secret"


# A Markdown table's delimiter row (|---|:--:|), the line under its header, found by a bar beside a
# dash: the engine scans for the bar, rarer than a dash, faster than it tries every line.
_DELIMITER_HINT = re.compile(r"\|(?:[ \t]*:?-|(?<=-\|)|(?<=- \|)|(?<=-:\|))")
# Possessive throughout: with no bar first, the row's leading blanks could be split between two runs,
# tried every way against each cell's blanks before a stray last character failed the line.
_DELIMITER = re.compile(r"[ \t]*+\|?(?:[ \t]*+:?-++:?[ \t]*+\|)++(?:[ \t]*+:?-++:?[ \t]*+)?\r?")
_CELL_MARKS = " \t*`\"'"
_VALUE_HEADERS = {"value", "values", "wert", "valeur", "valor"}


def _cells(line: str) -> list[tuple[int, int]]:
    """(start, end) of each cell's text in a table row, marks (`**`, backticks, quotes) left out."""
    cells, at = [], 0
    body = line.rstrip()
    if body.lstrip().startswith("|"):
        at = line.index("|") + 1
    end_of_row = len(body) - 1 if body.endswith("|") and len(body) > at else len(body)
    while at <= end_of_row:
        bar = line.find("|", at, end_of_row)
        stop = end_of_row if bar < 0 else bar
        start, end = at, stop
        while start < end and line[start] in _CELL_MARKS:
            start += 1
        while end > start and line[end - 1] in _CELL_MARKS:
            end -= 1
        cells.append((start, end))
        at = stop + 1
        if bar < 0:
            break
    return cells


def _is_secret_cell(value: str, kind: str) -> bool:
    if len(value) < 4 or any(c.isspace() for c in value) or REDACTED.fullmatch(value) or is_placeholder(value):
        return False
    if kind != "password" and value.isdigit():
        return False
    # A plain word stays ("required", "yes", "Vault"), as it does after "the password is".
    return not said_is_harmless(value, kind)


def table_spans(text: str) -> list[tuple[int, int, str]]:
    """Spans (start, end, kind) of the cells of Markdown tables that hold a credential: under a
    header that names one (| user | password |), or beside a first cell that names one in a table
    whose other column is headed "value" (| password | hunter2-xyz |)."""
    if "|" not in text or "-" not in text:
        return []
    spans: list[tuple[int, int, str]] = []
    pos = 0
    while (hint := _DELIMITER_HINT.search(text, pos)) is not None:
        line_start = text.rfind("\n", 0, hint.start()) + 1
        line_end = text.find("\n", hint.end())
        pos = len(text) if line_end < 0 else line_end + 1
        if line_start and _DELIMITER.fullmatch(text, line_start, pos - (line_end >= 0)):
            head = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1].rstrip("\r")
            # The search goes on after the table's rows: each row is read once, so text made of
            # delimiter rows costs time in proportion to its length.
            pos = _column_spans(text, pos, head, spans)
    return spans


def _column_spans(text: str, at: int, head: str, spans: list[tuple[int, int, str]]) -> int:
    """Adds the credentials in the rows from `at` of a table headed `head`; returns where they end."""
    names = [head[a:b] for a, b in _cells(head)] if "|" in head else []
    columns = {i: kind for i, name in enumerate(names) if (kind := secret_key_kind(name)) is not None}
    value_column = next((i for i, name in enumerate(names) if i and name.lower() in _VALUE_HEADERS), None)
    if not columns and value_column is None:
        return at
    while at < len(text):
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        row = text[at:end].rstrip("\r")
        if "|" not in row:
            break
        cells = _cells(row)
        named = secret_key_kind(row[slice(*cells[0])]) if value_column is not None and cells else None
        # By the row's own cells, not the header's: a wide header over many rows costs no more.
        for i, (start, stop) in enumerate(cells):
            kind = named if i == value_column and named else columns.get(i)
            if kind is not None and _is_secret_cell(row[start:stop], kind):
                spans.append((at + start, at + stop, kind))
        at = end + 1
    return at


def line_spans(text: str) -> list[tuple[int, int, str]]:
    """Spans (start, end, kind) of the credentials known by their own lines: `.pgpass` lines and table
    cells, which text joined into one line (a lesson's prompt form) no longer shows."""
    spans, pos = [], 0
    while (match := PGPASS.search(text, pos)) is not None:
        pos = match.start() + 1
        if not pgpass_is_harmless(match):
            spans.append((match.start("secret"), match.end("secret"), "password"))
    return spans + table_spans(text)


__all__ = ["PGPASS", "TERRAFORM_DEFAULT", "line_spans", "pgpass_is_harmless", "table_spans", "terraform_is_harmless",
           "terraform_kind"]
