"""What `lamar import-rules` does with a labelled set of rules lines written after the CLAUDE.md and AGENTS.md files
developers keep (imported, imported with a harm warning, left out with why, skipped as a repeat) against what each
line is, `python tools/rule_lines.py [--misses] [--held-out]` (docs/rules.md, "Import")."""

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
# Held out: 40 lines written after the CLAUDE.md and AGENTS.md files of public projects, labelled before import-rules
# read them, and kept apart from LINES so that a fix guided by LINES is measured on lines it was not fitted to.
HELD_OUT: tuple[tuple[str, str], ...] = (
    ("# Billing service", ""), ("", ""),
    ("## Overview", ""), ("", ""),
    ("Billing is a FastAPI service that owns invoices, refunds and the Stripe webhooks.", "prose"), ("", ""),
    ("This repository is a monorepo managed with pnpm workspaces.", "prose"), ("", ""),
    ("## Setup", ""), ("", ""),
    ("- Install deps: `pnpm install`", "rule"),
    ("- Start Postgres with `docker compose up -d db` before running tests", "rule"),
    ("- The dev server listens on port 8000", "prose"),
    ("- if you have questions, ask the user instead of guessing", "rule"), ("", ""),
    ("## Code style", ""), ("", ""),
    ("- **Naming**: use snake_case for functions and PascalCase for classes", "rule"),
    ("- **Formatting**: handled by ruff format on save", "prose"),
    ("- Explicit over implicit", "rule"),
    ("- Keep files under 500 lines; split a module before it grows past that", "rule"),
    ("- Don't add comments that restate the code", "rule"),
    ("- Every public function needs a docstring", "rule"),
    ("- Type hints are mandatory in `src/`", "rule"),
    ("- Our codebase uses dependency injection via `Depends`", "prose"), ("", ""),
    ("## Testing", ""), ("", ""),
    ("- Tests use pytest with the `pytest-asyncio` plugin", "prose"),
    ("- Write a failing test first, then the fix", "rule"),
    ("- The first step of any bug fix is a regression test", "rule"),
    ("- Fixtures are defined in `tests/conftest.py`", "prose"),
    ("- Snapshot files are regenerated by CI on every merge", "prose"),
    ("- Never commit with failing tests", "rule"),
    ("- never commit with failing tests.", "repeat"), ("", ""),
    ("## Git workflow", ""), ("", ""),
    ("- Commit only when explicitly asked", "rule"),
    ("- Main is deployed to production automatically on every merge", "prose"),
    ("- Rebase onto main instead of merging main into your branch", "rule"),
    ("- Opening a PR without a linked issue is not acceptable", "rule"),
    ("- The `legacy/` folder was frozen in 2023", "prose"), ("", ""),
    ("## Boundaries", ""), ("", ""),
    ("- \u2705 Always: run the linter before pushing", "rule"),
    ("- \u26a0\ufe0f Ask first: schema changes, new dependencies", "rule"),
    ("- \U0001f6ab Never: touch `infra/terraform/`", "rule"),
    ("- Do what has been asked; nothing more, nothing less.", "rule"), ("", ""),
    ("## Database", ""), ("", ""),
    ("Migrations run automatically when the container starts.", "prose"), ("", ""),
    ("If a migration fails in CI, drop the test database and rerun it locally.", "rule"), ("", ""),
    ("- Raw SQL is only okay in `reports/`", "rule"),
    ("- Queries over 100ms are logged as slow", "prose"),
    ("- Deleting rows from `ledger` is forbidden; write a reversing entry", "rule"), ("", ""),
    ("## Deployment", ""), ("", ""),
    ("- Deploys happen every Tuesday", "prose"),
    ("- Production credentials are stored in 1Password", "prose"),
    ("- Before deploying, make sure the changelog is updated", "rule"),
    ("- Feature flags are managed in LaunchDarkly", "prose"),
    ("- Tag releases as `vMAJOR.MINOR.PATCH`", "rule"),
)
_OUTCOMES = ("imported", "warned", "left out", "repeat")
_EXPECTED = {"rule": "imported", "prose": "left out", "repeat": "repeat"}


def outcomes(lines: tuple[tuple[str, str], ...] = LINES) -> list[tuple[int, str, str, str, str]]:
    """(line number, text, label, outcome, why) for each labelled line of `lines` (LINES, or HELD_OUT), as
    `import_rules` reads the file; "warned" is a lesson whose words sleep's harm check would flag
    (`lamar.sleep.warned.lesson_warning`)."""
    from lamar import Lamar
    from lamar.rules import import_rules
    from lamar.sleep.warned import lesson_warning

    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "CLAUDE.md").write_text("\n".join(text for text, _ in lines) + "\n", encoding="utf-8")
        plan = import_rules(Lamar(":memory:"), folder, project="shop")
    got: dict[int, tuple[str, str]] = {}
    for exp in plan.lessons:
        # What sleep would show beside the same words mined from a reply: a prohibition read as telling harm.
        warning = lesson_warning(exp.precondition, exp.action, exp.rationale)
        got[exp.provenance["line"]] = ("warned", warning) if warning else ("imported", "")
    for rule, why in plan.skipped:
        repeated = why.startswith(("the same rule as", "a near-copy of", "already held"))
        got[rule.line] = ("repeat" if repeated else "left out", why)
    return [(n, text, label, *got.get(n, ("not read", ""))) for n, (text, label) in enumerate(lines, start=1) if label]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="also list each line whose outcome is not its label's")
    parser.add_argument("--held-out", action="store_true", help="read the held-out lines instead")
    args = parser.parse_args()
    misses = args.misses
    read = outcomes(HELD_OUT if args.held_out else LINES)
    kind = "held-out lines" if args.held_out else "labelled lines"
    print(f"{len(read)} {kind} of one CLAUDE.md; rows: what a line is, columns: what import-rules did")
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
