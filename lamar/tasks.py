"""The coarse class of a task and the first recognisable error in its words, from plain regular
expressions: what the Claude Code hooks and `lamar mcp` derive from a prompt, and what a rule's condition names."""

from __future__ import annotations

import re

_FAILS = r"(?:fail\w*|error\w*|broke\w*|break\w*|crash\w*|red|does\s*n[o']?t\s+(?:work|pass|compile|build)|won'?t)"
# Between the two words of a rule: the same line, and near, since an unbounded gap makes each
# failure word of a long pasted line scan the rest of it (a pasted log would take seconds).
_GAP = r".{0,200}"
# A test named by its function or file (test_cart, cart_test.go) is a test word too.
_TEST = r"(?:tests?|test_\w+|\w+_tests?|pytest|jest|vitest|rspec|unittest|spec|xctest|test\s+suite)"
# A linter that "reports" or "flagged" a code: the verb, not "add a report" or "a --check flag".
# Checked in order; the first that matches names the task. (name, pattern)
TASK_RULES: tuple[tuple[str, str], ...] = (
    ("tests_fail", (rf"(?i)\b{_TEST}\b{_GAP}\b{_FAILS}"
                   rf"|\b{_FAILS}{_GAP}\b(?:tests?|specs?)\b")),
    ("lint_fails", (rf"(?i)\b(?:lint\w*|ruff|eslint|flake8|pylint|mypy|clippy|tsc|type[- ]?check\w*|prettier"
                   rf"|black|swiftlint|rubocop)\b{_GAP}\b(?:{_FAILS}|warn\w*|complain\w*|report(?:s|ed|ing)\b"
                   rf"|flag(?:s|ged|ging)\b)")),
    ("build_fails", (rf"(?i)\b(?:build\w*|compil\w*|link\w*|xcodebuild|cargo|gradle|maven|webpack|vite|make)\b"
                    rf"{_GAP}\b{_FAILS}|\b{_FAILS}{_GAP}\b(?:to\s+)?(?:build|compile)\b")),
    ("deploy_fails", (rf"(?i)\b(?:deploy\w*|release|ci|pipeline|github\s+actions|kubernetes|k8s|helm|docker)\b"
                     rf"{_GAP}\b{_FAILS}")),
    ("refactor", (r"(?i)\b(?:refactor\w*|rename|clean\s*up|restructure|extract|simplify|reorgani[sz]e|split|"
                 r"deduplicate|move)\b")),
    ("question", (r"(?i)^\s*(?:what|why|how|where|when|which|who|can|could|does|do|is|are|should|explain)\b"
                 r"|\?\s*$")),
    ("feature", r"(?i)\b(?:add|implement|create|build|support|write|make|introduce|enable|allow|generate)\b"),
)
FALLBACK_TASK = "other"

# Recognisable errors, checked in order; group 1 is the error class.
ERROR_RULES: tuple[str, ...] = (
    r"error\[(E\d{4})\]",                                  # rustc
    r"\b(TS\d{4,5})\b",                                    # TypeScript
    r"\b(CS\d{4})\b",                                      # C#
    r"\b(SQLSTATE\[?\w{5}\]?)",                            # SQL
    r"\b((?:[A-Z][a-z0-9]+)+(?:Error|Exception|Fault))\b",  # Python, Java, JS, Swift, ... exception names
    r"\b(SIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL))\b",            # signals
    r"\b(E\d{3,4}|F\d{3}|W\d{3})\b(?=[: ])",               # flake8 / ruff codes before ':' or ' '
    r"\b(exit (?:code|status) \d+)\b",                     # a failing command
)
PROMPT_SCAN = 20_000  # characters of a prompt the rules look at (a pasted log can be huge)
# An error class is a label kept with every episode, and a context holds at most 4,000 characters
# (lamar.experience.MAX_CONTEXT_CHARS): a rule matching a whole pasted line yields its head. Sleep
# shows a model this much of a context value.
ERROR_CLASS_CHARS = 200
# The tasks a rule's condition names as plainly as a prompt does ("When a test fails"); "add", "move" say less.
FAILING_TASKS = frozenset(["tests_fail", "lint_fails", "build_fails", "deploy_fails"])


def task_class(prompt: str, extra_rules: tuple[tuple[str, str], ...] = ()) -> str:
    """The coarse class of a prompt: the first rule (the config's, then the built-in ones) that matches.

    >>> task_class("the tests fail after the upgrade"), task_class("the tests are red", (("red", r"\\bred\\b"),))
    ('tests_fail', 'red')
    """
    text = prompt[:PROMPT_SCAN]
    for name, pattern in (*extra_rules, *TASK_RULES):
        if re.search(pattern, text):
            return name
    return FALLBACK_TASK


def error_class(prompt: str, extra_rules: tuple[str, ...] = ()) -> str | None:
    """The first recognisable error in a prompt (a compiler code, an exception name), or None.

    >>> error_class("tsc stops with error TS2345 in app.ts"), error_class("KeyError: 'user'"), error_class("hello")
    ('TS2345', 'KeyError', None)
    """
    text = prompt[:PROMPT_SCAN]
    for pattern in (*extra_rules, *ERROR_RULES):
        match = re.search(pattern, text)
        if match:
            found = match.group(1) if match.groups() else match.group(0)
            return None if found is None else found[:ERROR_CLASS_CHARS]
    return None


__all__ = ["ERROR_CLASS_CHARS", "ERROR_RULES", "FAILING_TASKS", "FALLBACK_TASK", "PROMPT_SCAN", "TASK_RULES",
           "error_class", "task_class"]
