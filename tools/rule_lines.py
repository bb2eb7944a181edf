"""What `lamar import-rules` does with a labelled set of rules lines written after the CLAUDE.md and AGENTS.md files
developers keep (imported, imported with a harm warning, left out with why, skipped as a repeat) against what each
line is, `python tools/rule_lines.py [--misses]` (docs/rules.md, "Import")."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

# Each line of the file, labelled with what it is: "rule" (a lesson), "prose" (no rule: left out, with why),
# "repeat" (a rule an earlier line states already: skipped). A heading or a blank line has no label.
LINES: tuple[tuple[str, str], ...] = (
    ("# Shop", ""), ("", ""),
    ("Shop is the storefront's backend: a Django app with a Celery worker and a React admin.", "prose"), ("", ""),
    ("## Commands", ""), ("", ""),
    ("- `make test` - run the unit tests", "rule"),
    ("- `make lint` — runs ruff and mypy", "rule"),
    ("- Dev server: `make dev`", "rule"),
    ("- `pytest` - test framework", "prose"),
    ("- `src/shop/api/` - the REST handlers", "prose"),
    ("- Run `make migrate` after pulling", "rule"),
    ("- run `make test` before committing", "rule"),
    ("- Run `make test` before committing.", "repeat"), ("", ""),
    ("## Code style", ""), ("", ""),
    ("- Use type hints on every public function", "rule"),
    ("- Prefer `pathlib` over `os.path`", "rule"),
    ("- Keep functions under 50 lines", "rule"),
    ("- Docstrings follow the Google style", "prose"),
    ("- **Always** use f-strings, never `%` formatting", "rule"),
    ("- Imports are sorted by ruff", "prose"),
    ("- 4 spaces, no tabs", "prose"),
    ("- Name test files `test_<module>.py`", "rule"),
    ("- Tests live in `tests/`, fixtures in `conftest.py`", "prose"), ("", ""),
    ("## Git", ""), ("", ""),
    ("- Don't push to main", "rule"),
    ("- NEVER push to main!", "repeat"),
    ("- DON'T push to main on Fridays", "rule"),
    ("- Don't force push to main during a release freeze", "rule"),
    ("- Force-pushing to main is forbidden", "rule"),
    ("- Force pushing to main is forbidden", "repeat"),
    ("- Committing directly to `release/*` is not okay", "rule"),
    ("- Amending pushed commits is frowned upon", "rule"),
    ("- Skipping the pre-commit hooks is a no-go", "rule"),
    ("- Rewriting shared history is strongly discouraged", "rule"),
    ("- Squash fixup commits before merging", "rule"),
    ("- Squash merges are the default on GitHub", "prose"),
    ("- Commit messages follow Conventional Commits", "prose"),
    ("- Write commit messages in the imperative mood", "rule"),
    ("- The release branch is protected by the hosting service", "prose"), ("", ""),
    ("## Testing", ""), ("", ""),
    ("- Disabling tests requires sign-off", "rule"),
    ("- Disabling a test requires sign-off.", "repeat"),
    ("- Adding a dependency needs a lead's approval", "rule"),
    ("- Touching the migrations folder requires a DBA review", "rule"),
    ("- Mocking the database in integration tests is discouraged", "rule"),
    ("- Using `time.sleep` in tests is banned", "rule"),
    ("- Running the whole e2e suite takes about twenty minutes", "prose"),
    ("- Profiling showed the ORM is the bottleneck", "prose"),
    ("- Mock the payment gateway with `respx`", "rule"),
    ("- Mock data lives in `tests/fixtures/`", "prose"),
    ("- When a test fails with KeyError, print the dict's keys", "rule"),
    ("- If the snapshot tests fail, run `make snapshots` and review the diff", "rule"),
    ("- When the build fails it usually is the lockfile", "prose"),
    ("- Coverage must stay above 90%", "rule"),
    ("- No tests yet for the admin", "prose"),
    ("- No `print` in library code", "rule"), ("", ""),
    ("## Database", ""), ("", ""),
    ("- Migrations are generated with `makemigrations`", "prose"),
    ("- Never edit a migration that has been merged", "rule"),
    ("- Under no circumstances run `DROP TABLE` on production", "rule"),
    ("- The `orders` table is large; query it by `created_at` only", "rule"),
    ("- The staging database is refreshed nightly", "prose"), ("", ""),
    ("## Never", ""), ("", ""),
    ("- commit `.env` files", "rule"),
    ("- Exposing customer emails in logs", "rule"), ("", ""),
    ("## Permissions", ""), ("", ""),
    ("- You may force push to your own feature branches", "rule"),
    ("- Feel free to refactor tests you touch", "rule"),
    ("- It's fine to skip the changelog for docs-only changes", "rule"),
    ("- Squashing commits is fine", "rule"), ("", ""),
    ("## Architecture", ""), ("", ""),
    ("The API layer talks to services, never to models directly.", "rule"), ("", ""),
    ("Celery tasks live in `tasks.py` next to the service they call.", "prose"), ("", ""),
    ("- Services: business logic", ""),
    ("  - Keep them free of HTTP concerns", "rule"),
    ("- Views: thin, only parse and validate input", "rule"),
    ("- Creating new top-level packages requires an ADR", "rule"),
    ("- The payments API is banned in some regions", "prose"), ("", ""),
    ("## Notes", ""), ("", ""),
    ("- ~~Use black for formatting~~", "prose"),
    ("- (no longer) Pin `urllib3` below 2", "prose"),
    ("- IMPORTANT: ask before adding a new top-level package", "rule"),
    ("- Ask before adding a new top-level package", "repeat"),
    ("- Ping #shop-dev when the deploy fails", "rule"),
    ("- Contact the on-call engineer for production access", "rule"),
    ("- Our on-call rotation is in PagerDuty", "prose"),
)
_OUTCOMES = ("imported", "warned", "left out", "repeat")
_EXPECTED = {"rule": "imported", "prose": "left out", "repeat": "repeat"}


def outcomes() -> list[tuple[int, str, str, str, str]]:
    """(line number, text, label, outcome, why) for each labelled line, as `import_rules` reads the file; "warned"
    is a lesson whose words sleep's harm check would flag (`lamar.sleep.warned.lesson_warning`)."""
    from lamar import Lamar
    from lamar.rules import import_rules
    from lamar.sleep.warned import lesson_warning

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "CLAUDE.md").write_text("\n".join(text for text, _ in LINES) + "\n", encoding="utf-8")
        plan = import_rules(Lamar(":memory:"), folder, project="shop")
    got: dict[int, tuple[str, str]] = {}
    for exp in plan.lessons:
        # What sleep would show beside the same words mined from a reply: a prohibition read as telling harm.
        warning = lesson_warning(exp.precondition, exp.action, exp.rationale)
        got[exp.provenance["line"]] = ("warned", warning) if warning else ("imported", "")
    for rule, why in plan.skipped:
        repeated = why.startswith(("the same rule as", "a near-copy of", "already held"))
        got[rule.line] = ("repeat" if repeated else "left out", why)
    return [(n, text, label, *got.get(n, ("not read", ""))) for n, (text, label) in enumerate(LINES, start=1) if label]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="also list each line whose outcome is not its label's")
    misses = parser.parse_args().misses
    read = outcomes()
    print(f"{len(read)} labelled lines of one CLAUDE.md; rows: what a line is, columns: what import-rules did")
    print(f"{'':8}" + "".join(f"{o:>10}" for o in _OUTCOMES))
    for label in _EXPECTED:
        row = [sum(1 for _, _, lab, got, _ in read if lab == label and got == o) for o in _OUTCOMES]
        print(f"{label:8}" + "".join(f"{n:>10}" for n in row))
    wrong = [r for r in read if r[3] != _EXPECTED[r[2]]]
    print(f"{len(read) - len(wrong)} of {len(read)} as labelled")
    for n, text, label, got, why in wrong if misses else ():
        print(f"  line {n}: {label}, {got}{f' ({why})' if why else ''}: {text.strip()}")


if __name__ == "__main__":
    main()
