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
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = {"python", "py", "python3"}
SKIP = re.compile(r"^<!--\s*skip:\s*(.*?)\s*-->$")
OUTPUT = "<!-- output -->"
FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)")


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


def run(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    """Run one block alone: a fresh interpreter, `folder` as cwd and as HOME (so `~` stays inside)."""
    env = dict(os.environ, HOME=str(folder), MPLBACKEND="Agg")
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
