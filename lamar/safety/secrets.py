"""Credential scrubbing: `scrub` replaces every credential in a text with `[REDACTED:<kind>]`."""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from lamar.safety.assignments import (
    ASSIGNMENT,
    AUTH_OBJECT,
    CLI_FLAG,
    COMMAND_COOKIE,
    COMMAND_PASSWORD,
    COOKIE,
    KEY_ARGUMENT,
    KEY_NEEDLES,
    NAME_VALUE,
    NET_USE,
    PASS_ARGUMENT,
    PROSE,
    PROSE_CYRILLIC,
    PROSE_FOREIGN,
    PROSE_USE,
    QUOTED_HEADER,
    SECURE_STRING,
    WPA_PASSPHRASE,
    XML_ELEMENT,
    assignment_is_harmless,
    assignment_kind,
    cli_flag_is_harmless,
    command_is_harmless,
    cookie_is_harmless,
    cyrillic_is_harmless,
    flag_is_harmless,
    flag_kind,
    header_is_harmless,
    name_value_is_harmless,
    name_value_kind,
    plain_cookie_is_harmless,
    prose_is_harmless,
    prose_kind,
    secret_key_kind,
)
from lamar.safety.contexts import CONTEXT_RULES
from lamar.safety.disguised import concatenated_spans, disguised_spans, redact_spans, split_behind
from lamar.safety.entropy import BODY, RUN, decodes_to_prose, in_public_block, looks_random
from lamar.safety.files import (
    PGPASS,
    TERRAFORM_DEFAULT,
    pgpass_is_harmless,
    table_spans,
    terraform_is_harmless,
    terraform_kind,
)
from lamar.safety.needles import LONG_RUN, Haystack, Needles, holds_key_run, needles
from lamar.safety.placeholders import PLACEHOLDER, REDACTED, is_placeholder, prefix_then_filler
from lamar.safety.plain import plain_text, unaccented
from lamar.safety.providers import (
    MATTERMOST_WEBHOOK,
    PROVIDER_TOKENS,
    VENDOR_KEYED,
    WEBHOOK_PATH,
    vendor_keyed_is_harmless,
    vendor_keyed_kind,
    webhook_is_harmless,
)
from lamar.safety.urls import URL_QUERY, URL_USERINFO, query_is_harmless, url_kind, url_password_is_harmless

# A token must not continue a longer word: "task-runner" holds "sk-" but is no key (the start is
# checked by `_continues_a_word`, the end by this lookahead).
_E = r"(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class _Rule:
    """One kind of credential: `pattern`'s group "secret" is replaced when `keep` says it is real."""

    kind: str
    pattern: re.Pattern[str]
    keep: Callable[[re.Match[str]], bool] | None = None  # True: a look-alike, leave it alone
    name: Callable[[re.Match[str]], str] | None = None  # a kind that depends on the match
    # A credential by its own shape: it must not continue a longer word. Checked in code, not by a
    # lookbehind, so a pattern that starts with a literal ("ghp_") gets the regex engine's fast
    # literal scan, which long text needs.
    token: bool = False
    # For rules whose key decides (PASSWORD=...): the pattern up to its secret, searched first, and
    # the whole pattern tried only where the key names a credential. Searching the whole pattern
    # would read every value, and again from its start where it is harmless, so crafted text such
    # as "a=a=a=..." would cost many characters of matching per character (`tools/scrub_speed.py`).
    head: re.Pattern[str] | None = None

    @functools.cached_property
    def needles(self) -> Needles | None:
        # Parsed on first use, not at import. Where the key decides, the key must name a credential.
        return needles(self.pattern) or (KEY_NEEDLES if self.head else None)


def _keyed(kind: str, pattern: re.Pattern[str], keep: Callable[[re.Match[str]], bool],
           name: Callable[[re.Match[str]], str]) -> _Rule:
    head = re.compile(pattern.pattern[:pattern.pattern.index("(?P<secret>")], pattern.flags)
    return _Rule(kind, pattern, keep, name, head=head)


# ---- the rules, most specific first ----------------------------------------------------------------

_AUTH_HEADER = re.compile(
    r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?P<scheme>bearer|basic|token|digest|bot|apikey|api-key"
    r"|sso-key|negotiate|oauth|ssws|key)(?:\s+|(?<=key)=)(?P<secret>[A-Za-z0-9._~+/=:-]{4,})"
)


def _auth_kind(match: re.Match[str]) -> str:
    return "basic-auth" if match.group("scheme").lower() == "basic" else "bearer-token"


def _auth_is_harmless(match: re.Match[str]) -> bool:
    return is_placeholder(match.group("secret"))


def _filler(match: re.Match[str]) -> bool:
    return prefix_then_filler(match.group("secret"))  # ghp_xxxx...: a README's stand-in, not a key


def _token(kind: str, body: str, flags: int = 0) -> _Rule:
    return _Rule(kind, re.compile(f"(?P<secret>{body})" + _E, flags), _filler, token=True)


_WORD_CHAR = re.compile(r"[A-Za-z0-9_]")


def _continues_a_word(match: re.Match[str]) -> bool:
    start = match.start()
    return start > 0 and _WORD_CHAR.match(match.string, start - 1) is not None


def _not_random(match: re.Match[str]) -> bool:
    # A run after "$" is a variable's name; after "h1:" a Go module checksum; after "base64," data
    # of a data: URL (an image, a font) that a page carries in the open.
    before = match.string[max(0, match.start() - 7):match.start()]
    if before.endswith(("$", "h1:", "base64,")):
        return True
    # An SSH key's fingerprint (ssh-keygen -l, a host-key warning) is public: SHA256: and the
    # digest in unpadded base64, always 43 characters.
    if before == "SHA256:" and len(match.group("secret")) == 43:
        return True
    return not looks_random(match.group("secret")) or decodes_to_prose(match.group("secret")) or in_public_block(match)


def _not_a_discord_id(match: re.Match[str]) -> bool:
    # A Discord bot token starts with its bot's user id, a number of 17 to 20 digits, in base64:
    # that is what tells it from a dotted name of the same shape.
    head = match.group("secret").split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return True
    return not (raw.isdigit() and 17 <= len(raw) <= 20)


# A Vault token of the format before 1.10 (s., b., r.) is short and has no long prefix: it counts
# only where its line names Vault or a token before it ("VAULT_TOKEN=", "Initial Root Token:",
# "vault login").
_VAULT_CONTEXT = re.compile(r"(?i)vault|token")


def _not_a_vault_token(match: re.Match[str]) -> bool:
    line = match.string[max(0, match.start() - 100):match.start()].rpartition("\n")[2]
    # Nearly every random body holds a digit; an attribute name (s.accessToken) seldom does.
    digit = any(c.isdigit() for c in match.group("secret"))
    return not (digit and _VAULT_CONTEXT.search(line))


# A PEM block with its END line goes whole, headers (Proc-Type:, DEK-Info:) and escaped line breaks
# ("\\n" in JSON) with it. One without (a truncated key) goes to its last line of base64: the
# text after it is not the key, and may hold a credential another rule must see from its start.
# Each scan stops at the next BEGIN and nothing in it backtracks, so hostile text cannot make it slow.
_PEM_LABEL = r"[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
_PEM_CHAR = r"(?:[A-Za-z0-9+/=\s\\:,]|-(?!----(?:END|BEGIN)))"
_PEM_BREAK = r"(?:\r?\n|\\r\\n|\\n)"
_PEM_LINE = (rf"(?:(?:{_PEM_BREAK}[ \t]*)+(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):"
             rf"[^\r\n\\]{{0,200}})[ \t]*(?={_PEM_BREAK}|\Z|[\"'`]))")
# A body flattened onto one line (its line breaks turned into spaces) goes chunk by chunk: chunks
# as long as a key's lines, then one short last chunk right after them. A word that follows a
# full-width last chunk goes with it: a word too many is redacted rather than a piece of the key kept.
_PEM_AFTER = rf"(?=[ \t]|{_PEM_BREAK}|\Z|[\"'`])"
_PEM_FLAT = rf"(?:[ \t]+[A-Za-z0-9+/]{{40,}}={{0,2}}{_PEM_AFTER})"
_PEM_TAIL = rf"(?:(?<=[A-Za-z0-9+/=]{{40}})[ \t]+[A-Za-z0-9+/]{{1,39}}={{0,2}}{_PEM_AFTER})"

# The prefixes of AWS access key ids (long-lived, temporary, and the other IAM kinds).
_AWS_ID = "(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)"

RULES: tuple[_Rule, ...] = (
    # Before the PEM rule, so a service-account file's key is named as such.
    _Rule("gcp-service-account-key", re.compile(
        r"\"private_key(?:_id)?\"\s*:\s*\"(?P<secret>-----BEGIN[^\"]{0,10000}|[0-9a-f]{40})\""
    )),
    _Rule("private-key", re.compile(
        rf"(?P<secret>-----BEGIN{_PEM_LABEL}(?:(?={_PEM_CHAR}*+-----END){_PEM_CHAR}*+-----END{_PEM_LABEL}"
        rf"|(?:{_PEM_LINE}|{_PEM_FLAT})*+{_PEM_TAIL}?))"
    )),
    # A PuTTY .ppk key file: the lines after "Private-Lines: N" are the key (lines are newline-
    # separated, so the repetition cannot split one line two ways and stays linear).
    _Rule("private-key", re.compile(
        r"Private-Lines:[ \t]*\d+[ \t]*\r?\n(?P<secret>[A-Za-z0-9+/=]{1,200}(?:\r?\n[A-Za-z0-9+/=]{1,200})*)"
    )),
    *(_token(kind, body) for kind, body in PROVIDER_TOKENS),
    _token("anthropic-api-key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    _token("openai-api-key",
           r"sk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]{0,300}[0-9])(?=[A-Za-z0-9_-]{0,300}[A-Za-z])"
           r"[A-Za-z0-9_-]{20,}"),
    _Rule("discord-bot-token", re.compile(
        r"(?P<secret>[MNO][A-Za-z0-9_-]{22,26}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})(?![A-Za-z0-9_-])"
    ), _not_a_discord_id, token=True),
    _token("google-api-key", r"AIza[0-9A-Za-z_-]{35}"),
    _token("github-token", r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}"),
    _token("gitlab-token", r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|ffct|imt|agent|oas)-[A-Za-z0-9_-]{20,}"),
    _token("slack-token", r"xox[abprse]-[A-Za-z0-9-]{10,}|xox[cd]-[A-Za-z0-9%-]{20,}|xapp-\d-[A-Za-z0-9-]{10,}"),
    _Rule("slack-webhook", re.compile(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9/_-]{8,})"
    )),
    _Rule("discord-webhook", re.compile(
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/(?P<secret>\d+/[A-Za-z0-9_-]{20,})"
    )),
    _Rule("mattermost-webhook", MATTERMOST_WEBHOOK),
    _Rule("webhook-url", WEBHOOK_PATH, webhook_is_harmless),
    _token("stripe-key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"),
    _token("huggingface-token", r"hf_(?=[A-Za-z0-9]{0,100}[A-Z])(?=[A-Za-z0-9]{0,100}[a-z])[A-Za-z0-9]{30,}"),
    _token("npm-token", r"npm_[A-Za-z0-9]{36}"),
    # .npmrc scopes its token to a registry: //registry.npmjs.org/:_authToken=<uuid>.
    _Rule("npm-token", re.compile(r"/:_auth(?:Token)?=(?P<secret>[^\s\"']{8,})")),
    _token("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,}"),
    _token("google-oauth-token", r"ya29\.[A-Za-z0-9_-]{20,}|1//0[A-Za-z0-9_-]{30,}"),
    _token("vault-token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    _Rule("vault-token",
          re.compile(r"(?<![\w.])(?P<secret>[sr]\.[A-Za-z0-9]{24}|b\.[A-Za-z0-9_-]{24,400})(?![\w-]|\.\w)"),
          _not_a_vault_token),
    _token("sendgrid-api-key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    _token("twilio-api-key", r"SK[0-9a-fA-F]{32}"),
    _token("twilio-account-sid", r"AC[0-9a-f]{32}"),
    # A secret access key has no prefix and, about one time in a thousand, not a digit, which
    # the rule for random runs needs; written right after its key id (a CSV row, the next line,
    # `id:secret`) it is a secret by where it stands.
    _Rule("aws-secret-key", re.compile(
        rf"(?<![A-Za-z0-9]){_AWS_ID}[A-Z0-9]{{16}}[\"']?(?:[ \t]*[,;:|=][ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+)[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
    )),
    _Rule("aws-access-key", re.compile(
        rf"(?<![A-Za-z0-9])(?P<secret>{_AWS_ID}"
        # Also broken after its prefix by a wrapped line, or by the space a lesson's prompt form makes
        # of that line break; the body then must hold a digit, as real ones do.
        r"(?:[A-Z0-9]{16}|(?:[ \t]*\r?\n[ \t]*|[ \t]{1,3})(?=[A-Z]{0,15}\d)[A-Z0-9]{16}))(?![A-Za-z0-9])"
    )),
    _Rule("aws-secret-key", re.compile(
        r"(?i)(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?(?:\s*[:=]\s*|[ \t]+)[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
    )),
    _Rule("azure-storage-key", re.compile(
        r"(?i)\b(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/=]{20,})"
    )),
    # A JWS has a JSON payload; a JWE (a NextAuth session, an encrypted ID token) five parts, its
    # key part empty when the key is shared: header, key, IV, ciphertext, tag.
    _token("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.(?:eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"
                  r"|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{11,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,})"),
    _Rule("bearer-token", _AUTH_HEADER, _auth_is_harmless, _auth_kind),
    _Rule("bearer-token", re.compile(
        r"(?i)(?<![A-Za-z])bearer\s+(?P<secret>(?=[A-Za-z0-9._~+/=-]{0,500}\d)[A-Za-z0-9._~+/=-]{20,})"
    )),
    _Rule("api-key-header", re.compile(
        r"(?i)(?<![/\w-])(?:x-api-key|api-key|x-auth-token|x-access-token|private-token|x-goog-api-key"
        r"|x-functions-key|ocp-apim-subscription-key|fastly-key)\s*:\s*(?P<secret>[^\s\"',;]{4,})"
    ), _auth_is_harmless),
    _Rule("cookie", COOKIE, plain_cookie_is_harmless),
    _Rule("cookie", COMMAND_COOKIE, cookie_is_harmless),
    _Rule("url-password", URL_USERINFO, url_password_is_harmless, url_kind),
    _Rule("url-token", URL_QUERY, query_is_harmless),
    # A token standing alone as the user name: https://<token>@host (Sentry DSNs, git remotes).
    _Rule("url-token", re.compile(
        r"://(?P<secret>(?=[A-Za-z0-9_-]{0,200}\d)(?=[A-Za-z0-9_-]{0,200}[A-Za-z])[A-Za-z0-9_-]{20,})@"
    )),
    _Rule("api-key", VENDOR_KEYED, vendor_keyed_is_harmless, vendor_keyed_kind),
    _Rule("password", COMMAND_PASSWORD, flag_is_harmless),
    _Rule("password", PASS_ARGUMENT, flag_is_harmless),
    # .netrc: machine <host> login <user> password <secret>, on one line or several.
    _Rule("password", re.compile(r"\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(?P<secret>[^\s\"']+)"),
          flag_is_harmless),
    _Rule("password", PGPASS, pgpass_is_harmless),
    *(_Rule(kind, pattern, keep) for kind, pattern, keep in CONTEXT_RULES),
    _Rule("password", NET_USE, command_is_harmless),
    _Rule("password", WPA_PASSPHRASE, command_is_harmless),
    _Rule("password", AUTH_OBJECT, flag_is_harmless),
    _Rule("password", SECURE_STRING, flag_is_harmless),
    _Rule("secret", CLI_FLAG, cli_flag_is_harmless, flag_kind),
    _keyed("secret", NAME_VALUE, name_value_is_harmless, name_value_kind),
    _keyed("secret", KEY_ARGUMENT, name_value_is_harmless, name_value_kind),
    _keyed("secret", QUOTED_HEADER, header_is_harmless, name_value_kind),
    _keyed("secret", XML_ELEMENT, name_value_is_harmless, name_value_kind),
    _Rule("secret", TERRAFORM_DEFAULT, terraform_is_harmless, terraform_kind),
    _keyed("secret", ASSIGNMENT, assignment_is_harmless, assignment_kind),
    _Rule("secret", PROSE, prose_is_harmless, prose_kind),
    _Rule("secret", PROSE_FOREIGN, prose_is_harmless, prose_kind),
    _Rule("password", PROSE_CYRILLIC, cyrillic_is_harmless),
    _Rule("secret", PROSE_USE, prose_is_harmless, prose_kind),
    # "the creds are admin/hunter2": a user and its password joined by a slash.
    _Rule("password", re.compile(
        r"(?i)\b(?:creds|credentials|login)\s*(?:[:=]|\s(?:are|is|were|was))\s*[\w.@+-]{1,64}/(?P<secret>[^\s/]{4,200})"
    ), flag_is_harmless),
)
REACH = 1_000
"""Most characters from a credential's start that `scrub` reads to redact it, so a text cut this far
past a credential's start still has it redacted. A shape with an end it must see is shorter (a
test keeps the longest, scheme://user:password@host, well under it); longer kinds (a PEM body, a cookie, a
keyed value, a random run, a token of unbounded length) are still matched when cut this long.
A caller that scrubs a piece of a long text must drop the piece's last REACH characters."""
# Run after every other rule and after the disguise search, so that each of them names its kind
# first: what is left of a long random run is a credential without a name (a bare AWS secret, an
# Azure key, a PEM body).
_RANDOM = _Rule("random-string", RUN, _not_random)
# Before it, a block of key lines, judged whole: one line of it may look plain by chance.
_BODY = _Rule("random-string", BODY, lambda match: in_public_block(match)
              or not looks_random("".join(match.group("secret").split())) or decodes_to_prose(match.group("secret")))
# Rules for a credential by its own shape (a provider prefix): safe to run on joined or reversed text.
# An AWS key id is one too, but in RULES it is no token: those skip text without a long key run
# (a run with a digit), and an id's body holds no digit about one time in thirty.
_SHAPE_RULES = (*(rule for rule in RULES if rule.token), _token("aws-access-key", rf"{_AWS_ID}[A-Z0-9]{{16}}"))


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def scrub(text: str) -> tuple[str, list[str]]:
    """Replace every credential in `text` with `[REDACTED:<kind>]`.

    The rules run in order, most specific first, so a provider key inside an `.env` line is named by
    its provider and the generic rules skip values that are already placeholders.

    Args:
        text: any text: a trace, a log, a lesson.

    Returns:
        The cleaned text and the kinds found (each once, in the order the rules found them).
        Scrubbing is idempotent: scrubbing the result again changes nothing and finds nothing.

    Raises:
        TypeError: `text` is not a string.

    >>> scrub("export OPENAI_API_KEY=sk-proj-4fQ9x2LmZ7vR1tY8uW3eK6pA0sD5gH")
    ('export OPENAI_API_KEY=[REDACTED:openai-api-key]', ['openai-api-key'])
    >>> scrub("run the task-runner at desk-lamp 3f2a1c9e")
    ('run the task-runner at desk-lamp 3f2a1c9e', [])
    """
    if not isinstance(text, str):
        raise TypeError(f"scrub() takes a string; got {type(text).__name__}")
    kinds: list[str] = []
    text = _redact_found(text, concatenated_spans(text, _shape_spans), kinds)
    cut = split_behind(text, plain := _scrub_plain(text, kinds), _shape_spans)
    text = _scrub_plain(_redact_found(text, cut, kinds), kinds) if cut else plain
    # Zero-width spaces or full-width letters hide a key from the rules, not from a model: where the text as
    # a model reads it holds more, that form is returned; then without accents ("…Mk5A" + acute is "Á").
    if not (text.isascii() and not _CONTROL.search(text)):  # else NFKC and the filter change nothing
        normal = plain_text(text)
        cleaned = _reread(text, normal, kinds)
        read = normal if cleaned is text else cleaned
        bare = unaccented(read)
        # Worth a pass only where taking accents off joins a longer run of key characters.
        longer = bare != read and LONG_RUN.findall(bare) != LONG_RUN.findall(read)
        text = _reread(cleaned, bare, kinds) if longer else cleaned
    text = _redact_found(text, disguised_spans(text, _shape_spans, _scrub_decoded), kinds)
    return _apply(_RANDOM, _apply(_BODY, text, kinds), kinds), kinds


def scrub_head(text: str, limit: int, *, using: Callable[[str], tuple[str, list[str]]] = scrub,
               reach: int | None = REACH) -> tuple[str, list[str]]:
    """`text` scrubbed as far as a cut at `limit` characters shows it: (cleaned, kinds found). A cut
    inside a credential leaves too little of it to recognise, so the scrubbed window reaches twice
    `reach` past the limit (all of `text` when `reach` is None) and grows while what scrubbing left
    of it does not reach `reach` past the limit. The caller cuts the result to `limit`.

    >>> scrub_head("token ghp_" + "a1B2c3D4e5" * 4, 20)[0][:20]
    'token [REDACTED:gith'
    """
    window = len(text) if reach is None else limit + 2 * reach
    cleaned, kinds = using(text[:window])
    while reach is not None and len(text) > window and len(cleaned) - reach < limit:
        window *= 2
        cleaned, kinds = using(text[:window])
    return cleaned, kinds


def _reread(text: str, shadow: str, kinds: list[str]) -> str:
    """`shadow` scrubbed when it shows credentials that `text` hid from the rules, else `text`."""
    if shadow == text:
        return text
    more: list[str] = []
    cleaned = _scrub_plain(shadow, more)
    if not more:
        return text
    kinds += [k for k in more if k not in kinds]
    return cleaned


def _scrub_plain(text: str, kinds: list[str]) -> str:
    shapes, hay = holds_key_run(text), Haystack(text)
    for rule in RULES:
        if (shapes or not rule.token) and hay.holds(rule.needles):
            cleaned = _apply(rule, hay.text, kinds, hay)
            hay = hay if cleaned is hay.text else Haystack(cleaned)
    # A table's cell is a credential by its column, which no one-line rule can see.
    return _redact_found(hay.text, table_spans(hay.text), kinds)


def _redact_found(text: str, spans: list[tuple[int, int, str]], kinds: list[str]) -> str:
    if not spans:
        return text
    kinds += [kind for kind in dict.fromkeys(kind for _, _, kind in spans) if kind not in kinds]
    return redact_spans(text, spans, PLACEHOLDER)


def _scrub_decoded(text: str) -> tuple[str, list[str]]:
    kinds: list[str] = []
    return _scrub_plain(plain_text(text), kinds), kinds


def _shape_spans(text: str) -> list[tuple[int, int, str]]:
    if not holds_key_run(text):
        return []
    spans, hay = [], Haystack(text)
    for rule in (rule for rule in _SHAPE_RULES if hay.holds(rule.needles)):
        pos = 0
        while (match := hay.search(rule.pattern, rule.needles, pos)) is not None:
            if _continues_a_word(match):
                pos = match.start() + 1
                continue
            if rule.keep is None or not rule.keep(match):
                spans.append((match.start("secret"), match.end("secret"), rule.name(match) if rule.name else rule.kind))
            pos = match.end()
    return spans


def _next(rule: _Rule, hay: Haystack, pos: int) -> re.Match[str] | None:
    """The rule's next match from `pos`, as `rule.pattern.search` would find it."""
    text = hay.text
    if rule.head is None:
        return hay.search(rule.pattern, rule.needles, pos)
    while pos <= len(text):
        for head in rule.head.finditer(text, pos):  # in C from one key to the next
            if secret_key_kind(head.group("key")) is not None:
                match = rule.pattern.match(text, head.start())
                if match is not None:
                    return match
                pos = head.start() + 1
                break
        else:
            return None
    return None


def _apply(rule: _Rule, text: str, kinds: list[str], hay: Haystack | None = None) -> str:
    pieces: list[str] = []
    done = pos = 0
    hay = hay or Haystack(text)
    while (match := _next(rule, hay, pos)) is not None:
        if rule.token and _continues_a_word(match):
            pos = match.start() + 1
            continue
        replacement = _redact(match, rule, kinds)
        if replacement == match.group(0):
            # A value may start a secret ("note: PASSWORD=..."); a block judged whole is not re-read line by line.
            pos = match.end() if rule.pattern is BODY else max(match.start() + 1, match.start("secret"))
            continue
        pieces += [text[done : match.start()], replacement]
        done = pos = match.end()
    return "".join(pieces) + text[done:] if pieces else text


def _redact(match: re.Match[str], rule: _Rule, kinds: list[str]) -> str:
    """The match with its secret replaced by a placeholder, or unchanged when it is no secret."""
    secret = match.group("secret")
    if REDACTED.match(secret.lstrip("\"'")) or (rule.keep is not None and rule.keep(match)):
        return match.group(0)
    start, end = match.start("secret") - match.start(0), match.end("secret") - match.start(0)
    quoted = len(secret) > 1 and secret[0] in "\"'" and secret[-1] == secret[0]
    if quoted:
        start, end = start + 1, end - 1
    else:
        # "PASSWORD=hunter2," in prose: the comma is punctuation, not part of the password.
        end -= len(secret) - len(secret.rstrip(".,;:)}"))
    if end <= start:
        return match.group(0)
    kind = rule.name(match) if rule.name else rule.kind
    if kind not in kinds:
        kinds.append(kind)
    whole = match.group(0)
    return whole[:start] + PLACEHOLDER.format(kind=kind) + whole[end:]


__all__ = ["PLACEHOLDER", "REACH", "RULES", "is_placeholder", "scrub", "scrub_head", "secret_key_kind"]
