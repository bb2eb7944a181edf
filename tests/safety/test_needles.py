"""Needles let `scrub` skip rules and starts that cannot match: it must find and replace exactly what the
plain scan of every rule at every position does, on the repository, the secret fixtures and random text."""

from __future__ import annotations

import base64
import random
import re
import string
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from lamar.safety import scrub
from lamar.safety import secrets as secrets_module
from lamar.safety.assignments import KEY_NEEDLES, secret_key_kind
from lamar.safety.needles import Haystack, Needles, fold, needles
from tests.safety import heldout_corpus, test_credential_table, test_scrub_secrets, test_secrets_missed

ROOT = Path(__file__).resolve().parents[2]
ALL_RULES = (*secrets_module.RULES, secrets_module._BODY, secrets_module._RANDOM)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _fixtures() -> list[str]:
    """Every secret and text the safety tests hold at module level, and fresh fakes of each format."""
    found = [text for module in (heldout_corpus, test_credential_table, test_scrub_secrets)
             for name, value in sorted(vars(module).items()) if name.isupper() for text in _strings(value)]
    test_credential_table._rng.seed(4242)
    found += [make() for _, make in test_credential_table.FORMATS for _ in range(2)]
    found += [text for sample in test_secrets_missed.samples(random.Random(4242)) for text in sample[1:]]
    return sorted(set(found))


FIXTURES = _fixtures()
WORDS = ("the", "build", "fails", "after", "a", "bump", "clear", "cache", "password", "Password", "PASSWORD", "token",
         "secret", "api_key", "apiKey", "Bearer", "Authorization:", "key", "value", "name", "login", "creds",
         "https://", "u:p@h.io", "?token=", "&code=", "export", "DB_PASSWORD", "is", "was", "use", "the password is",
         "--password", "machine", "auth=(", "Cookie:", "curl -u", "docker login -p", "AKIA", "sk-", "ghp_", "xoxb-",
         "eyJ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "Private-Lines: 1",
         "\u200b", "\u017f", "\u212a", "\u0130", "\u0131", "é", "\u0301", "ＰＡＳＳＷＯＲＤ", "3600", "1f2e3d",
         "x" * 40)
GLUE = (" ", " ", " ", "", "\n", "=", ": ", '"', "'", ", ", "/", "\t")


def _disguised(secret: str, rng: random.Random) -> str:
    how = rng.randrange(7)
    if how == 0:
        return secret[::-1]
    if how == 1:
        cut = rng.randrange(1, max(2, len(secret)))
        return secret[:cut] + rng.choice((" ", "\n", "\u200b")) + secret[cut:]
    if how == 2:
        return base64.b64encode(secret.encode()).decode()
    if how == 3:
        return secret.encode().hex()
    if how == 4:
        return "".join(f"%{ord(c):02x}" if rng.random() < 0.3 and ord(c) < 128 else c for c in secret)
    return secret


def _random_text(seed: int) -> str:
    rng = random.Random(seed)
    pieces = []
    for _ in range(rng.randrange(20, 120)):
        roll = rng.random()
        if roll < 0.15:
            pieces.append(_disguised(rng.choice(FIXTURES), rng))
        elif roll < 0.25:
            pieces.append("".join(rng.choice(string.ascii_letters + string.digits + "+/_-")
                                  for _ in range(rng.randrange(8, 60))))
        else:
            pieces.append(rng.choice(WORDS))
        pieces.append(rng.choice(GLUE))
    return "".join(pieces)


def _repository() -> list[str]:
    files = [*sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("lamar/safety/*.py")),
             *sorted(ROOT.glob("tests/safety/*.py"))]
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import scrub_false_positives  # tools/: the corpus it counts false positives on
    finally:
        sys.path.remove(str(ROOT / "tools"))
    files += scrub_false_positives.corpus()[::10]
    return [path.read_text(encoding="utf-8") for path in dict.fromkeys(files)]


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule scans all of every text from every position, as before needles."""
    monkeypatch.setattr(Haystack, "holds", lambda self, found: True)
    monkeypatch.setattr(Haystack, "search", lambda self, pattern, found, pos: pattern.search(self.text, pos))


@pytest.mark.parametrize("part", ["repository", "fixtures", "random"])
def test_scrub_finds_and_replaces_what_the_plain_scan_does(part: str, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = {"repository": _repository, "fixtures": lambda: FIXTURES,
             "random": lambda: [_random_text(seed) for seed in range(300)]}[part]()
    fast = [scrub(text) for text in texts]
    _reference(monkeypatch)
    slow = [scrub(text) for text in texts]
    differ = [i for i, (a, b) in enumerate(zip(fast, slow, strict=True)) if a != b]
    assert differ == [], texts[differ[0]] if differ else None
    found = sum(bool(kinds) for _, kinds in slow)
    assert found >= {"repository": 20, "fixtures": len(FIXTURES) // 2, "random": 260}[part], found


def _hits(found: Needles, text: str, start: int, end: int) -> bool:
    folded = fold(text)
    last = start + found.reach if found.reach is not None else end - 1
    return any((folded if icase else text).find(needle, start, end) in range(start, last + 1)
               for needle, icase in found.found)


def test_every_match_of_a_rule_holds_a_needle_within_its_reach() -> None:
    texts = FIXTURES + [_random_text(seed) for seed in range(400, 600)]
    checked = 0
    for rule in ALL_RULES:
        found = needles(rule.pattern)
        if found is None:
            continue
        for text in texts:
            for match in rule.pattern.finditer(text):
                assert _hits(found, text, match.start(), match.end()), (rule.kind, match.group(0))
                checked += 1
    assert checked > 500, checked


def test_a_key_that_names_a_credential_holds_a_key_needle() -> None:
    rng = random.Random(7)
    words = ["password", "passwd", "pass", "pwd", "pw", "passphrase", "secret", "token", "apikey", "credential",
             "credentials", "privatekey", "secretkey", "accesskey", "authkey", "pat", "auth", "api", "key", "access",
             "private", "signing", "client", "basic", "app", "db", "max", "user", "id", "url", "tokens", "my"]
    keys = ["_".join(rng.choice(words) for _ in range(rng.randrange(1, 4))) for _ in range(5000)]
    keys += [key.upper() for key in keys[:1000]]
    keys += [re.sub(r"_(\w)", lambda m: m.group(1).upper(), key) for key in keys[:1000]]
    named = [key for key in keys if secret_key_kind(key) is not None]
    assert len(named) > 1000
    assert [key for key in named if not any(needle in key.lower() for needle, _ in KEY_NEEDLES.found)] == []


def test_folding_keeps_offsets_and_every_ignorecase_letter() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    folded = fold(every)
    assert len(folded) == len(every)
    twins = {c: m for m in string.ascii_lowercase for c in re.findall(f"(?i){m}", every)}
    assert len(twins) > 52
    assert [c for c, letter in twins.items() if folded[every.index(c)] != letter] == []


def test_needles_are_read_from_the_pattern() -> None:
    assert needles(re.compile(r"(?i)\btoken\s*=\s*(?P<secret>\w+)")) == Needles((("token", True),), 0)
    assert needles(re.compile(r"(?P<secret>ghp_[A-Za-z0-9]{36,})")) == Needles((("ghp_", False),), 0)
    # "pass" stands for all three; a class or a lone "." is no needle; an unbounded prefix has no reach.
    assert needles(re.compile(r"(?:password|passwd|passphrase)=\w+")) == Needles((("pass", False),), 0)
    assert needles(re.compile(r"[A-Za-z]+\.\w+")) is None
    assert needles(re.compile(r"\w+@secret")) == Needles((("@secret", False),), None)


def _full_scans(text: str) -> int:
    """How many scans `scrub(text)` asks of the regex engine (a `match` at one start is no scan)."""
    count = 0

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "c_call" and getattr(arg, "__name__", "") in {"search", "finditer", "findall", "sub"}:
            count += isinstance(getattr(arg, "__self__", None), re.Pattern)
    sys.setprofile(watch)
    try:
        scrub(text)
    finally:
        sys.setprofile(None)
    return count


def test_ordinary_text_is_not_scanned_by_every_rule() -> None:
    prose = "When the build fails after a bump, clear DerivedData and rebuild it from the start. " * 200
    log = "2026-11-30T17:00:01Z INFO GET /api/v1/items?page=2 200 12ms /usr/lib/python3.11/x.py\n" * 200
    # Most rules hold a literal ("ghp_", "password", "://") that such text lacks: they are skipped.
    assert _full_scans(prose) <= 15
    assert _full_scans(log) <= 30
