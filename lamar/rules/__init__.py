"""The rules a project already gives its agents (CLAUDE.md, AGENTS.md, Cursor and Copilot rules), as lessons and back:
`import_rules` and `export_rules`."""

from __future__ import annotations

from lamar.rules.exporting import ExportResult, export_rules
from lamar.rules.importing import ImportPlan, import_rules, lesson_of, project_name
from lamar.rules.parse import Rule, parse_rules
from lamar.rules.sources import find_rule_files, read_sources

__all__ = ["ExportResult", "ImportPlan", "Rule", "export_rules", "find_rule_files", "import_rules", "lesson_of",
           "parse_rules", "project_name", "read_sources"]
