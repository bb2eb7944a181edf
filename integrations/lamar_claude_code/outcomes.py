"""Outcomes from behaviour: what the next prompt says about the last one, and what git did with the edits
(the table of outcomes is in docs/claude-code.md)."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from typing import Any

CORRECTION_RULES: tuple[str, ...] = (
    # A polite "no" that lets the answer stand ("no worries", "no, that's fine") moves on.
    (r"(?i)^\W*(?:no|nope|nah)\b(?!\W*(?:worries|problem|probs?|need|rush|biggie|thanks|thank\s+you|all\s+good)\b)"
     r"(?!\W*(?:that|it)(?:'s|\s+is|\s+was)\s+(?:fine|ok|okay|good|great|perfect|alright|all\s+right)\b)"),
    # "don't worry about ..." lets the answer stand, as "no worries" does.
    r"(?i)^\W*(?:please\s+)?(?:wrong|incorrect|stop|undo|revert|roll\s*back|(?:don'?t|do\s+not)(?!\s+worry\b))\b",
    r"(?i)^\W*(?:try\s+(?:it\s+|that\s+|this\s+)?again|I\s+said)\b",
    # At a clause's end only: "failing now and then" is no report of a failure.
    r"(?i)(?<!\bnot\s)\b(?:failing|broken|crashing)\s+(?:now|again)\s*(?:[.!?,;:]|$)",
    r"(?i)\bstill\s+(?:does\s*n[o']?t|do\s*n[o']?t|wo\s*n[o']?t|can'?t)\s+(?:compile|build|run|pass|load|start)\b",
    r"(?i)\byou\s+(?:deleted|removed|overwrote|wiped|lost)\s+(?:my|our)\b",
    r"(?i)\b(?:undo|revert|roll\s*back|back\s*out)\s+(?:that|this|it|those|these|the\s+(?:change|edit|last))",
    r"(?i)\b(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+(?:right|what|correct)|broken)",
    r"(?i)\b(?:that|this|it|you)\s+(?:just\s+)?broke\b",
    r"(?i)\bnot\s+what\s+I\s+(?:asked|meant|wanted)\b",
    r"(?i)\b(?:still|now)\s+(?:fails?|failing|broken|crash\w*|errors?)\b",
    r"(?i)\b(?:does\s*n[o']?t|did\s*n[o']?t|is\s*n[o']?t)\s+work\w*\b",
    r"(?i)\bwhy\s+did\s+you\b",
    r"(?i)^\W*not\s+(?:quite|it|right|really)\b",
    r"(?i)\b(?:that|this|it)(?:'s|\s+is|\s+was)\s+not\s+it\b",
    r"(?i)\b(?:that|this|it)(?:'s|\s+is|\s+was|\s+made\s+(?:it|things)|\s+got)\s+(?:even\s+)?worse\b",
    # "still getting" a failure, not "still getting started" or "still seeing how it fits".
    (r"(?i)\bstill\s+(?:wrong|incorrect|not\s+(?:working|right|fixed|passing|compiling)"
     r"|(?:getting|seeing)\s+(?:the\s+same|an?|errors?|failures?|exceptions?|it|this|that|\d)"
     r"|the\s+same\s+(?:error|bug|problem|issue|failure))\b"),
    r"(?i)\bsame\s+(?:error|failure|problem|issue|bug|exception|traceback)\s+(?:as\s+before|again)\b",
    r"(?i)\b(?:put|change|set|turn)\s+(?:it|that|this|them)\s+back\b",
    r"(?i)\bgo\s+back\s+to\s+(?:the\s+)?(?:previous|old|original|earlier)\s+(?:version|code|one|implementation)\b",
    r"(?i)\byou\s+(?:misunderstood|misread|got\s+it\s+wrong)\b",
    r"(?i)\b(?:that|this|it)\s+(?:does\s*n[o']?t|did\s*n[o']?t|wo\s*n[o']?t)\s+(?:compile|build|run|pass|load|start)\b",
    # A failure the last turn brought ("now it crashes", "it fails with TypeError now", "the build is red now"),
    # not one it took away ("it doesn't fail now"); raising may be what was asked, so it is no failure word here.
    # A verb said of something, not a noun or a wish: "fix the broken link now", "handle the crash now", "make
    # the parser fail now" and "add a test that fails now" ask for work.
    r"(?i)\bnow\s+(?:it\s+)?(?:crashes|errors|fails)\b",
    (r"(?i)(?<!n't\s)(?<!not\s)(?<!never\s)(?<!longer\s)(?<!\bthat\s)(?<!\bwhich\s)"
     r"\b(?:fail(?:s|ed|ing)|crash(?:es|ed|ing)|(?:is|are|'s|'re|was|were|got|looks?)\s+broken"
     r"|(?:is|are|went|turned)\s+red)\b[^.\n]{0,80}\bnow\s*(?:[.!?,;:]|$)"),
    r"(?i)\bI\s+(?:did\s*n[o']?t|never)\s+(?:ask|want|say|tell)\b",
)
_WORD = re.compile(r"[a-z0-9_]+")
_STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "for", "with", "from", "by", "is", "are",
     "was", "were", "be", "been", "it", "this", "that", "these", "those", "i", "you", "we", "me", "my", "our",
     "your", "please", "can", "could", "would", "should", "will", "just", "again", "now", "also", "so", "then",
     "than", "as", "do", "does", "did", "not", "no", "yes", "ok", "okay", "hey"]
)
FOLLOWUP_SCAN = 4000  # characters of a prompt the correction rules look at
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def read_followup(previous: str | Sequence[str], prompt: str, corrected: Sequence[str] = (),
                  overlap: float = 0.6) -> tuple[str, str]:
    """The signal the next prompt gives the previous episode, and why.

    The next prompt rejects or corrects: CORRECTED; asks the same thing again (word overlap >=
    `overlap`, the config's `reasked_overlap`): REASKED; moves on: ACCEPTED.

    Args:
        previous: the previous prompt, or its `prompt_words` (what the hooks keep: no prompt text).
        prompt: the next prompt.
        corrected: more patterns that mark a correction, checked before the built-in ones.
        overlap: the word overlap that makes a re-ask.

    Returns:
        ("corrected" | "reasked" | "accepted", a short reason for the audit).

    >>> read_followup("make the button blue", "no, that's wrong")
    ('corrected', "next prompt corrects: 'no'")
    >>> read_followup("make the button blue", "thanks, now add a footer")[0]
    'accepted'
    """
    text = prompt[:FOLLOWUP_SCAN]
    for pattern in (*corrected, *CORRECTION_RULES):
        match = re.search(pattern, text)
        if match:
            return "corrected", f"next prompt corrects: {match.group(0).strip()[:60]!r}"
    before = set(prompt_words(previous) if isinstance(previous, str) else previous)
    score = _jaccard(before, set(prompt_words(text)))
    if score >= overlap:
        return "reasked", f"next prompt repeats the last, {score:.2f} word overlap"
    return "accepted", f"next prompt moves on, {score:.2f} word overlap"


def prompt_words(prompt: str) -> list[str]:
    """A prompt's content words, each as a short hash: enough to tell a re-ask, with no text to leak.

    The hooks keep these between prompts instead of the prompt, which may hold a pasted secret.
    """
    words = {w for w in _WORD.findall(prompt[:FOLLOWUP_SCAN].lower()) if w not in _STOPWORDS}
    return sorted(hashlib.sha256(w.encode()).hexdigest()[:12] for w in words)


def prompt_key(prompt: str) -> str:
    """A hash of a prompt's first 200 characters: how a transcript's prompt is matched to its episode."""
    return hashlib.sha256(prompt[:200].encode("utf-8", "replace")).hexdigest()[:16]


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the content words of two prompts (0 when either has none)."""
    return _jaccard(set(prompt_words(a)), set(prompt_words(b)))


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def git(repo: str, *args: str, timeout: float = 5.0) -> str | None:
    """stdout of a git command in `repo`, or None when git fails (no repo, no git, a timeout)."""
    try:
        # core.fsmonitor off: it names a command git runs here, and a repository unpacked from someone's archive
        # brings its own .git/config, which the hooks (and cron) would otherwise run at every event
        done = subprocess.run(["git", "-C", repo, "-c", "core.fsmonitor=false", *args], capture_output=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def head_commit(repo: str) -> str | None:
    """The commit HEAD points at, read from the files of `.git` (no process); git itself when in doubt.

    None when the repository has no commit yet.
    """
    git_dir = os.path.join(repo, ".git")
    try:
        if os.path.isdir(git_dir):
            with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as handle:
                head = handle.read().strip()
            if _SHA.fullmatch(head):
                return head  # detached
            ref = head.removeprefix("ref: ")
            loose = os.path.join(git_dir, *ref.split("/"))
            if os.path.isfile(loose):
                with open(loose, encoding="utf-8") as handle:
                    sha = handle.read().strip()
                if _SHA.fullmatch(sha):
                    return sha
    except OSError:
        pass
    found = git(repo, "rev-parse", "--verify", "-q", "HEAD")  # packed refs, worktrees, no commit yet
    return found.strip() if found else None


def read_git(repo: str, episode: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """What git says about an episode's edits now: (signal, reason, commit) or None (nothing yet).

    An edited file that lands in a commit is SHIPPED (replacing any prompt outcome); that commit
    reverted, or the edits discarded before any commit, is REVERTED (replacing SHIPPED or a prompt
    outcome); `dropped.read_outcome` adds a commit thrown away by `git reset`. Git outcomes are
    stronger than prompt outcomes: a prompt never replaces REVERTED, which is final, and replaces SHIPPED only
    with CORRECTED (the next prompt rejects the work the turn committed), which only a revert then replaces.

    Args:
        repo: the repository's top level.
        episode: the state record (files relative to `repo`, base commit, signal, commit).
    """
    files = [f for f in episode.get("files", []) if isinstance(f, str)]
    if not files:
        return None
    if episode.get("signal") in ("shipped", "corrected") and episode.get("commit"):  # corrected after it shipped
        sha = episode["commit"]
        reverted = _reverted(repo, sha)
        return ("reverted", f"commit {sha[:12]} was reverted by {reverted[:12]}", sha) if reverted else None
    base = episode.get("base")  # HEAD when the episode first edited: later commits are past it
    log = git(repo, "log", "--all", *([f"^{base}"] if base else []), "--format=%x00%H", "--name-only", "-n", "50",
              "--", *files)
    if log is None:
        return None
    for block in reversed(log.split("\0")[1:]):  # the oldest commit past the edit is the one that shipped it
        sha, _, names = block.partition("\n")
        touched = sorted(set(files) & {n.strip() for n in names.splitlines() if n.strip()})
        if touched:
            sha = sha.strip()
            reverted = _reverted(repo, sha)  # a commit reverted before any hook looked never counts as shipped
            if reverted:
                return "reverted", f"commit {sha[:12]} was reverted by {reverted[:12]}", sha
            return "shipped", f"{', '.join(touched[:3])} landed in commit {sha[:12]}", sha
    status = git(repo, "status", "--porcelain", "--ignored", "--untracked-files=all", "--", *files)
    if status is None:
        return None
    if not status.strip():
        return "reverted", f"edits to {', '.join(files[:3])} were discarded before any commit", None
    return None


def note_edit(episodes: Iterable[dict[str, Any]], record: dict[str, Any], relative: str) -> None:
    """Watch `relative` for `record`'s turn, which edited it. An earlier turn of the same session that the
    next prompt rejected (corrected, re-asked) lets go of the file: from now on the file holds this turn's
    redo, and a commit of it ships the redo, not the rejected edit."""
    if relative not in record["files"]:
        record["files"].append(relative)
    for other in episodes:
        if (other is not record and other.get("session") == record.get("session")
                and other.get("repo") == record.get("repo") and other.get("signal") in ("corrected", "reasked")
                and relative in other.get("files", ())):
            other["files"].remove(relative)


def unchanged(tool_response: Any) -> bool:
    """Whether a Write left its file as it was: Claude Code's answer holds the file before and after.

    Such a file stays clean, as a discarded edit leaves it, so git would read the turn as reverted.
    """
    return (isinstance(tool_response, dict) and isinstance(tool_response.get("originalFile"), str)
            and tool_response.get("content") == tool_response["originalFile"])


def _reverted(repo: str, sha: str) -> str:
    """The commit that reverts `sha` ("" when none does)."""
    found = git(repo, "log", "--all", "--format=%H", "-F", f"--grep=This reverts commit {sha}", "-n", "1")
    return found.strip() if found else ""


__all__ = [
    "CORRECTION_RULES",
    "git",
    "head_commit",
    "note_edit",
    "prompt_key",
    "prompt_words",
    "read_followup",
    "read_git",
    "unchanged",
    "word_overlap",
]
