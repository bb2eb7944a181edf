"""How long each regular expression Lamar runs over text it does not control takes as the text grows.

    python tools/regex_cost.py                          # every pattern; the worst crafted text of each
    python tools/regex_cost.py --only secrets,fence     # patterns whose name holds one of these
    python tools/regex_cost.py --sizes 1000,10000,100000,1000000 --budget 5

Every compiled pattern at the top of a module of lamar/ and integrations/ (in tuples and dicts too) is
run with finditer over text built from its own structure: each repeat pumped long with what leads to
it in front, that prefix and pump repeated as near misses, and runs of every character it names.
The table shows, for each pattern's slowest text, the seconds at each size and "growth", how much
longer ten times the text takes at the largest sizes measured: 10 is linear, 100 quadratic. A size
whose time would pass --budget seconds is estimated from the growth and marked "~".

A row is the pattern searched through the whole text. Code that only matches a pattern at one place (a
line's start, one word) or reads it over folded text (the injection screen folds runs of white space)
pays far less: such rows show the pattern alone, and the code around it decides what it costs.
"""

from __future__ import annotations

import argparse
import importlib
import math
import pkgutil
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lamar", "lamar_claude_code", "lamar_mcp", "lamar_langchain", "lamar_langgraph", "lamar_llamaindex")
# Modules whose patterns only read Lamar's own files or command lines, never text from outside.
_OWN_TEXT = ("lamar.bench", "lamar.gym", "lamar.cli.parser", "lamar.store.json_format", "lamar.store.json_file")
_MARK = "\uffff"
Shape = Callable[[int], str]
_SCREEN = 250  # characters: quadratic text stands out already, and cubic text is still quick


@dataclass
class Row:
    name: str
    shape: str
    seconds: dict[int, float]
    estimated: set[int]
    growth: float = float("nan")  # time ratio per tenfold text between the two largest sizes measured


def patterns(only: list[str]) -> dict[str, re.Pattern[str]]:
    """Every str pattern held at module level (directly or in containers), by module.NAME[index]."""
    sys.path[:0] = [str(ROOT), str(ROOT / "integrations")]
    found: dict[str, re.Pattern[str]] = {}
    seen: set[tuple[str, int]] = set()

    def walk(name: str, value: Any, depth: int) -> None:
        if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            if (value.pattern, value.flags) not in seen:
                seen.add((value.pattern, value.flags))
                found[name] = value
        elif depth < 3 and isinstance(value, (tuple, list, frozenset, set)):
            for i, item in enumerate(value):
                walk(f"{name}[{i}]", item, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for key, item in value.items():
                walk(f"{name}[{key!r}]", item, depth + 1)

    for package in PACKAGES:
        try:
            root = importlib.import_module(package)
        except ImportError:
            continue
        names = [package] + [m.name for m in pkgutil.walk_packages(getattr(root, "__path__", []), package + ".")]
        for module_name in names:
            if (module_name.startswith(_OWN_TEXT) or module_name.endswith("__main__")
                    or (only and not any(o in module_name for o in only))):
                continue
            try:
                module = importlib.import_module(module_name)
            except ImportError:  # an integration whose framework is not installed
                module = None
            for attr, value in vars(module).items() if module else ():
                walk(f"{module_name}.{attr}", value, 0)
    return found


def _char(items: list[tuple[Any, Any]], negate: bool = False) -> str:
    """A character of a class: a letter or digit when it has one, since those are what runs are made of."""
    chars: list[int] = []
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            chars.append(av)
        elif op is sre.RANGE:
            chars.extend(range(av[0], min(av[1], av[0] + 64) + 1))
        elif op is sre.CATEGORY:
            chars.extend(ord(c) for c in {sre.CATEGORY_DIGIT: "1", sre.CATEGORY_SPACE: " ", sre.CATEGORY_WORD: "a",
                                           sre.CATEGORY_NOT_DIGIT: "a", sre.CATEGORY_NOT_SPACE: "a",
                                           sre.CATEGORY_NOT_WORD: " "}.get(av, "a"))
    if negate:
        banned = set(chars)
        return next(c for c in "a1 .-_/=:x\n" if ord(c) not in banned)
    for c in chars:
        if chr(c).isalnum():
            return chr(c)
    return chr(chars[0]) if chars else "a"


def _sample(items: Any, target: Any, groups: dict[int, str]) -> str:
    """Text the pattern matches (repeats at their least, one at least once), with `target` as the mark."""
    out: list[str] = []
    for op, av in items:
        if op is sre.LITERAL:
            out.append(chr(av))
        elif op is sre.NOT_LITERAL:
            out.append("a" if av != ord("a") else "b")
        elif op is sre.ANY:
            out.append("a")
        elif op is sre.IN:
            out.append(_char(av))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, _, body = av
            if (op, av) is target or id(av) == id(target):
                out.append(_MARK)
            else:
                out.append(_sample(body, target, groups) * max(low, 1 if _holds(body, target) else low))
        elif op is sre.SUBPATTERN:
            text = _sample(av[-1], target, groups)
            if av[0]:
                groups[av[0]] = text
            out.append(text)
        elif op is sre.ATOMIC_GROUP:
            out.append(_sample(av, target, groups))
        elif op is sre.BRANCH:
            branch = next((b for b in av[1] if _holds(b, target)), av[1][0])
            out.append(_sample(branch, target, groups))
        elif op is sre.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is sre.GROUPREF_EXISTS:
            out.append(_sample(av[1], target, groups))
    return "".join(out)


def _holds(items: Any, target: Any) -> bool:
    return any(id(node) == id(target) for node in _nodes(items))


def _nodes(items: Any) -> Iterator[Any]:
    """Every operand tuple in the tree, repeats' included (their identity names them as targets)."""
    for op, av in items:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            yield av
            yield from _nodes(av[2])
        elif op is sre.SUBPATTERN:
            yield from _nodes(av[-1])
        elif op is sre.ATOMIC_GROUP:
            yield from _nodes(av)
        elif op is sre.BRANCH:
            for branch in av[1]:
                yield branch
                yield from _nodes(branch)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            yield from _nodes(av[1])
        elif op is sre.GROUPREF_EXISTS:
            yield from _nodes(av[1])
            if av[2]:
                yield from _nodes(av[2])


def _characters(items: Any) -> set[str]:
    chars: set[str] = set()
    for op, av in items:
        if op is sre.LITERAL:
            chars.add(chr(av))
        elif op is sre.IN:
            chars.add(_char(av))
            chars.update(chr(a) for o, a in av if o is sre.LITERAL)
    for node in _nodes(items):
        if isinstance(node, tuple) and len(node) == 3 and isinstance(node[2], sre_parse.SubPattern):
            chars |= _characters(node[2])
        elif isinstance(node, sre_parse.SubPattern):
            chars |= _characters(node)
    return chars


def _fill(unit: str) -> Shape:
    return lambda n: (unit * (n // max(len(unit), 1) + 1))[:n]


def shapes(pattern: re.Pattern[str]) -> dict[str, Shape]:
    """Crafted texts for one pattern, by a short description."""
    tree = sre_parse.parse(pattern.pattern, pattern.flags)
    out: dict[str, Shape] = {}
    repeats = [node for node in _nodes(tree) if isinstance(node, tuple) and len(node) == 3
               and isinstance(node[2], sre_parse.SubPattern)]
    for node in repeats:
        try:
            prefix, suffix = _sample(tree, node, {}).split(_MARK, 1)
        except ValueError:
            continue
        pump = _sample(node[2], None, {}) or ""
        if not pump:
            continue
        out[f"{prefix[-12:]!r}+{pump!r}*n"] = lambda n, p=prefix, u=pump: p + _fill(u)(max(n - len(p), 0))
        out[f"({prefix[-12:]!r}+{pump!r})*n"] = _fill(prefix + pump)
        out[f"({prefix[-12:]!r}+{pump!r}*4)*n"] = _fill(prefix + pump * 4)
        out[f"{pump!r}*n"] = _fill(pump)
        # A character the pump cannot take ends the run, so a pattern anchored at the end must give back.
        for stop in ("\x00", "a", "!"):
            out[f"{prefix[-12:]!r}+{pump!r}*n+{stop!r}"] = lambda n, p=prefix, u=pump, z=stop: (
                p + _fill(u)(max(n - len(p) - 1, 0)) + z)
        if suffix:
            out[f"({prefix[-12:]!r}+{pump!r}+{suffix[:-1][:12]!r})*n"] = _fill(prefix + pump + suffix[:-1])
    whole = _sample(tree, None, {})
    for cut in {len(whole) - 1, len(whole) // 2, 1}:
        if 0 < cut < len(whole):
            out[f"{whole[:cut][:24]!r}*n"] = _fill(whole[:cut])
            out[f"({whole[:cut][:24]!r}+' ')*n"] = _fill(whole[:cut] + " ")
    for char in sorted(_characters(tree)):
        out[f"{char!r}*n"] = _fill(char)
    return out


def _seconds(pattern: re.Pattern[str], text: str, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        # CPU time, not wall time: other work on a shared machine would otherwise read as growth.
        start = time.process_time()
        for _match in pattern.finditer(text):
            pass
        best = min(best, time.process_time() - start)
    return best


def measure(name: str, pattern: re.Pattern[str], sizes: list[int], budget: float) -> Row:
    """The crafted text slowest on short text, then timed at each size while the growth so far says it
    fits the budget (a size past it is guessed from that growth)."""
    screened = sorted(((_seconds(pattern, make(_SCREEN), 1), label, make)
                       for label, make in shapes(pattern).items()), key=lambda s: s[0], reverse=True)
    # Noise on short text can hide the worst text behind a close second: the top few are timed longer.
    worst: tuple[float, str, Shape] = (-1.0, "", _fill("a"))
    for _, label, make in screened[:5]:
        seconds = _seconds(pattern, make(_SCREEN * 4), 1)
        if seconds > worst[0]:
            worst = (seconds, label, make)
    _, label, make = worst
    known = {_SCREEN: _seconds(pattern, make(_SCREEN)), _SCREEN * 4: _seconds(pattern, make(_SCREEN * 4))}
    row = Row(name, label, {}, set())
    for size in sizes:
        low, high = sorted(known)[-2:]
        growth = max(known[high], 1e-7) / max(known[low], 1e-7)
        row.growth = growth ** math.log(10, high / low)
        guess = known[high] * max(growth, 1.0) ** math.log(size / high, high / low) if size > high else 0.0
        if row.estimated or guess > budget:
            row.seconds[size] = guess
            row.estimated.add(size)
            continue
        row.seconds[size] = known[size] = _seconds(pattern, make(size))  # best of three: a busy machine
    low, high = sorted(known)[-2:]
    row.growth = (max(known[high], 1e-7) / max(known[low], 1e-7)) ** math.log(10, high / low)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--only", default="", help="comma-separated parts of module names to keep")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="text lengths in characters")
    parser.add_argument("--budget", type=float, default=5.0, help="seconds one run may take before sizes are guessed")
    parser.add_argument("--all", action="store_true", help="print every pattern, not only those above growth 15")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    found = patterns([o for o in args.only.split(",") if o])
    head = f"{'pattern':58} {'slowest text':40}" + "".join(f" {n:>9}" for n in sizes) + f" {'growth':>7}"
    print(head)
    rows = []
    for name, pattern in found.items():
        print(f"{name} ...", file=sys.stderr, flush=True)
        row = measure(name, pattern, sizes, args.budget)
        rows.append(row)
        if args.all or not row.growth < 15:
            cells = "".join(f" {('~' if n in row.estimated else '') + f'{row.seconds[n]:.4f}':>9}" for n in sizes)
            print(f"{name[-58:]:58} {row.shape[:40]:40}{cells} {row.growth:7.1f}", flush=True)
    slow = sum(1 for r in rows if not r.growth < 15)
    print(f"{len(rows)} patterns; {slow} grow faster than linear (growth over 15 at the largest sizes measured)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
