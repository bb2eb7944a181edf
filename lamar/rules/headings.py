"""Which headings above a rule name the situation it holds in, and which only say that rules follow."""

from __future__ import annotations

import re

# A heading made only of these words ("Core Development Rules", "Coding Guidelines", "Notes for AI Agents")
# names what the text is, or that it holds for all the work: every rule under it would carry it, so it
# tells no lesson from another. Any other word ("Testing Requirements", "Code Style") names a situation.
_RULES = frozenset([
    "rule", "rules", "guideline", "guidelines", "convention", "conventions", "instruction", "instructions",
    "note", "notes", "requirement", "requirements", "principle", "principles", "practice", "practices",
    "standard", "standards", "guidance", "guide", "policy", "policies", "tip", "tips", "reminder", "reminders",
    "philosophy", "overview", "information", "info", "directive", "directives", "expectation", "expectations",
])
_EVERYWHERE = frozenset([
    "general", "important", "core", "key", "critical", "essential", "basic", "basics", "best", "common", "main",
    "overall", "global", "additional", "other", "misc", "miscellaneous", "development", "developer", "developers",
    "coding", "project", "projects", "repository", "repo", "codebase", "contribution", "contributions", "ai",
    "agent", "agents", "assistant", "assistants", "claude", "codex", "copilot", "cursor", "llm", "llms",
    "all", "of", "for", "the", "this", "and", "a", "an", "our", "your", "to", "in", "on",
])
_WORD = re.compile(r"[^\W_]+")


def situational(heading: str, project: str) -> bool:
    """Whether `heading` names a situation: it has a word that is neither one for rules, nor one for all
    the work, nor in the project's name ("shop" in "Shop conventions")."""
    own = {word.lower() for word in _WORD.findall(project)}
    return any(w not in _RULES and w not in _EVERYWHERE and w not in own
               for w in (word.lower() for word in _WORD.findall(heading)))


__all__ = ["situational"]
