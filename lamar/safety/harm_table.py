"""`HARMS`: the commands and phrases that destroy what no undo brings back or switch off a check,
each with its reason, read by `lamar.safety.instructs` on text folded to lower case."""

from __future__ import annotations

import re

# A home or system directory, the whole of it or one level down (`/var/lib/<service>` too, where
# services keep their data), or a repository's history; deeper paths (`/var/lib/apt/lists/*`) are
# ordinary clean-ups, and so are a project's own folders (`build/`, `node_modules`) and `/tmp`.
_SYSTEM = r"(?:bin|boot|dev|etc|home|lib|lib64|proc|root|sbin|sys|usr|var|users)"
_TARGET = (
    rf"[\"'`]?(?:/|/\*|~/?\*?|\$\{{?home\}}?/?\*?|/{_SYSTEM}(?:/[\w.-]+)?/?\*?|/var/lib/[\w.-]+/?\*?"
    r"|\.git/?|[a-z]:\\?\*?)[\"'`]?(?=[.,:!?]*(?:$|[\s;|&)`]))"  # a sentence's stop may follow the path
)
_RECURSIVE = r"(?=(?:-[\w-]+\s+)*?(?:-[a-z]*r|--recursive\b))(?:-[\w-]+\s+)+"
# A database, schema or table whose name says it is a test's or a scratch one: a test suite resets it.
_SCRATCH = r"(?:if\s+exists\s+)?[\"`\[]?(?:\w+\.)?\w*(?:test|tmp|temp|scratch|sandbox|fixture|throwaway)"
_WORD = (
    r"(?:or|and|nor|on|in|to|for|from|with|statements?|commands?)\b"  # what follows a table's name, not one
)
CHECKED_OUT = "force-pushes whichever branch is checked out, a shared one too"
_SHARED = r"(?:main|master|trunk|develop|production|prod|release)"
# The shared branch itself, alone or at the end of a path or refspec (origin/main, HEAD:main, +main): a name that
# only starts or ends with it (main-fix, release-2.0, release/2.0, fix-main) is another branch, and so is the
# remote side of a refspec whose local side it is (main:main-fix).
_SHARED_NAME = rf"(?<![\w.-]){_SHARED}(?![\w-]|[./:]\w)"
# Short flags run together with an f among them (-f, -fu): the whole run is taken at once, since a run of
# letters split before and after each f would be tried every way on a long one that ends in a digit.
_FLAGS_F = r"-(?=[a-z]*f)[a-z]++"
# A lease spares commits the pusher has not seen, not the history others have pulled: on a shared branch it is
# still a rewrite of that history.
_FORCE = rf"(?:--force(?!-if-includes)(?:-with-lease(?:=\S*)?)?\b|\s{_FLAGS_F}\b)"
# The push ends here, or a sentence goes on ("git push --force and move on"): no branch named.
_PUSH_END = (
    r"(?=\s*(?:$|[;|&)`\"'.,])|\s+(?:to|and|then|after|when|if|so|because|once|before|until|again|now"
    r"|instead|whenever)\b)"
)
_CURRENT = r"(?:origin|upstream|head|\+head)"  # a remote, or the branch checked out, by name or as +HEAD
# Where "force push" is said as an instruction: opening a line or a clause, or after a word that leads in to a
# verb (a conjunction, a modal, "to", "by", "try", an adverb). After any other word it is a noun in a sentence
# about something else ("we discussed force push policies", "GitHub blocks force push"), and so after a subject.
_LEADS_IN = (
    "then",
    "and",
    "or",
    "so",
    "just",
    "simply",
    "always",
    "only",
    "also",
    "now",
    "first",
    "finally",
    "instead",
    "again",
    "safely",
    "freely",
    "quickly",
    "immediately",
    "manually",
    "directly",
    "please",
    "do",
    "let's",
    "to",
    "can",
    "could",
    "should",
    "must",
    "may",
    "might",
    "will",
    "would",
    "by",
    "try",
    "trying",
    "use",
    "using",
    "via",
    "with",
    "consider",
    "considering",
    "start",
    "keep",
    "recommend",
    "suggest",
)
_PUNCT = "[.;:!?,()\\[\\]*>\"'`_~/&\u2013\u2014-]"
_LED_IN = (
    rf"(?:(?<![^\n])|(?<={_PUNCT})|(?<={_PUNCT} )" + "".join(rf"|(?<=\b{word} )" for word in _LEADS_IN) + ")"
)
# The lookahead first: the lookbehinds are tried only where the words start, not at every character.
_SLOT = rf"(?=force){_LED_IN}"
# The same for switching off tests or hooks: "We discussed disabling flaky tests" and "CI fails if someone skips
# the hooks" name it in a sentence about something else.
_SWITCH_SLOT = rf"(?=disabl|comment|turn|bypass|silenc|mut|delet|remov|skip|mark){_LED_IN}"
# The verb as an instruction says it: "force push", "force-pushing", "force pushed" ("force pushed by the bot" is
# passive, "force pushes" says what someone does). Before the -ing form "to" is a preposition ("prefer merge
# commits to force pushing").
_FORCE_PUSH = r"(?!(?<=\bto )force[- ]?pushing)force[- ]?push(?:ed(?!\s+by\b)|ing)?(?![\w-])"
# "Force push" said as an instruction, naming no branch. Not a noun ("force push is disabled", "force push
# policies"), not with a lease ("with `--force-with-lease`" as code too), and not where a branch is named: a
# shared one is the shared-branch pattern's, another ("origin/fix", "the staging branch") is not shared.
_PUSH_WORDS = (
    rf"{_SLOT}{_FORCE_PUSH}(?!\s+(?:is|was|are|were|has|had|will|would|can|could|may|might|does|did|protection"
    r"|rules?|permissions?|polic(?:y|ies)|rights?|access|settings?|options?|flags?|events?|restrictions?"
    r"|privileges?|guidelines?|warnings?|alerts?|notifications?|detection|attempts?)\b"
    r"|\s+(?:with[- ]lease|(?:(?:with|using)\s+)?[`\"']?--force-with-lease)\b)"
    rf"(?!(?:\s+(?:it|them|this|that|the|your|my|our|changes|commits))*(?:\s+(?:to|onto|over))?"
    rf"\s+(?:(?:the|your|my|our)\s+)?(?:{_SHARED}\b|origin/|upstream/|[\w.-]+/[\w.-]|[\w.-]+\s+branch\b))"
)

HARMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "destroys what cannot be recovered",
        re.compile(
            rf"\brm\s+{_RECURSIVE}(?:--\s+)?{_TARGET}"
            r"|\brm\s+[^\n;|&]{0,100}--no-preserve-root"
            rf"|\bfind\s+{_TARGET}[^\n;|&]{{0,200}}\s-delete\b"
            r"|\bmkfs(?:\.\w+)?\s+(?:-\S+\s+)*\S*/dev/"
            r"|\b(?:dd|cat|pv)\b[^\n;|&]{0,200}(?:\bof=|>\s*)/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|mapper/)"
            r"|\b(?:wipefs|shred|blkdiscard)\b[^\n;|&]{0,100}/dev/"
            r"|\bformat\s+[a-z]:(?=$|[\s;/])|\b(?:rd|rmdir|del)\s+/s\s+/q\s+[a-z]:\\?(?=$|[\s;])"
            rf"|\bdrop\s+(?:database|schema)\s+(?!{_SCRATCH})\S|\bdropdb\s+(?!--help)(?:-\S+\s+)*(?!{_SCRATCH})\S"
            # A table unless `if exists`, the set-up line of a migration or a test script, which re-creates it.
            rf"|\bdrop\s+table\b(?!\s+if\s+exists\b|\s+{_SCRATCH})(?:\s+(?!{_WORD})[\w.\"`\[]+)?"
            rf"|\btruncate\s+table\b(?!\s+{_SCRATCH})(?:\s+(?!{_WORD})[\w.\"`\[]+)?"
            rf"|\btruncate\s+(?:only\s+)?(?!{_SCRATCH})[\w.\"`]+(?:\s*,\s*[\w.\"`]+)*\s*(?:;|\bcascade\b|$)"
            r"|\bflush(?:all|db)\b"
            r"|\b(?:drop|delete|wipe|erase|destroy|nuke)\s+(?:the\s+|all\s+)?(?:prod|production|live)\s+"
            r"(?:database|db|data|tables?|bucket|cluster)\b"
            r"|\bgit\s+reset\s+--hard\b[^\n]{0,200}?\bgit\s+clean\s+-[a-z]*(?:x[a-z]*f|f[a-z]*x)"
            r"|\bkubectl\s+delete\s+(?:-\S+\s+)*(?:namespaces?|ns)\b"
            r"|\bkubectl\s+delete\b[^\n;|&]{0,100}--all-namespaces\b"
            r"|\b(?:terraform|tofu|pulumi|cdk)\s+destroy\b"
            r"|\baws\s+s3\s+rb\b|\baws\s+s3\s+rm\s+s3://\S+\s+--recursive|\b(?:gsutil|gcloud\s+storage)\s+rm\s+-r\b"
            r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
        ),
    ),
    (
        "force-pushes over a shared branch",
        re.compile(
            # Within one code span: "`git push --force` is never OK on main" names main outside the command.
            rf"\bgit\s+push\b[^\n;|&`]{{0,200}}?{_FORCE}[^\n;|&`]{{0,200}}?{_SHARED_NAME}"
            rf"|\bgit\s+push\b[^\n;|&`]{{0,200}}?{_SHARED_NAME}[^\n;|&`]{{0,200}}?{_FORCE}"
            rf"|\bgit\s+push\b[^\n;|&`]{{0,200}}?\s\+{_SHARED_NAME}"
            # Every branch, the shared ones among them.
            rf"|\bgit\s+push\b[^\n;|&`]{{0,200}}?(?:\s--mirror\b|{_FORCE}[^\n;|&`]{{0,200}}?\s--all\b"
            rf"|\s--all\b[^\n;|&`]{{0,200}}?{_FORCE})"
            rf"|{_SLOT}{_FORCE_PUSH}(?:\s+(?:it|that|them|this|the|branch|changes|commits))*"
            rf"(?:\s+(?:to|onto|over))?\s+(?:origin/|the\s+)?{_SHARED_NAME}"
        ),
    ),
    (
        "deletes a shared branch",
        re.compile(
            rf"\bgit\s+push(?:\s+[^\s;|&]+){{0,3}}?\s+(?:--delete|-d)(?:\s+[^\s;|&]+){{0,2}}?\s+(?:refs/heads/)?"
            rf"{_SHARED_NAME}"
            rf"|\bgit\s+push\s+(?:-\S+\s+)*[\w.-]+\s+:(?:refs/heads/)?{_SHARED_NAME}"
        ),
    ),
    # No branch named: the push overwrites the one the agent is on, which may be main as well as its own.
    (
        CHECKED_OUT,
        re.compile(
            rf"\bgit\s+push(?=(?:\s+{_CURRENT})*\s+(?:--force(?![\w-])|{_FLAGS_F}\b|\+head\b))"
            rf"(?:\s+(?:{_FLAGS_F}|--force(?![\w-])|{_CURRENT}))+{_PUSH_END}"
            rf"|{_PUSH_WORDS}"
        ),
    ),
    (
        "opens files to every user",
        re.compile(
            r"\bchmod\s+(?:-\S+\s+)*(?:0?777|a\+rwx|ugo\+rwx|a=rwx)\b"
            rf"|\b(?:chmod|chown|chgrp)\s+{_RECURSIVE}\S+\s+{_TARGET}"
        ),
    ),
    (
        "switches off tests, hooks or verification",
        re.compile(
            r"\bgit\s+(?:commit|push|merge|rebase|am)\b[^\n;|&]{0,100}?--no-verify\b|--no-verify\b"
            r"|\bgit\s+commit\s+(?:-\S+\s+)*-[a-z]*n[a-z]*\b(?!\S)"
            r"|\bcore\.hookspath\s+/dev/null|\brm\s+(?:-\S+\s+)*\.git/hooks\b|\bhusky(?:_skip_hooks)?=[01]\b"
            rf"|{_SWITCH_SLOT}(?:disabl|comment(?:ing)? out|turn(?:ing)? off|bypass|silenc|mut)(?:e|es|ed|ing|s)?\s+"
            r"(?:the\s+|all\s+|any\s+)*"
            r"(?:failing\s+|flaky\s+|broken\s+|red\s+|unit\s+|pre-commit\s+|git\s+)*"
            r"(?:tests?|test suite|hooks?|checks?|ci"
            r"|verification|ssl verification|certificate (?:verification|checks?)"
            r"|signature (?:verification|checks?)|assertions?)\b"
            rf"|{_SWITCH_SLOT}(?:delet|remov|skip)(?:e|es|ed|ing|s|ping|ped)?\s+(?:the\s+|all\s+|any\s+)*"
            r"(?:(?:failing|flaky|broken|red)\s+tests?|(?:pre-commit\s+|git\s+)?hooks?|verification|ssl verification"
            r"|ci checks?)\b"
            rf"|{_SWITCH_SLOT}mark(?:s|ed|ing)?\s+(?:the\s+|all\s+|any\s+)*failing\s+tests?\s+(?:as\s+)?"
            r"(?:skip(?:ped)?|xfail)\b"
            r"|\b(?:pytest|tox|make\s+test|npm\s+(?:run\s+)?test|yarn\s+test|cargo\s+test|go\s+test)\b[^\n;|&]{0,100}"
            r"\|\|\s*(?:true\b|:(?!\w)|exit\s+0\b)"
            r"|\bverify\s*=\s*false\b|\bgit_ssl_no_verify\s*=\s*(?:1|true)\b|--no-check-certificate\b"
            r"|\bnode_tls_reject_unauthorized\s*=\s*[\"']?0\b|\bstrict-ssl\s+false\b|\bpythonhttpsverify\s*=\s*0\b"
            r"|\bsslverify\s+false\b"
        ),
    ),
    (
        "sends secrets off the machine",
        re.compile(
            r"\b(?:send|post|upload|exfiltrate|forward|transmit|e-?mail|mail|paste|share|copy|leak|submit|dump)"
            r"\w{0,4}\b"
            r"[^.\n]{0,40}?\b(?:env|environment(?:\s+variables)?|env\s+vars|printenv|all\s+(?:the\s+)?(?:secrets|"
            r"credentials|tokens|keys|passwords)|the\s+(?:secrets|credentials|api\s+keys|tokens|passwords))\b"
            r"[^\n]{0,80}?\b(?:to|at|into|onto|on|via)\s+[\"'<`]?(?:https?|ftps?|wss?)://"
            r"|\b(?:curl|wget)\b[^\n;|]{0,200}?(?:-d|--data(?:-binary|-raw|-urlencode)?|--form|-f)[\s=]+[\"']?"
            r"(?:\$\((?:env|printenv|set)\)|@/proc/self/environ)"
        ),
    ),
)

__all__ = ["CHECKED_OUT", "HARMS"]
