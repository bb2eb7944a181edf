"""A rules file (CLAUDE.md, AGENTS.md, a Cursor rule) split into rules, one per directive bullet or paragraph."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from lamar.rules.fences import Fences, unquoted

EXPORT_BEGIN = "<!-- lamar:begin"
EXPORT_END = "<!-- lamar:end -->"
MAX_RULE = 600  # characters; a longer block is a section of prose, not one rule

# The closing #s and the spaces around them are stripped in code: as `(.*?)\s*#*\s*$` the three runs
# of spaces could split a long run in cubic many ways before a stray last character failed the line.
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*)$")
_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)\s*$")  # under a paragraph: its text is a heading (setext)
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")  # `---`, `* * *`: a thematic break
# A task list's box ("- [ ] Run the tests", a pull request checklist) is the item's, not the rule's.
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_LABEL = re.compile(r"^(?:\*\*|__)?([^:*_`]{1,60}?)(?:\*\*|__)?\s*:\s*(.*)$")
_DIRECTIVE = re.compile(
    r"(?i)\b(?:always|never|must|should|shall|do\s+not|don'?t|avoid|prefer|ensure|make\s+sure|required?|mandatory|"
    r"compulsory|obligatory|non-negotiable|"
    r"forbidden|important|only|instead\s+of|rather\s+than|at\s+most|at\s+least|maximum|minimum|no\s+more\s+than)\b")
DESCRIBES = "describes rather than directs"  # why a block that is no rule is skipped
_IMPERATIVE = frozenset([  # a rule's first word when it is an instruction
    "use", "run", "add", "keep", "write", "read", "check", "follow", "put", "call", "create", "update", "wrap",
    "break", "catch", "document", "test", "include", "pass", "import", "name", "mark", "install", "format",
    "lint", "remember", "start", "stop", "let", "leave", "mention", "raise", "return", "set", "prefer",
    "avoid", "ensure", "verify", "commit", "push", "open", "search", "ask", "reference", "extend", "fix",
    "handle", "limit", "log", "consider", "apply", "be", "try", "give", "place", "store", "treat", "make",
    "do", "don't", "never", "always", "only", "regenerate", "review", "group", "split", "move", "rename",
    "delete", "remove", "prefix", "quote", "pin", "lock", "upgrade", "annotate",
    # verbs a rules file opens an instruction with and seldom a statement ("Freeze time with freezegun")
    "freeze", "specify", "define", "declare", "exclude", "omit", "reuse", "validate", "sanitize", "normalize",
    "refactor", "ignore", "invalidate", "isolate", "require", "restore", "uninstall", "unpin", "memoize",
    "choose", "pick", "assume", "expose", "throw", "emit", "rely", "stick", "favor", "favour", "consult",
    "delegate", "restrict", "measure",
])
# "- `make test` - run the unit tests": a command reference, the mirror of "Test: `make test`". It directs
# when the code span is a shell command, not a path, a function or an API route listed with what it does.
_COMMAND_FIRST = re.compile(r"^`([^`]+)`\s*(?:[-\u2013\u2014]+|:)\s*(\S.*)$")
_PROGRAM = re.compile(r"[a-z][a-z0-9._+-]*")  # `mytool build`; not `GET /`, `@Once`, `# pragma: ...`
# `./gradlew build`, `scripts/check.sh`, `bin/dev`; not `scripts/README.md`
_SCRIPT = re.compile(r"\.{1,2}/\S+|(?:bin|scripts?)/(?:[\w-]+/)*[\w-]+(?:\.(?:sh|py|js|mjs|ts|rb|pl))?|\S+\.sh")
_RUNNERS = frozenset([  # programs whose spans are commands whatever follows them
    "make", "just", "npm", "npx", "pnpm", "yarn", "bun", "bunx", "deno", "node", "uv", "uvx", "pip", "pipx",
    "poetry", "pdm", "hatch", "tox", "nox", "pytest", "python", "python3", "ruff", "mypy", "pyright", "black",
    "pre-commit", "cargo", "go", "gradle", "mvn", "dotnet", "bundle", "rake", "rails", "mix", "composer", "php",
    "docker", "docker-compose", "kubectl", "helm", "terraform", "git", "gh", "cmake", "ctest", "bazel", "swift",
    "flutter", "dart", "nx", "turbo", "vitest", "jest", "playwright", "eslint", "prettier", "tsc", "mkdocs"
])
_CODE_WORDS = frozenset([  # a span that opens with one is code, not a command line
    "from", "import", "def", "class", "async", "await", "return", "if", "for", "while", "with", "const", "let",
    "var", "function", "export", "type", "select", "insert", "update", "delete", "create", "new", "raise", "try"
])
_DOES = frozenset([  # what a command's description opens with, besides the imperatives above
    "build", "serve", "compile", "deploy", "generate", "clean", "migrate", "execute", "launch", "show", "list",
    "print", "sync", "reset", "rebuild", "publish", "release", "watch", "bundle", "preview", "seed", "typecheck"
])
_TOOL_NOUNS = frozenset([  # "`pytest` - test framework": a verb before one of these names a kind of tool
    "framework", "runner", "tool", "tools", "tooling", "system", "library", "server", "suite", "utility",
    "manager", "harness", "engine", "toolchain", "pipeline"
])
# After a condition the rule states ("When X, print Y"), the first word is an instruction whenever it is
# a verb: these are the ones not already listed above, as rules files use them after "when" or "if".
_AFTER_CONDITION = frozenset([
    "clear", "restart", "rerun", "re-run", "retry", "skip", "inspect", "reproduce", "explain", "wait", "look",
    "tell", "report", "notify", "revert", "roll", "escalate", "bump", "describe", "note", "paste", "rebase",
    "squash", "disable", "enable", "switch", "confirm", "compare", "copy", "replace", "kill", "drop", "pause",
    "debug", "investigate", "examine", "grep", "suggest", "flag", "abort", "exit", "fail", "warn", "respond",
    "reply", "answer", "summarize", "summarise", "cite", "send", "fall", "bail", "stash", "downgrade",
    "replay", "escape", "sort", "trim", "strip", "prune", "purge", "rotate", "drain", "reload",
])
# A rule may open with a verb that is also a noun ("Deploy with ...", "Mock the database ...", "Squash fixup
# commits before merging"), as a description may ("Deploy pipeline runs on merge", "Mock data lives in
# fixtures/"): the verb instructs when an object or a manner follows it, or the rule says when to do it.
_VERB_OR_NOUN = _DOES | _AFTER_CONDITION | frozenset(["mock", "stub", "patch", "benchmark", "profile", "cache",
                                                      "ping", "contact", "tag", "label"])
# "Tag releases as `v1.2.3`", "Sort imports alphabetically": after such a verb and a plural, a preposition or a
# manner tells the verb; another word tells a noun with a verb of its own ("Cache entries expire after a day").
# A noun before "for", "in" or "on" is as likely ("Release notes for each version"): only a manner tells.
_HOW = re.compile(r"(?:as|with|into|via|using|[a-z]{3,}ly)[,.;:]?", re.IGNORECASE)
# "Commit messages follow Conventional Commits", "Test files live in tests/": a noun made of the opening word and
# a plural, then a verb of its own, states; a verb that takes a clause ("Check files are formatted") still directs.
_COMPOUND = re.compile(r"(?:commit|log|test|name|import|review|store|lock|push|call|format|update|release)\s+"
                       r"[a-z]+s\s+(?:is|are|follow|live|go|belong|stay|come|get|look)\b", re.IGNORECASE)
_OBJECT = frozenset(["the", "a", "an", "all", "any", "each", "every", "your", "its", "their", "this", "these",
                     "those", "it", "them", "with", "using", "via", "before", "after", "onto", "into"])
_WHEN_TO = re.compile(r"\b(?:before|after|until|unless|so\s+that|to\s+keep|to\s+avoid|instead)\b", re.IGNORECASE)
_STATES = re.compile(r"\b(?:is|are|was|were|has|have|happens|runs|lives|goes|takes|starts|fails|gets)\b",
                     re.IGNORECASE)
_PASSES = re.compile(r"\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|succeed(?:s|ed|ing)?|break(?:s|ing)?|broken|green)\b",
                     re.IGNORECASE)
_CLAUSE = re.compile(r"^(?:when|if|before|after|for|in)\b[^,]{0,120},\s*(\S+)", re.IGNORECASE)  # "When X, use Y"
# A rule that states its own condition: "When X, do Y", "If X, ...", "Whenever X: ...".
# Possessive spaces around the condition, which starts at a letter: a run of spaces is taken one way only.
_CONDITION = re.compile(r"^(?:when|whenever|if)\s++([^,:\s][^,:]{0,119}?)\s*+[,:]\s+(.+)$", re.IGNORECASE)
# A line that is only tags (`<critical_rules>`, `</details>`, `<summary>Setup</summary>`) wraps rules,
# as prompt-style sections and collapsed HTML do; it is none of their words.
_TAGS = re.compile(r"(?:</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>\s*)+|<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>[^<>]*</\1>\s*")
_ALERT = re.compile(r"\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.IGNORECASE)  # GitHub's "> [!NOTE]"
# A table's delimiter row (`--- | :---:`): the line above it is the table's header, outer pipes or none.
_DELIMITER = re.compile(r"\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)+\|?|\|\s*:?-+:?\s*\|?")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_TICKS = re.compile(r"`+")
# No "[" in the text, no "](" in the target: each "[" or "](" would otherwise read on to the text's end when no
# link closes it. A target may hold brackets, as a route (`app/[slug]/page.tsx`) or a query (`?f[s]=1`) does.
_LINK = re.compile(r"\[([^\][]+)\]\((?:[^)\]]|\](?!\())*+\)")


@dataclasses.dataclass(frozen=True)
class Rule:
    """One rule as written: its text, where it is, the headings and parent items above it, who
    split it out ("parser", or the model's name when a model restated a block of prose), the
    sub-folder it speaks for ("frontend/" for a rule of frontend/CLAUDE.md), and the heading, lead-in
    or parent item that forbids it ("Never" for "- push to main" under "## Never") when its own words
    do not (`lamar.safety.prohibitions`)."""

    text: str
    file: str
    line: int
    context: tuple[str, ...] = ()
    by: str = "parser"
    folder: str = ""
    forbidden_by: str = ""


@dataclasses.dataclass
class _Block:
    text: list[str]
    line: int
    indent: int
    parents: tuple[str, ...]
    headings: tuple[str, ...]
    item: bool
    has_children: bool = False


def parse_rules(text: str, file: str) -> tuple[list[Rule], list[tuple[Rule, str]]]:
    """The rules of one file, and what was left out with why.

    Deterministic: Markdown structure and a few word lists decide, never a model. Headings and
    parent bullets become the rule's context; code blocks, tables, front matter and Lamar's own
    exported section are skipped; a bullet or paragraph that describes rather than directs is left out.

    Args:
        text: the file's text.
        file: its name as the provenance should show it (e.g. "CLAUDE.md").

    Returns:
        (rules in file order, [(block, reason)] for blocks that were not taken as rules).
    """
    from lamar.safety.prohibitions import forbidding_labels, forbids, opens_forbidding

    lines = text.splitlines()
    blocks = _blocks(lines)
    forbidden = forbidding_labels(lines)  # an item or a paragraph under "## Never" says what not to do
    from lamar.rules.phrasings import marked_verdict
    from lamar.rules.takebacks import STRUCK, marked, takes_back, unstruck, withdrawn_mark

    rules: list[Rule] = []
    left: list[tuple[Rule, str]] = []
    bodies = [clean(" ".join(block.text)) for block in blocks]
    taken = _taken_back(blocks, bodies, takes_back)
    for n, block in enumerate(blocks):
        body, struck = unstruck(bodies[n], _code_spans(bodies[n]) if "~~" in bodies[n] else [])
        verdict, rest = marked_verdict(body)  # "❌ bare except clauses": a don't, whatever the heading says
        verdict, body = (verdict, rest) if verdict and (_directs(rest) or not _status(rest)) else ("", body)
        by = (verdict or forbidden[block.line - 1]) if verdict != "Do" and not opens_forbidding(body) else ""
        body = f"Do: {body}" if verdict == "Do" and body and not _directs(body) else body
        rule = Rule(body, file, block.line, (*block.headings, *block.parents), forbidden_by=by)
        mark = withdrawn_mark(body)
        if n in taken or (struck and not body) or mark:  # the file takes it back: listed with why, not a rule
            why = taken.get(n) or (marked(mark) if mark else STRUCK)
            left.append((dataclasses.replace(rule, text=body or bodies[n]), why))
            continue
        if not body:
            continue
        if forbids(body):
            continue  # "- **Never**:", "**Don'ts**", "Never do the following:": what forbids a list, not a rule
        if block.has_children and (body.endswith(":") or not _directs(body)):
            continue  # a label over its sub-items: their context, not a rule
        if len(body) > MAX_RULE:
            left.append((rule, f"{len(body)} characters: too long for one rule; split it into bullets"))
        elif not (by or verdict or _directs(body)):
            left.append((rule, DESCRIBES))
        else:
            rules.append(rule)
    return rules, left


def _status(text: str) -> bool:
    """Whether a marked item reports how things stand ("✅ Tests pass on main", "❌ The nightly build fails"), which
    its mark grades, rather than naming what to do or not to do."""
    from lamar.rules.phrasings import states

    return states(text) or bool(_STATES.search(text) or _PASSES.search(text))


def _taken_back(blocks: list[_Block], bodies: list[str], takes_back: Callable[[str], bool]) -> dict[int, str]:
    """Which blocks an item or paragraph such as "Never mind the rule above" takes back, itself among them, and why:
    the block right above it, when under the same headings."""
    taken: dict[int, str] = {}
    for n, body in enumerate(bodies):
        if not takes_back(body):
            continue
        above = n - 1 if n and blocks[n - 1].headings == blocks[n].headings and n - 1 not in taken else -1
        if above >= 0:
            taken[above] = f"taken back by line {blocks[n].line} ({body[:60]!r})"
        taken[n] = (f"takes back the rule above, line {blocks[above].line}" if above >= 0
                    else "takes back the rule above, which this list does not hold")
    return taken


def clean(text: str) -> str:
    """Markdown emphasis, link targets and HTML comments dropped, white space folded; inline code kept as written."""
    text = _uncommented(text)
    # Each code span is masked while emphasis and links are dropped: `getLogger(__name__)` or `**kwargs`
    # would read as bold, yet emphasis may still wrap a span ("**Always run `make test`**").
    spans = _code_spans(text) if _MASK not in text else []
    kept = [text[start:end] for start, end in spans]
    for n, (start, end) in reversed(list(enumerate(spans))):
        text = f"{text[:start]}{_MASK}{n}{_MASK}{text[end:]}"
    text = _LINK.sub(r"\1", _EMPHASIS.sub(r"\2", text))
    if kept:
        text = re.sub(f"{_MASK}(\\d+){_MASK}", lambda found: kept[int(found.group(1))], text)
    return " ".join(text.split()).strip()


_MASK = "\ue000"  # a private-use character: no rules file writes one, nor does emphasis or a link hold it


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where each code span of `text` starts and ends: a run of backticks opens one, and the next run of as many
    closes it; a run that none closes is text. Each run is passed once per length, so the time is linear."""
    runs = [(found.start(), found.end()) for found in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for n, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(n)
    passed = dict.fromkeys(by_length, 0)
    spans: list[tuple[int, int]] = []
    n = 0
    while n < len(runs):
        start, end = runs[n]
        same, k = by_length[end - start], passed[end - start]
        while k < len(same) and same[k] <= n:
            k += 1
        passed[end - start] = k
        if k < len(same):
            spans.append((start, runs[same[k]][1]))
            n = same[k] + 1
        else:
            n += 1
    return spans


def _uncommented(text: str) -> str:
    """`text` with each HTML comment (such as the figures export-rules puts after a rule) a space; a
    code span, which a run of backticks opens and the next run of as many closes, is kept as written.

    A scan rather than the regex `(`+).*?\\1|<!--.*?-->`: that read to the text's end again from each
    unclosed "<!--" and from each length of a run of backticks, in time the square of the text's length.
    """
    if "<!--" not in text:
        return text
    runs = [(found.start(), found.end()) for found in _TICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for start, end in runs:
        by_length.setdefault(end - start, []).append(start)
    passed = dict.fromkeys(by_length, 0)  # per length, the runs before the scan (it only moves on)
    pieces: list[str] = []
    done = pos = run = 0
    while True:
        while run < len(runs) and runs[run][0] < pos:
            run += 1
        opening = text.find("<!--", pos)
        if run < len(runs) and (opening < 0 or runs[run][0] < opening):
            start, end = runs[run]
            same, k = by_length[end - start], passed[end - start]
            while k < len(same) and same[k] <= start:
                k += 1
            passed[end - start] = k
            pos = same[k] + end - start if k < len(same) else end  # the span's end, or past an unclosed run
            continue
        close = text.find("-->", opening + 4) if opening >= 0 else -1
        if close < 0:  # nor can a later "<!--" close
            return "".join(pieces) + text[done:]
        pieces += [text[done:opening], " "]
        done = pos = close + 3


def condition(text: str) -> tuple[str, str] | None:
    """("the build fails", "read the first error") for "When the build fails, read the first error";
    None when the rule states no condition, or what follows its first comma does not direct."""
    found = _CONDITION.match(text)
    if found is None or not (_directs(found.group(2)) or _verb_first(found.group(2))):
        return None  # "When A, B, do C": the split would cut the condition, so the rule stays whole
    return found.group(1), found.group(2)


def _verb_first(text: str) -> bool:
    """Whether the text opens with a verb: after a condition, an instruction ("print the keys")."""
    words = text.lstrip("`*_ ").split(maxsplit=1)
    verb = words[0].lower().strip(",.;:") if words else ""
    return verb in _IMPERATIVE or verb in _DOES or verb in _AFTER_CONDITION


def _directs(text: str) -> bool:
    from lamar.rules.phrasings import directs_otherwise, unmarked

    text = unmarked(text)
    if _DIRECTIVE.search(text) or _command_reference(text):
        return True
    if directs_otherwise(text):
        return True  # "No `git push --force`", "Pushing to main is prohibited", "You may rebase"
    stated = _CONDITION.match(text)
    if stated and _verb_first(stated.group(2)):
        return True  # "When a test fails with KeyError, print the keys": a verb after a condition instructs
    label = _LABEL.match(text)
    if label and label.group(2).startswith("`"):
        return True  # "Run tests: `make test`": how to do a thing
    # "X hits the database; cache it in a local variable": a fact, then what to do about it.
    after = [part for part in text.split("; ")[1:] if part.strip()]
    for part in (text, label.group(2) if label else "", *_CLAUSE.findall(text), *after):
        words = part.lstrip("`*_ ").split(maxsplit=1)
        if words and words[0].lower().strip(",.;") in _IMPERATIVE and not _COMPOUND.match(part.lstrip("`*_ ")):
            return True
    return any(_verb_or_noun_directs(part) for part in (text, *after))


def _verb_or_noun_directs(text: str) -> bool:
    """Whether a block opening with a verb that is also a noun uses it as the verb: an object or a
    manner follows it ("Mock the database", "Deploy with `make deploy`"), or it says when ("before merging")."""
    words = text.lstrip("*_ ").split(maxsplit=2)
    # "Build with:" leads in to the code below it, which the rule would need and does not hold.
    if len(words) < 2 or words[0].lower() not in _VERB_OR_NOUN or text.rstrip().endswith(":"):
        return False
    if words[1].startswith(("`", "#", "@")) or words[1].lower().strip(",.;:") in _OBJECT:  # "Ping #dev", "@alice"
        return True
    if len(words) == 3 and re.fullmatch(r"[a-z]{2,}s", words[1]) and not _STATES.search(text):
        from lamar.rules.phrasings import states

        return bool(_HOW.fullmatch(words[2].split(maxsplit=1)[0])) and not states(text)
    # "Cache invalidation happens after each deploy" says when, but of a noun: a verb of its own tells.
    return bool(_WHEN_TO.search(text)) and not _STATES.search(text)


def _command_reference(text: str) -> bool:
    """Whether "`span` - what it does" names a command to run: a known program with arguments, a
    script, or a program (known, or any with arguments) whose description opens with a verb."""
    found = _COMMAND_FIRST.match(text)
    if found is None or not found.group(1).split():
        return False
    words = found.group(1).split()
    known = words[0] in _RUNNERS or bool(_SCRIPT.fullmatch(words[0]))
    # A program named alone is a tool listed with what it is ("`pytest` - test framework", "`./src` -
    # the source"), unless what follows says what running it does; bin/dev and check.sh are run.
    if len(words) == 1:
        if not known:
            return False  # a function's or a file's name: `create_table` - Create database tables
        if _SCRIPT.fullmatch(re.sub(r"^\.{1,2}/", "", words[0])):
            return True
    elif known:
        return True
    elif not _PROGRAM.fullmatch(words[0]) or words[0] in _CODE_WORDS or re.search(r"[(){};]", found.group(1)):
        return False
    said = found.group(2).lower().split()
    verb = said[0].strip(",.;:")
    if len(said) > 1 and said[1].strip(",.;:") in _TOOL_NOUNS:
        return False  # "test framework", "build tool": what the program is, not what to run it for
    return any(form in _IMPERATIVE or form in _DOES for form in (verb, verb.removesuffix("s"), verb.removesuffix("es"))
               if form and form not in {"do", "be"})


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    headings: list[tuple[int, str]] = []
    parents: list[tuple[int, _Block]] = []
    current: _Block | None = None
    fences = Fences()
    skipping = False
    commenting = False  # inside an HTML comment that spans lines: hidden text, whatever it says
    table = False  # inside a table's rows, which run to a blank line or a heading
    table_quoted = False  # whether that table is in a block quote: a line in or out of one ends it
    start = _front_matter_end(lines)
    files = _globbed(lines[1:start - 1]) if start else ""
    if files:  # a Cursor rule Cursor applies only to the files its globs match: said as a heading over all of it
        headings.append((0, files))
    first = next((i for i, line in enumerate(lines) if i >= start and line.strip()), -1)  # the title's line
    for number, line in enumerate(lines, start=1):
        if number <= start:
            continue
        marker = line.strip()  # Lamar's section as export-rules finds it: never quoted
        line = unquoted(line)
        stripped = line.strip()
        if skipping:
            skipping = not marker.startswith(EXPORT_END)
            continue
        if commenting:
            commenting = "-->" not in line
            continue
        if fences.code(line):
            current = None
            continue
        if marker.startswith(EXPORT_BEGIN):  # after the fences: a section shown as an example is text
            skipping, current = True, None
            continue
        heading = _HEADING.match(line)
        # A list item, a thematic break or a block quote's start also ends a table, as GFM renders it.
        if (table and stripped and not heading and not _ITEM.match(line) and not _BREAK.match(line)
                and marker.startswith(">") == table_quoted):
            continue
        table = False
        if current is not None and "|" in current.text[-1] and _DELIMITER.fullmatch(stripped):
            current.text.pop()  # the header row
            if not current.text:
                blocks.remove(current)
            table, table_quoted, current = True, marker.startswith(">"), None
            continue
        if heading:
            level = len(heading.group(1))
            if number - 1 != first or level > 1:  # a document's opening title is not a section
                title = heading.group(2).rstrip().rstrip("#").rstrip()  # "## Setup ##": the closing #s are no title
                headings = [h for h in headings if h[0] < level] + [(level, clean(title))]
            parents, current = [], None
            continue
        underline = _UNDERLINE.match(line)
        if underline and current is not None and not current.item:
            level = 1 if underline.group(1)[0] == "=" else 2
            blocks.remove(current)
            if current.line - 1 != first or level > 1:
                headings = [h for h in headings if h[0] < level] + [(level, clean(" ".join(current.text)))]
            parents, current = [], None
            continue
        if _BREAK.match(line):
            parents, current = [], None
            continue
        if (not stripped or stripped.startswith(("|", "<!--", "@")) or _TAGS.fullmatch(stripped)
                or _ALERT.fullmatch(stripped)):
            current = None  # a blank line, a table, a comment, an import or a line of tags ends the block
            commenting = stripped.startswith("<!--") and "-->" not in stripped[4:]
            continue
        item = _ITEM.match(line)
        if item:
            indent = len(item.group(1).expandtabs(4))
            parents = [p for p in parents if p[0] < indent]
            if parents:
                parents[-1][1].has_children = True
            current = _Block([item.group(2)], number, indent,
                             tuple(_label(p[1]) for p in parents),
                             tuple(h[1] for h in headings), True)
            parents.append((indent, current))
            blocks.append(current)
        elif current is not None:
            current.text.append(stripped)
        else:
            if not line[:1].isspace():
                parents = []  # prose at the margin: the list above is over
            current = _Block([stripped], number, 0, (), tuple(h[1] for h in headings), False)
            blocks.append(current)
    return blocks


def _label(block: _Block) -> str:
    """A parent item as context: its label when it has one ("Coverage: CI requires ..." -> "Coverage")."""
    text = clean(" ".join(block.text))
    found = _LABEL.match(text)
    text = found.group(1) if found else text.rstrip(":")
    return text if len(text) <= 80 else text[:77].rstrip() + "..."


def _globbed(front: list[str]) -> str:
    """The files front matter names in `globs` ("files `*.py`"), unless it says `alwaysApply: true`; else ""."""
    fields = {key.strip().lower(): value.strip() for key, sep, value in (line.partition(":") for line in front) if sep}
    if fields.get("alwaysapply", "").lower() == "true":
        return ""
    listed = ", ".join(f"`{glob}`" for glob in (g.strip(" '\"") for g in fields.get("globs", "").strip("[]").split(","))
                       if glob)
    return f"files {listed}" if listed else ""


def _front_matter_end(lines: list[str]) -> int:
    """The line number that closes a leading `---` block (a Cursor rule's metadata), else 0."""
    if not lines or lines[0].strip() != "---":
        return 0
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return number
    return 0


__all__ = ["DESCRIBES", "EXPORT_BEGIN", "EXPORT_END", "MAX_RULE", "Rule", "clean", "condition", "parse_rules"]
