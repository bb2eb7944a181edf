"""Patterns that read text from outside (rules files, lesson files, addresses) finish on crafted text;
`tools/regex_cost.py` measures how each grows, these pin the rewrites."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Each snippet took from minutes to hours with the patterns before their rewrite (the cost grew with
# the square or the cube of the text), and takes well under a second now: 60 s tells the two apart
# on any machine without timing anything.
CRAFTED = {
    "a heading line ending in spaces and one letter": (
        "from lamar.rules.parse import parse_rules; parse_rules('# a' + ' ' * 5000 + 'b', 'CLAUDE.md')"),
    "a condition followed by spaces only": (
        "from lamar.rules.parse import condition; condition('when' + ' ' * 20_000)"),
    "a rules file of unclosed comments": (
        "from lamar.rules.parse import clean; clean('<!--' * 200_000)"),
    "a run of backticks before a comment": (
        "from lamar.rules.parse import clean; clean('`' * 100_000 + '<!-- x -->')"),
    "an import line with a run of backticks": (
        "import pathlib, tempfile\nfrom lamar.rules.sources import read_sources\n"
        "with tempfile.TemporaryDirectory() as folder:\n    d = pathlib.Path(folder)\n"
        "    (d / 'CLAUDE.md').write_text('@x ' + '`' * 300_000)\n    read_sources([d / 'CLAUDE.md'], d)"),
    "brackets that open no link": (
        "from lamar.rules.parse import clean; clean('[ ' * 500_000)"),
    "link targets that never close": (
        "from lamar.rules.parse import clean; clean('[a](' * 300_000)"),
    "a lesson bullet of spaces": (
        "from lamar.lesson_file import read_lessons; "
        "read_lessons('-' + ' ' * 300_000 + '\\n- When a, b\\n', name='lessons.md')"),
    "a run of backticks in an action": (
        "from lamar.rules.importing import _CODE; _CODE.findall('`' * 300_000)"),
    "a table delimiter row padded with tabs": (
        "from lamar.safety import scrub; scrub('a|b\\n' + '\\t' * 50_000 + '|-' + '\\t' * 50_000 + 'x')"),
    "a lesson of backslashes": (
        "from lamar.safety import prompt_safe; prompt_safe('\\\\' * 300_000 + 'x')"),
    "an address of question marks": (
        "from lamar.models.protocol import address; address('https://h/' + '?' * 300_000)"),
    "a heading line ending in spaces and one letter, read for a prohibition": (
        "from lamar.safety.prohibitions import forbidding_labels; forbidding_labels(['# a' + ' ' * 200_000 + 'b'])"),
    "a force push's flags run on and closed by a digit": (
        "from lamar.safety.instructs import instructed_harm; instructed_harm('git push -' + 'f' * 100_000 + '1')"),
    "a mined action of spaces, compared for near-copies": (
        "from lamar.sleep.similarity import what_to_do; what_to_do('run it' + ' ' * 5_000 + 'x')"),
}


@pytest.mark.parametrize("code", CRAFTED.values(), ids=CRAFTED.keys())
def test_crafted_text_takes_far_less_than_a_minute(code: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=env, cwd=ROOT)


def _texts(alphabet: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20_000)]


def test_the_rewritten_patterns_agree_with_the_old_ones_on_short_text() -> None:
    from lamar.lesson_file import _BULLET
    from lamar.models.protocol import _QUERY_VALUE
    from lamar.rules.importing import _CODE
    from lamar.rules.parse import _CONDITION, _HEADING

    old_heading = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
    for text in _texts(["#", " ", "a", "\t", " x"], 1):
        old, new = old_heading.match(text), _HEADING.match(text)
        assert (old and old.groups()) == (new and (new[1], new[2].rstrip().rstrip("#").rstrip())), text
    old_condition = re.compile(r"^(?:when|whenever|if)\s+([^,:]{1,120}?)\s*[,:]\s+(.+)$", re.IGNORECASE)
    for text in ("when" + t for t in _texts([" ", "a", ",", ":", "b", " ,"], 2)):
        old, new = old_condition.match(text), _CONDITION.match(text)
        if not (old and not old[1].strip()):  # a blank condition ("when  , do x") is none now
            assert (old and old.groups()) == (new and new.groups()), text
    old_bullet = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>.*\S)\s*$")
    for text in _texts(["-", " ", "1", ".", "a", "*", "\t"], 3):
        old, new = old_bullet.match(text), _BULLET.match(text)
        assert (old and old.groups()) == (new and new.groups()), text
    old_code = re.compile(r"`+([^`]+)`+")
    for text in _texts(["`", "a", " ", "``"], 4):
        assert old_code.findall(text) == _CODE.findall(text), text
    from lamar.safety.files import _DELIMITER

    old_delimiter = re.compile(r"[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?\r?")
    for text in _texts([" ", "\t", "|", "-", ":", "\r", "x", "--"], 7):
        assert bool(old_delimiter.fullmatch(text)) == bool(_DELIMITER.fullmatch(text)), text
    from lamar.safety.escapes import _READ

    old_read = re.compile(_READ.pattern.replace("(?<!\\\\)\\\\++", "\\\\+"))
    assert old_read.pattern != _READ.pattern
    for text in _texts(["\\", '"', "'", "x41", "u003c", "&lt;", "a", "%3c"], 9):
        assert [m.span() for m in old_read.finditer(text)] == [m.span() for m in _READ.finditer(text)], text
    old_query = re.compile(r"([?&][^=&#\s]*=)[^&#\s]*")
    for text in _texts(["?", "&", "=", "a", "#", " "], 5):
        assert old_query.sub(r"\1[secure]", text) == _QUERY_VALUE.sub(r"\1[secure]", text), text
    from lamar.safety.harm_table import _FORCE
    from lamar.safety.prohibitions import _HEADING as _PROHIBITION_HEADING
    from lamar.safety.prohibitions import _label, forbids

    old_force = re.compile(r"(?:--force(?!-with-lease|-if-includes)\b|\s-[a-z]*f[a-z]*\b)")
    for text in _texts([" -", "f", "u", "1", " ", "--force", "-"], 10):
        assert [m.span() for m in old_force.finditer(text)] == [m.span() for m in re.finditer(_FORCE, text)], text
    old_prohibition = re.compile(r"^ {0,3}#{1,6}\s+(.*?)[\s#]*$")
    for text in _texts(["#", " ", "never", "a", "\t", "## "], 11):
        old, new = old_prohibition.match(text), _PROHIBITION_HEADING.match(text)
        assert (old and (forbids(old[1]), _label(old[1]))) == (new and (forbids(new[1]), _label(new[1]))), text


def test_comments_go_and_code_spans_stay_as_the_old_pattern_had_them() -> None:
    from lamar.rules.parse import _uncommented

    old = re.compile(r"(`+).*?\1|<!--.*?-->", re.DOTALL)
    for text in _texts(["<!--", "-->", "`", "a", " ", "-", ">"], 6):
        text = re.sub("``+", "`", text)  # runs of one backtick: where the old pattern read code spans right
        assert old.sub(lambda found: found.group() if found.group(1) else " ", text) == _uncommented(text), text
    assert _uncommented("``a`<!-- b -->`` <!-- c -->") == "``a`<!-- b -->``  "  # a span closes on as many


def test_an_import_inside_code_is_no_import_as_the_old_pattern_had_it() -> None:
    from lamar.rules.sources import _IMPORT, _without_code

    old = re.compile(r"(`+).*?\1")
    for text in _texts(["`", "@a", "b", " ", "@"], 8):
        text = re.sub("``+", "`", text)  # runs of one backtick: where the old pattern read code spans right
        assert _IMPORT.findall(old.sub(" ", text)) == _IMPORT.findall(_without_code(text)), text
    assert _without_code("``@a`b`` @c") == "  @c"  # a span closes on a run of as many backticks


def test_a_link_whose_target_holds_brackets_reads_as_its_text() -> None:
    from lamar.rules.parse import clean

    # A route folder and a query's field name, as rules files link them.
    assert clean("Edit the [post page](src/app/[slug]/page.tsx) first") == "Edit the post page first"
    assert clean("See [open issues](https://example.com/issues?filter[state]=open).") == "See open issues."
