"""The markup real rules files wrap their rules in: XML-style tags, block quotes, front matter before a title."""

from __future__ import annotations

from lamar.rules import parse_rules


def _rules(text: str) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(r.line, r.text, r.context) for r in parse_rules(text, "CLAUDE.md")[0]]


def test_a_tag_on_its_own_line_is_neither_a_rule_nor_part_of_one() -> None:
    # Prompt-style sections (`<critical_rules>` ... `</critical_rules>`) and collapsed HTML (`<details>`):
    # the closing tag would otherwise end the rule above it.
    text = ("# Guide\n\n<critical_rules>\n- Never push to main\n- ALWAYS run the linter\n</critical_rules>\n"
            "<critical>\nNEVER merge two tasks into one.\n</critical>\n\n"
            "<details>\n<summary>Setup</summary>\n\nInstall the tools with `uv sync`.\n</details>\n"
            "<kbd>Ctrl</kbd>+<kbd>C</kbd> must never be sent to the dev server\n")
    assert _rules(text) == [(4, "Never push to main", ()), (5, "ALWAYS run the linter", ()),
                            (8, "NEVER merge two tasks into one.", ()),
                            (14, "Install the tools with `uv sync`.", ()),
                            (16, "<kbd>Ctrl</kbd>+<kbd>C</kbd> must never be sent to the dev server", ())]
    assert [r.text for r, _ in parse_rules(text, "CLAUDE.md")[1]] == []  # the tags are not listed as prose


def test_a_block_quote_is_read_without_its_markers() -> None:
    # "> **IMPORTANT**: ..." and GitHub's "> [!WARNING]" alerts hold rules; each quoted item is its own.
    text = ("# Deploy\n\n> **Important**: Always read `docs/arch.md` first.\n> * Never commit secrets\n>\n"
            ">> - Keep nested quotes too\n\n> [!WARNING]\n> Never deploy on Fridays.\n")
    assert _rules(text) == [(3, "Important: Always read `docs/arch.md` first.", ()),
                            (4, "Never commit secrets", ()), (6, "Keep nested quotes too", ()),
                            (9, "Never deploy on Fridays.", ())]
    # A fence inside a quote shows code, as one outside it does.
    assert _rules("> Example:\n>\n> ```md\n> - Always deploy on Fridays\n> ```\n> - Never skip review\n") == [
        (6, "Never skip review", ())]


def test_the_title_after_front_matter_is_the_documents_not_a_section() -> None:
    # A Cursor rule opens with front matter then its title, as a CLAUDE.md opens with its title alone.
    plain = "# Go style\n\n## Tests\n\n- Use table tests\n"
    fronted = "---\ndescription: Go style\nalwaysApply: true\n---\n\n" + plain
    assert [context for _, _, context in _rules(plain)] == [("Tests",)]
    assert [context for _, _, context in _rules(fronted)] == [("Tests",)]


def test_a_comment_inside_a_rule_is_hidden_text_but_one_in_a_code_span_is_kept() -> None:
    assert _rules("- Always end it with `<!-- end -->` <!-- exp_1: lift +0.20 -->\n") == [
        (1, "Always end it with `<!-- end -->`", ())]


def test_a_table_without_outer_pipes_is_a_table() -> None:
    # GitHub reads `a | b` over `--- | ---` as a table, as it reads `| a | b |`: its cells are no rules.
    text = ("## Commands\n\nCommand | When\n--- | ---\n`make test` | always before a commit\nlint | never skip it\n\n"
            "- Never push to main\n\nTask | Rule\n:---|:---:\ndeploy | only on Tuesdays\n## Review\n"
            "- Always ask for a review\n")
    assert _rules(text) == [(8, "Never push to main", ("Commands",)), (14, "Always ask for a review", ("Review",))]



def test_a_list_or_a_quote_right_after_a_table_without_outer_pipes_is_read() -> None:
    # GitHub ends a table at a list item, a thematic break or a block quote, blank line or none.
    text = ("## Commands\n\nCommand | When\n--- | ---\n`make test` | always\n- Never push to main\n\n"
            "Task | Rule\n--- | ---\ndeploy | Tuesdays\n> Always ask for a review\n\n"
            "> Step | Command\n> --- | ---\n> test | `make test`\n\nName | Value\n--- | ---\nretries | 3\n***\n"
            "- Run `make lint` before committing\n")
    assert _rules(text) == [(6, "Never push to main", ("Commands",)), (11, "Always ask for a review", ("Commands",)),
                            (21, "Run `make lint` before committing", ("Commands",))]


def test_a_command_listed_with_what_it_does_is_a_rule_and_a_path_or_an_api_is_not() -> None:
    # A "## Commands" list in a CLAUDE.md names the command first ("- `pnpm dev` — start the dev server"),
    # the mirror of "Dev: `pnpm dev`": how to do a thing. An architecture list names a path, a function
    # or a route first, with what it is or does: that describes.
    text = ("## Commands\n\n- `pytest -x` - run before every commit\n- `pnpm dev` — start the dev server\n"
            "- `npm run build` – production build to `dist/`\n- `./gradlew check`: lint and test\n"
            "- `shop sync` - runs the nightly import\n- `bin/dev` - the dev server\n\n## Layout\n\n"
            "- `src/api/` - the REST handlers\n- `scripts/README.md` - what each script does\n"
            "- `create_table` - Create database tables\n- `GET /health` - Report liveness\n"
            "- `shell_exec(cmd, timeout)` - Run a command in the sandbox\n- `from x import y` - import style\n"
            "- `shop legacy` - the old entry point\n- `README.md` - the overview\n")
    assert [(line, text) for line, text, _ in _rules(text)] == [
        (3, "`pytest -x` - run before every commit"), (4, "`pnpm dev` — start the dev server"),
        (5, "`npm run build` – production build to `dist/`"), (6, "`./gradlew check`: lint and test"),
        (7, "`shop sync` - runs the nightly import"), (8, "`bin/dev` - the dev server")]
    assert len(parse_rules(text, "CLAUDE.md")[1]) == 8


def test_a_tool_named_alone_with_what_it_is_is_no_command() -> None:
    # A "## Tech stack" list names each tool with what it is: importing those as rules would make
    # "`git` - version control" a lesson. Named alone, a program is run only when a verb follows.
    text = ("## Stack\n\n- `git` - version control\n- `ruff` - linter and formatter\n- `python` - 3.12\n"
            "- `./src` - the source code\n- `../docs` - documentation\n- `pytest` - test framework\n"
            "- `make` - build tool\n\n## Commands\n\n"
            "- `make` - builds everything\n- `./gradlew` - builds and tests\n- `./check.sh` - the checks\n")
    assert [text for _, text, _ in _rules(text)] == [
        "`make` - builds everything", "`./gradlew` - builds and tests", "`./check.sh` - the checks"]


def test_code_spans_keep_their_underscores_stars_and_brackets() -> None:
    # `logging.getLogger(__name__)` read as bold lost its underscores: the lesson told Claude `getLogger(name)`.
    text = ("- Log with `logger = logging.getLogger(__name__)`, never `print`\n"
            "- Always pass `**kwargs` and `**options` on unchanged\n- Put the exports in `__init__.py` and `__all__`\n"
            "- Always write routes as `[text](/path)` in `docs/`\n- **Always run `make test`** before pushing\n")
    assert [t for _, t, _ in _rules(text)] == [
        "Log with `logger = logging.getLogger(__name__)`, never `print`",
        "Always pass `**kwargs` and `**options` on unchanged", "Put the exports in `__init__.py` and `__all__`",
        "Always write routes as `[text](/path)` in `docs/`", "Always run `make test` before pushing"]
