"""`may_hold_secret` never clears a text that `scrub` would change: every text of the scrub corpora and tests,
every cut of each, and generated labels around each secret."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar.safety import scrub
from lamar.safety.prefilter import BARE, may_hold_secret
from tests.tools import load_tool

ROOT = Path(__file__).resolve().parents[2]
COUNTS = {"texts": 0, "cleared": 0, "cuts": 0, "generated": 0}


def _strings(value: Any, seen: set[int], depth: int = 0) -> Iterator[str]:
    """Every string inside a module's data: lists, mappings, dataclasses (a corpus case's text and secret)."""
    if depth > 6 or id(value) in seen:
        return
    if isinstance(value, str):
        yield value
        return
    seen.add(id(value))
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key, seen, depth + 1)
            yield from _strings(item, seen, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item, seen, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _strings(getattr(value, field.name), seen, depth + 1)


def _corpus() -> list[str]:
    """The texts of the scrub corpora (tests/safety's format modules and what tools/*corpus*.py read) and every
    string the scrub tests write, as literals or as module data built from them."""
    sys.path.insert(0, str(ROOT / "tools"))
    texts: set[str] = set()
    files = sorted((ROOT / "tests" / "safety").glob("*.py")) + sorted((ROOT / "tools").glob("*corpus*.py"))
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        texts.update(
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
        if path.name in {"conftest.py", "__init__.py", Path(__file__).name}:
            continue
        name = f"tests.safety.{path.stem}" if path.parent.name == "safety" else path.stem
        module = importlib.import_module(name)
        texts.update(_strings(dict(vars(module)), set()))
    return sorted(texts)


CORPUS = _corpus()


def _unchanged(text: str) -> bool:
    return scrub(text) == (text, [])


def _check(text: str, counted: str) -> None:
    COUNTS[counted] += 1
    if not may_hold_secret(text):
        COUNTS["cleared"] += 1
        assert _unchanged(text), f"cleared by the pre-filter but scrubbed: {text!r}"


def test_every_corpus_text_the_pre_filter_clears_is_one_scrub_leaves_alone() -> None:
    assert len(CORPUS) > 5_000  # the corpora were found
    for text in CORPUS:
        _check(text, "texts")


def test_every_cut_of_every_secret_text_is_judged_as_scrub_judges_it() -> None:
    # A cut moves a text across the shortest match of a rule, where the widths the pre-filter reads matter.
    for text in CORPUS:
        if len(text) > 400 or _unchanged(text):
            continue
        for at in range(1, len(text)):
            _check(text[:at], "cuts")
            _check(text[at:], "cuts")


@pytest.mark.parametrize("seed", range(4))
def test_labels_made_of_corpus_words_are_judged_as_scrub_judges_them(seed: int) -> None:
    rng = random.Random(seed)
    words = [w for text in CORPUS for w in text.split() if len(w) < 80]
    for _ in range(3_000):
        label = rng.choice(["_", "-", " ", "/", ".", ":", "="]).join(rng.sample(words, rng.randint(1, 4)))
        _check(label, "generated")


def test_ordinary_labels_are_cleared_without_scrubbing() -> None:
    for label in (
        "build_fails",
        "swift",
        "trace",
        "bench",
        "p",
        "src/lamar/engine.py",
        "deploy to prod",
        "ImportError",
        "tests/test_engine.py",
        "fix-flaky-test",
        "v2 rollout",
    ):
        assert not may_hold_secret(label), label
    for secret in (
        "the password is hunter2",
        "ghp_" + "a1B2c3D4e5" * 4,
        "PGPASSWORD=x1y2z3",
        "dG9rZW49Z2hwX2ExQjJjM0Q0ZTVhMUIyYzNENGU1YTFCMmMzRDRlNWExQjJjM0Q0ZTU=",
    ):
        assert may_hold_secret(secret), secret


def test_the_committed_needle_table_is_what_the_rules_say() -> None:
    tool = load_tool("needle_table")
    committed = (ROOT / "lamar" / "safety" / "needle_table.py").read_text(encoding="utf-8")
    assert committed == tool.render(), "run python tools/needle_table.py"
    # A rule without needles needs a pattern of its own in BARE: a new one fails here until it has one.
    assert [width for _, width in tool.tables()[2]] == [width for width, _ in BARE]


def test_the_key_words_a_context_reads_are_those_of_the_rules() -> None:
    from lamar.safety.assignments import KEY_NEEDLES
    from lamar.safety.context_values import KEY_WORDS

    assert [(word, True) for word in KEY_WORDS] == list(KEY_NEEDLES.found)


def test_print_the_counts() -> None:
    print(f"\npre-filter: {COUNTS}")
