"""tools/remeasure.py: its list matches what the docs show, and its runner records each command's output."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from tests.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
_COMMAND = re.compile(r"^(env -u \S+ )*python (-m lamar|tools/)")


def _shown(lines: list[str]) -> list[str]:
    """The commands a stretch of Markdown shows, in order: inline code in prose (a span may wrap), the
    lines of console and bash blocks and the `$ ` lines of plain ones (without `$ ` or a trailing
    comment), whitespace collapsed."""
    found: list[str] = []
    prose: list[str] = []
    fence = ""
    for line in [*lines, ""]:
        if line.lstrip().startswith("```"):
            if not fence:
                found += [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", "\n".join(prose))]
                prose = []
            fence = "" if fence else line.strip()[3:] or "plain"
        elif fence in ("console", "bash") or (fence == "plain" and line.startswith("$ ")):
            found.append(" ".join(line.strip().removeprefix("$ ").split("  #")[0].split()))
        elif not fence:
            prose.append(line)
    found += [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", "\n".join(prose))]
    return [c for c in found if _COMMAND.match(c)]


def _sections(doc: str) -> dict[str, list[list[str]]]:
    """Each heading of a page (without its #s) and the lines under it up to the next heading, once per
    place it stands (a heading such as "Measurement" may stand twice)."""
    sections: dict[str, list[list[str]]] = {}
    current: list[str] = []
    fence = False
    for line in (ROOT / doc).read_text(encoding="utf-8").splitlines():
        fence ^= line.lstrip().startswith("```")
        if not fence and re.match(r"#+ ", line):
            current = []
            sections.setdefault(line.lstrip("#").strip(), []).append(current)
        else:
            current.append(line)
    return sections


def test_every_command_stands_in_the_section_it_names() -> None:
    tool = load_tool("remeasure")
    missing = [f"{m.doc} {m.heading!r}: {m.command}" for m in tool.MEASUREMENTS
               if not any(m.command in _shown(lines) for lines in _sections(m.doc).get(m.heading, []))]
    assert missing == []
    assert len({m.command for m in tool.MEASUREMENTS}) == len(tool.MEASUREMENTS)


def test_every_other_section_named_quotes_the_same_run() -> None:
    # A section that quotes a run's figures names its program (if not its every argument), or links
    # to the page that shows the command.
    tool = load_tool("remeasure")
    wrong = []
    for m in tool.MEASUREMENTS:
        program = re.sub(r"^(env -u \S+ )*", "", m.command).split()[:3]
        program = program[:2] if program[1].startswith("tools/") else program
        for doc, heading in m.also:
            sections = _sections(doc).get(heading, [])
            shown = [c for lines in sections for c in _shown(lines)]
            linked = any(f"{Path(m.doc).name}#" in "\n".join(lines) for lines in sections)
            if not linked and not any(c.split()[:len(program)] == program for c in shown):
                wrong.append(f"{doc} {heading!r}: {' '.join(program)}")
    assert wrong == []


def _commands_with_output(doc: str) -> list[str]:
    """The commands a page shows with their output: the last one shown before each output block (since
    the heading or output block before it; a block after `<!-- output -->` prints a code block), and
    each `$ ` line of a block that the command's output follows."""
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    found: list[str] = []
    start, opened = 0, -1
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            if opened < 0:
                opened = i
                printed = any("<!-- output" in x for x in lines[max(0, i - 2):i])
                if line.strip() == "```text" and not printed:
                    found += _shown(lines[start:i])[-1:]
                continue
            block = lines[opened + 1:i]
            for n, command in enumerate(block[:-1]):
                if command.startswith("$ ") and block[n + 1].strip() and not block[n + 1].startswith("$ "):
                    found += _shown(["```console", command, "```"])
            start = i + 1 if lines[opened].strip() == "```text" else start
            opened = -1
        elif opened < 0 and re.match(r"#+ ", line):
            start = i
    return found


def test_every_command_the_docs_show_with_its_output_is_listed() -> None:
    tool = load_tool("remeasure")
    known = {m.command for m in tool.MEASUREMENTS} | set(tool.NOT_RUN)
    pages = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]
    shown = {(page, c) for page in pages for c in _commands_with_output(page)}
    assert sorted(f"{page}: {c}" for page, c in shown if c not in known) == []
    assert {c for _, c in shown} >= set(tool.NOT_RUN)  # an entry the docs no longer show is taken off
    assert ("docs/gym.md", "python -m lamar.gym --family 40 --frontier --workers 2") in shown
    assert ("docs/claude-code.md", "python -m lamar_claude_code.bench --episodes 100000 --runs 200") in shown
    assert ("docs/decisions.md", "python -m lamar.audit --null 100000 --jobs 2") in shown  # in its console block


def test_the_list_prints_every_command_cheapest_first(capsys: pytest.CaptureFixture[str]) -> None:
    tool = load_tool("remeasure")
    assert tool.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(tool.MEASUREMENTS)
    assert lines[0] == '01  ~0.2 min  docs/decisions.md  "The figures"  python -m lamar.audit --physics'
    minutes = [float(re.search(r"~([\d.]+) min", line)[1]) for line in lines]  # type: ignore[index]
    assert minutes == sorted(minutes)
    assert {m.command for m in tool.MEASUREMENTS} == {line.split('"  ', 1)[1] for line in lines}


def _fakes(tool: object) -> list[object]:
    m = tool.Measurement  # type: ignore[attr-defined]
    return [m("docs/a.md", "Fails", 'python -c "raise SystemExit(3)"', 0),
            m("docs/b.md", "Bytecode", 'python -c "import os; print(os.environ.get(\'PYTHONDONTWRITEBYTECODE\'))"',
              1, (("docs/c.md", "Also"),))]


def test_a_run_records_each_output_under_a_header_and_goes_on_after_a_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = load_tool("remeasure")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    echo = io.StringIO()
    assert tool.run(_fakes(tool), tmp_path, None, echo) == 1
    summary = echo.getvalue().splitlines()
    assert summary[0] == "01 running  python -c \"raise SystemExit(3)\""
    assert re.fullmatch(rf"01 +\d+\.\d s  exit 3  {re.escape(str(tmp_path))}/01-c-raise-systemexit-3.txt", summary[1])
    assert re.fullmatch(r"02 +\d+\.\d s  exit 0  .*/02-c-import-os-print-os.environ.get-pythondontwritebytecode.txt",
                        summary[3])
    assert summary[-1] == f"2 ran, 1 failed; outputs in {tmp_path}"
    text = (tmp_path / "02-c-import-os-print-os.environ.get-pythondontwritebytecode.txt").read_text()
    header, output = text.split("\n\n", 1)
    assert re.fullmatch(
        r"command: python -c .*\nquoted in: docs/b.md, \"Bytecode\"; docs/c.md, \"Also\"\n"
        r"started: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\nended: \d{4}-.* UTC\nexit code: 0", header)
    assert output == "None\n"  # benchmarks time a normal install, which writes bytecode caches
    assert "exit code: 3\n" in (tmp_path / "01-c-raise-systemexit-3.txt").read_text()
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".txt") == []


def test_only_runs_the_matching_ones_under_their_numbers_in_the_whole_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tool = load_tool("remeasure")
    assert tool.main(["--out", str(tmp_path), "--only", "bytecode"], measurements=_fakes(tool)) == 0
    assert [p.name[:3] for p in tmp_path.iterdir()] == ["02-"]
    assert capsys.readouterr().out.endswith(f"1 ran, 0 failed; outputs in {tmp_path}\n")
    assert tool.main(["--out", str(tmp_path), "--only", "nothing such"], measurements=_fakes(tool)) == 2


def test_ctrl_c_stops_the_run_and_keeps_what_finished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = load_tool("remeasure")
    real = tool.run_one

    def interrupted_second(m: object, path: Path) -> int:
        if path.name.startswith("02-"):
            raise KeyboardInterrupt
        return int(real(m, path))

    monkeypatch.setattr(tool, "run_one", interrupted_second)
    echo = io.StringIO()
    assert tool.run(_fakes(tool), tmp_path, None, echo) == 130
    assert echo.getvalue().splitlines()[-1] == f"stopped by Ctrl+C: 1 of 2 finished, kept in {tmp_path}"
    assert [p.name for p in tmp_path.iterdir()] == ["01-c-raise-systemexit-3.txt"]


def test_a_command_runs_with_this_interpreter_and_this_checkout() -> None:
    tool = load_tool("remeasure")
    argv, env = tool.argv_and_env("env -u LAMAR_X python tools/proof_ceiling.py --price-pre 3")
    assert argv == [sys.executable, str(ROOT / "tools" / "proof_ceiling.py"), "--price-pre", "3"]
    assert env["PYTHONPATH"].split(":")[:2] == [str(ROOT), str(ROOT / "integrations")]
    assert "PYTHONDONTWRITEBYTECODE" not in env and "LAMAR_X" not in env


def test_a_program_that_is_not_there_fails_its_own_line_only(tmp_path: Path) -> None:
    tool = load_tool("remeasure")
    missing = tool.Measurement("docs/a.md", "Gone", "lamar-no-such-program --x", 0)
    echo = io.StringIO()
    assert tool.run([missing, *_fakes(tool)[1:]], tmp_path, None, echo) == 1
    assert re.search(r"^01 +\d+\.\d s  exit 127  ", echo.getvalue(), re.MULTILINE)
    assert "2 ran, 1 failed" in echo.getvalue()
    assert "could not start: " in (tmp_path / "01-lamar-no-such-program-x.txt").read_text()


def test_only_filters_the_list_and_must_be_a_regex(capsys: pytest.CaptureFixture[str]) -> None:
    tool = load_tool("remeasure")
    assert tool.main(["--list", "--only", "limitations"]) == 0
    listed = [line.split('"  ', 1)[1] for line in capsys.readouterr().out.splitlines()]
    quoting = [m.command for m in tool.ordered() if any(doc == "docs/limitations.md" for doc, _ in m.also)]
    assert listed == quoting and len(listed) >= 5  # what a page quotes, wherever the command is shown
    with pytest.raises(SystemExit):
        tool.main(["--list", "--only", "("])
    assert "not a regular expression" in capsys.readouterr().err
