"""Find the code blocks of the README and the docs, by the convention CONTRIBUTING.md documents.

A ```python block runs alone, in a fresh temporary folder, in a fresh interpreter. The line
`<!-- skip: reason -->` just before it keeps it from running. A ```text block right after the
line `<!-- output -->` is what the python block before it prints; `…` in one of its lines
matches any text within that line. Other blocks (console, bash, json, ...) are only read.

`python tests/docblocks.py --update FILE.md ...` rewrites the output blocks of those pages from
a real run (a block with `…` in it is left alone: its figures vary by design).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYTHON = {"python", "py", "python3"}
SKIP = re.compile(r"^<!--\s*skip:\s*(.*?)\s*-->$")
OUTPUT = "<!-- output -->"
FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)")
# What a page tells its reader to install, for its blocks: its extra ("" for none), and any package its
# text adds with `pip install`. Its blocks run with every other installed package failing to import.
ONLY = {"README.md": ("", ()), "CONTRIBUTING.md": ("", ()), "docs/install.md": ("", ()),
        "docs/langchain.md": ("langchain", ("numpy",)), "docs/langgraph.md": ("langgraph", ()),
        "docs/llamaindex.md": ("llamaindex", ()),
        "docs/claude-code.md": ("claude-code", ()), "docs/mcp.md": ("mcp", ()), "docs/postgres.md": ("postgres", ()),
        **{f"docs/{page}.md": ("", ()) for page in
           ("cli", "context", "guarantees", "gym", "index", "rules", "speed", "stores", "whatif")}}
# Pages whose blocks need different extras, each named beside its block: they run with every package.
MIXED = {"docs/sleep.md"}


@dataclasses.dataclass
class Block:
    """One fenced block: where it is, its language, its code, and its markers."""

    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    skip: str | None = None  # the reason, when `<!-- skip: reason -->` precedes it
    output: Block | None = None  # the ```text block after `<!-- output -->`
    marked_output: bool = False  # `<!-- output -->` precedes this block

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md, CONTRIBUTING.md and every Markdown page under docs/."""
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]


def parse(path: Path) -> list[Block]:
    """Every fenced block of one page, with the skip and output markers tied to it.

    Raises:
        ValueError: a fence is never closed, or a marker stands where it means nothing.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    marker: str | None = None  # the last non-blank line outside blocks
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            if lines[i].strip():
                marker = lines[i].strip()
            i += 1
            continue
        indent, ticks, lang = match.groups()
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            text = lines[i]
            body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
            i += 1
        if i == len(lines):
            raise ValueError(f"{path.name}:{start + 1}: this ``` block is never closed")
        i += 1
        block = Block(path, start + 1, lang.lower(), "\n".join(body) + "\n")
        skip = SKIP.match(marker or "")
        if skip:
            if not skip.group(1):
                raise ValueError(f"{block.where}: `<!-- skip: reason -->` needs its reason")
            block.skip = skip.group(1)
        if marker == OUTPUT:
            block.marked_output = True
            previous = blocks[-1] if blocks else None
            if lang != "text" or previous is None or previous.lang not in PYTHON or previous.output:
                raise ValueError(f"{block.where}: `<!-- output -->` must sit between a python block "
                                 "and the ```text block of what it prints")
            previous.output = block
        blocks.append(block)
        marker = None
    return blocks


def python_blocks() -> list[Block]:
    return [b for path in pages() for b in parse(path) if b.lang in PYTHON]


@functools.cache
def installed_by(extra: str, *also: str) -> frozenset[str]:
    """The distributions `pip install -e ".[extra]" *also` brings, by their requirements as installed here."""
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    todo = [Requirement(r) for r in [*(wanted[extra] if extra else ()), *also]]
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        for want in ("", *sorted(req.extras)):
            if (name, want) in seen:
                continue
            seen.add((name, want))
            if name == "lamar":  # the extras that name others: lamar[langgraph,postgres]
                todo += [Requirement(r) for r in wanted.get(want, ())]
                continue
            try:
                requires = importlib.metadata.requires(name) or []
            except importlib.metadata.PackageNotFoundError:
                continue  # not for this platform or this Python
            found.add(name)
            todo += [r for r in map(Requirement, requires)
                     if r.marker is None or r.marker.evaluate({"extra": want})]
    return frozenset(found)


def absent_for(page: Path) -> dict[str, str]:
    """The environment that makes a block of `page` find only the packages its reader installed."""
    return dict(_absent_for(page.relative_to(ROOT).as_posix()))


_modules = functools.cache(importlib.metadata.packages_distributions)  # reads every package: a second


@functools.cache
def _absent_for(where: str) -> tuple[tuple[str, str], ...]:
    if where not in ONLY:
        return ()
    extra, also = ONLY[where]
    kept = installed_by(extra, *also)
    absent = {module for module, dists in _modules().items()
              if module.isidentifier() and not any(canonicalize_name(d) in kept | {"lamar", "pip"} for d in dists)}
    return (("LAMAR_DOCS_ABSENT", ",".join(sorted(absent))),
            ("PYTHONPATH", os.pathsep.join([str(ROOT / "tests" / "onlyextra"),
                                            *filter(None, [os.environ.get("PYTHONPATH")])])),
            ("LAMAR_DOCS_WHY", f"{where} tells its reader to install only "
                               + " ".join([f"lamar[{extra}]" if extra else "lamar", *also])))


def run(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    """Run one block alone: a fresh interpreter, `folder` as cwd and as HOME (so `~` stays inside),
    a temporary folder of its own removed after it (so what it makes with `tempfile` is not left in
    /tmp), and, for a page in ONLY, only the packages the page tells its reader to install."""
    with tempfile.TemporaryDirectory(prefix="lamar-docblock-") as temporary:
        env = dict(os.environ, HOME=str(folder), TMPDIR=temporary, MPLBACKEND="Agg", **absent_for(block.path))
        return subprocess.run([sys.executable, "-c", block.code], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=600, check=False)


def matches(expected: str, actual: str) -> bool:
    """Line by line equality, where `…` in an expected line matches any text in that line."""
    want = [line.rstrip() for line in expected.rstrip("\n").splitlines()]
    got = [line.rstrip() for line in actual.rstrip("\n").splitlines()]
    if len(want) != len(got):
        return False
    for w, g in zip(want, got, strict=True):
        pattern = ".*".join(re.escape(part) for part in w.split("…"))
        if not re.fullmatch(pattern, g):
            return False
    return True


def update(path: Path) -> int:
    """Rewrite the output blocks of `path` from a real run; returns how many changed."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = 0
    for block in reversed(parse(path)):  # from the bottom, so earlier line numbers stay put
        out = block.output
        if block.lang not in PYTHON or out is None or "…" in out.code or block.skip:
            continue
        with tempfile.TemporaryDirectory() as folder:
            done = run(block, Path(folder))
        if done.returncode != 0:
            print(f"{block.where}: failed\n{done.stderr}", file=sys.stderr)
            continue
        if done.stdout != out.code:
            n_body = len(out.code.splitlines())
            lines[out.line:out.line + n_body] = done.stdout.splitlines(keepends=True)
            changed += 1
    path.write_text("".join(lines), encoding="utf-8")
    return changed


if __name__ == "__main__":
    if sys.argv[1:2] != ["--update"] or len(sys.argv) < 3:
        sys.exit("usage: python tests/docblocks.py --update FILE.md ...")
    for name in sys.argv[2:]:
        print(f"{name}: {update(Path(name).resolve())} output block(s) rewritten")
