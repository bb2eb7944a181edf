"""Credentials named by their key or said in words: `PASSWORD=...`, `--token ...`, name/value pairs,
"the password is X"."""

from __future__ import annotations

import functools
import itertools
import re

from lamar.safety.needles import Needles
from lamar.safety.placeholders import is_placeholder
from lamar.safety.plain import unaccented

_PASSWORD_WORDS = {"password", "passwd", "pass", "pwd", "passphrase", "pw", "psk"}  # psk: a Wi-Fi key
_PASSWORD_SUFFIXES = ("password", "passwd", "passphrase")
_SECRET_SUFFIXES = ("secret", "token", "apikey", "credential", "credentials", "privatekey", "secretkey",
                    "accesskey", "authkey")
_SECRET_PAIRS = {
    ("api", "key"), ("access", "key"), ("private", "key"), ("auth", "key"), ("auth", "token"),
    ("signing", "key"), ("encryption", "key"), ("master", "key"), ("client", "secret"),
    ("session", "key"), ("secret", "key"), ("account", "key"), ("basic", "auth"), ("app", "key"),
    ("subscription", "key"), ("shared", "key"), ("license", "key"), ("webhook", "secret"), ("admin", "key"),
}
_METADATA_WORDS = {
    "type", "ttl", "expiry", "expires", "expiration", "url", "uri", "endpoint", "path", "file", "name",
    "id", "length", "count", "limit", "size", "header", "env", "var", "field", "kind", "format", "mode",
    "dir", "location", "prefix", "len", "lifetime", "timeout", "duration", "age", "hint", "version",
    "enabled", "required", "provider", "method", "scheme", "algorithm", "alg", "rotation", "policy", "identity",
}
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


@functools.lru_cache(maxsize=4096)
def secret_key_kind(key: str) -> str | None:
    """'password' or 'secret' when an assignment's key names a credential, else None.

    >>> secret_key_kind("DB_PASSWORD"), secret_key_kind("githubToken"), secret_key_kind("max_tokens")
    ('password', 'secret', None)
    """
    words = [w.lower() for w in _WORD.findall(key)]
    if len(words) > 1 and words[-1] in _METADATA_WORDS:
        return None  # TOKEN_TYPE=bearer, PASSWORD_MIN_LENGTH=8: facts about a secret, not the secret
    # Suffixes catch run-together names (PGPASSWORD, MYTOKEN) but not TOKENIZER or BYPASS.
    if any(w in _PASSWORD_WORDS or w.endswith(_PASSWORD_SUFFIXES) for w in words):
        return "password"
    if any(w.endswith(_SECRET_SUFFIXES) or w == "pat" for w in words):  # AZURE_DEVOPS_EXT_PAT
        return "secret"
    if words == ["auth"]:
        return "secret"  # .npmrc _auth, Docker config.json "auth": base64 of user:password
    if any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words)):
        return "secret"
    return None


# Every key `secret_key_kind` names holds one of these, ignoring case: a text without any of them
# holds no keyed credential (a test checks the words above against it).
KEY_NEEDLES = Needles(tuple((word, True) for word in ("pass", "pw", "psk", "secret", "token", "key", "credential",
                                                      "pat", "auth")), None)

ASSIGNMENT = re.compile(
    r"""(?P<lead>^|(?<=[\s,;{(\[=])|(?<=\s-D))(?P<q>["']?)(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,80})(?P=q)"""
    r"""[ \t]*(?P<sep>:=|=>|=|:)[ \t]*"""
    # After a colon, words up to the line's end (or a YAML comment) are one value, as YAML reads them:
    # "password: correct horse battery staple" is a passphrase, not a password and three words.
    r"""(?P<secret>"[^"\n]{0,500}"|'[^'\n]{0,500}'"""
    r"""|(?<=:[ \t])[^\s"'`#][^\s"'`]{0,60}(?:[ \t]{1,8}[^\s"'`#][^\s"'`]{0,60}){1,11}(?=[ \t]*\r?$|[ \t]+\#)"""
    r"""|[^\s"'`]{1,500})""",
    re.MULTILINE,
)
CLI_FLAG = re.compile(
    # Any long flag ending in a password's name (--http-password, --db-passphrase) but a negation:
    # --no-password takes no value, and the word after it is the next argument.
    # So is one ending in "secret" (--access-key-secret, --app-secret), as Alibaba Cloud's CLI takes its key.
    r"""(?<!\S)--(?P<key>(?!no-)(?:[a-z0-9]+-){0,3}(?:password|passwd|passphrase)"""
    r"""|(?!no-)(?:[a-z0-9]+-){1,3}secret|pass|token|api-key|apikey|secret"""
    r"""|client-secret|access-token|auth-token|private-key)(?:=|[ \t]+)"""
    r"""(?P<secret>"[^"\n]*"|'[^'\n]*'|[^\s"'`-][^\s"'`]*)""",
    re.IGNORECASE,
)


def assignment_is_harmless(match: re.Match[str]) -> bool:
    kind = secret_key_kind(match.group("key"))
    if kind is None:
        return True
    if match.group("sep") == ":" and not (match.group("q") or _line_start(match) or _is_compound(match)):
        return True  # "the password: it expired" is prose, "password: hunter2" on its own line is YAML
    if match.group("sep") == ":" and describes_the_key(match.string, match.start("secret")):
        return True  # "password: must be at least 12 characters"
    value = match.group("secret").strip("\"'")
    if is_placeholder(value) or value.lower() == match.group("key").lower():
        return True
    if not match.group("q") and value.startswith(("{", "[")):
        return True  # YAML's flow mapping (secretKeyRef: { name: db, key: password }): its keys are read alone
    return kind != "password" and value.isdigit() and len(value) <= 10  # TOKEN_TTL=3600


# Words that start a description, or that two of its first words are, and seldom a passphrase's:
# "password: is required", "token: see below", "token: Bearer token that every request must carry".
_PROSE_TEXT = (
    "is are was were be been has have had must should will would can cannot could may might shall does do did not no"
    " the a an this that these those each every any its their our my his her"
    " to of for in on at by with from over under via per into after before without"
    " if when unless and or but as so then only also whether where which who see used set given read taken"
    " stored kept sent passed leave left never always same missing unset blank hidden shown")
_PROSE_WORDS = frozenset(_PROSE_TEXT.split())
# A note in brackets where the value would be: "(empty)", "(not set)", "(n/a)".
_ANNOTATION = re.compile(r"\([A-Za-z]+(?:[/-][A-Za-z]+)*\)?[.,;:]?")


def describes_the_key(text: str, start: int) -> bool:
    """Whether the line from `start`, just after a credential's key and its colon, is prose about the key.

    A lone word is taken for the value ("password: dragonfly"), and so are words none of which reads as
    prose ("password: correct horse battery staple"); "(empty)" or "(not set)" is a note, not a value.
    """
    end = text.find("\n", start)
    words = text[start : end if end >= 0 else len(text)][:200].split()
    if not words:
        return False
    if is_annotation(words[0]):
        return True
    first = [w.rstrip(".,;:!?)").lower() for w in words[:8]]
    if len(words) < 2 or not _PLAIN_WORD.fullmatch(words[0]) or first[0] in _WEAK_PASSWORDS:
        return False
    if first[0] in _PROSE_WORDS or is_placeholder(first[0]):  # "required field", "none of them"
        return True
    return sum(w in _PROSE_WORDS for w in first) >= 2


def is_annotation(value: str) -> bool:
    return _ANNOTATION.fullmatch(value) is not None and value.strip("().,;:").lower() not in _WEAK_PASSWORDS


def _line_start(match: re.Match[str]) -> bool:
    start = match.start("key") - len(match.group("q"))
    return match.string[match.string.rfind("\n", 0, start) + 1 : start].strip() in {"", "-"}


def _is_compound(match: re.Match[str]) -> bool:
    return len(_WORD.findall(match.group("key"))) > 1


def assignment_kind(match: re.Match[str]) -> str:
    return secret_key_kind(match.group("key")) or "secret"


def flag_kind(match: re.Match[str]) -> str:
    return "password" if "pass" in match.group("key").lower() else "secret"


def flag_is_harmless(match: re.Match[str]) -> bool:
    # Punctuation after a bare value ends the sentence, not the value ("-U alice%…,").
    return is_placeholder(match.group("secret").rstrip(",;:)}"))


def cli_flag_is_harmless(match: re.Match[str]) -> bool:
    """`flag_is_harmless`, and a bare --secret whose value names a secret manager's entry: a password
    flag's value is the password itself, and weak real ones read as words too (--password=super-secret)."""
    if flag_is_harmless(match):
        return True
    value = match.group("secret").rstrip(",;:)}")
    return match.group("key").lower() == "secret" and _names_a_secret(value)


_SECRET_NOUNS = frozenset(("password", "passwd", "secret", "token", "key", "credential"))
_SEPARATORS = str.maketrans("-_/.", "    ")


def _names_a_secret(value: str) -> bool:
    """Words that end in what they name: a secret manager's entry (gcloud secrets ... --secret=db-password)."""
    parts = value.translate(_SEPARATORS).split(" ")
    return (len(parts) > 1 and parts[-1].removesuffix("s") in _SECRET_NOUNS
            and all(p.isascii() and p.isalpha() and p.islower() for p in parts))


# Commands whose short flags carry a password, quoted or bare: docker login -p X, redis-cli -a X, curl -u user:X.
COMMAND_PASSWORD = re.compile(
    r"""\b(?:(?:docker|podman|helm|oras|skopeo|buildah)\s+(?:registry\s+)?login\b[^\n;|&]{0,200}?\s-p(?:[ \t]+|=)"""
    r"""|redis-cli\b[^\n;|&]{0,200}?\s-a[ \t]+|sshpass[ \t]+-p[ \t]*"""
    r"""|mysql(?:dump|admin)?\b[^\n;|&]{0,200}?\s-p(?=[^\s-])"""
    r"""|(?:curl|wget|http)\b[^\n;|&]{0,200}?\s(?:-u|--user)[ \t]+[^\s:"']{1,100}:)"""
    r"""(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"']{1,200})"""
)
# More of them, in a rule of their own so that each rule's words stay few enough to be searched
# for before its pattern runs: OpenSSL's -passin pass:X, keytool -storepass X, ldapsearch -w X,
# smbclient -U user%X.
PASS_ARGUMENT = re.compile(
    r"""(?:(?<!\S)-(?:(?:pass(?:in|out)|password)[ \t]+["']?pass:|(?:src|dest|new)?(?:store|key)pass[ \t]+)"""
    r"""|\bldap(?:search|modify|add|delete|passwd|compare|modrdn|whoami|exop)\b[^\n;|&]{0,200}?\s-w[ \t]+"""
    r"""|\b(?:smbclient|rpcclient)\b[^\n;|&]{0,200}?\s(?:-U[ \t]*|--user[= \t])["']?[^\s%"']{1,100}%)"""
    r"""(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"']{1,200})"""
)
# Windows' net use \\server\share <password> /user:name, or /user:name <password>; "*" asks for it.
NET_USE = re.compile(
    r"""(?i)\bnet use\b[^\n]{0,200}?(?:\\\\[^\s"]+|"\\\\[^"\n]+"|\s/u(?:ser)?:(?:"[^"\n]+"|\S+))[ \t]+"""
    r"""(?P<secret>"[^"\n]{1,200}"|[^\s"/*&|;<>][^\s"]{0,199})"""
)
# wpa_passphrase <ssid> <passphrase> prints a wpa_supplicant network block for that passphrase.
WPA_PASSPHRASE = re.compile(
    r"""\bwpa_passphrase[ \t]+(?:"[^"\n]*"|'[^'\n]*'|[^\s"'=|>]\S*)[ \t]+"""
    r"""(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"'|>;&][^\s]{0,199})"""
)


def command_is_harmless(match: re.Match[str]) -> bool:
    # A plain word where the password would go is prose about the command ("net use \\s\x to map it").
    return said_is_harmless(match.group("secret").rstrip(",;:)}"), "password")


# A password written as a literal in code: requests' and httpx's auth=("user", "secret"),
# HTTPBasicAuth("user", "secret"), .NET's NetworkCredential("user", "secret"), a client's login("user",
# "secret") (smtplib, imaplib, atproto); PowerShell's ConvertTo-SecureString '<password>' -AsPlainText.
AUTH_OBJECT = re.compile(
    r"""(?:\bauth\s*=\s*|(?:HTTP)?(?:Basic|Digest|Proxy)Auth|NetworkCredential"""
    r"""|\.(?:login|log_in|sign_in|authenticate))\(\s*"""
    r"""(?:"[^"\n]{0,100}"|'[^'\n]{0,100}')\s*,\s*"""
    r"""(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}')"""
)
SECURE_STRING = re.compile(
    r"""(?i)\bConvertTo-SecureString\s+(?:-String\s+)?(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}')"""
)
# Secrets given as a name/value pair: Kubernetes env, ECS task definitions, .NET appSettings.
NAME_VALUE = re.compile(
    r"""["']?\b(?:name|key)["']?\s*[:=]\s*["']?(?P<key>[A-Za-z_][\w.-]{0,80})["']?[\s,]{1,20}"""
    r"""(?:-\s*)?["']?value["']?\s*[:=]\s*(?P<secret>"[^"\n]{0,500}"|'[^'\n]{0,500}'|[^\s"',}/>]{1,500})"""
)
# An XML element named for a credential, on one line: Maven's settings.xml <password>, <apiKey>.
XML_ELEMENT = re.compile(
    r"""<(?P<key>[A-Za-z_][\w.-]{0,80})>[ \t]*(?P<secret>[^<>\s][^<>\n]{0,500}?)[ \t]*</(?P=key)>"""
)
# Call arguments: config.set("smtp_password", "..."), headers.set("X-Api-Key", "...").
KEY_ARGUMENT = re.compile(
    r"""(?P<q>["'])(?P<key>[A-Za-z_][\w.-]{0,80})(?P=q)\s*,\s*(?P<secret>"[^"\n]{1,500}"|'[^'\n]{1,500}')"""
)
COOKIE = re.compile(r"(?im)\b(?:set-)?cookie\s*:\s*(?P<secret>[^\s;=]{1,100}=[^\n]{1,4000})")
# A header written as one quoted string, as `curl -H 'X-Auth-Key: ...'` takes it.
QUOTED_HEADER = re.compile(
    r"""(?P<q>["'])(?P<key>[A-Za-z][A-Za-z0-9_-]{0,80})[ \t]*:[ \t]*(?P<secret>[^\s"']{1,500})[ \t]*(?P=q)"""
)
# Cookies given to a command: `curl -b 'session=...'`, `--cookie "a=1; b=2"` (a file name has no "=").
COMMAND_COOKIE = re.compile(
    r"""\b(?:curl|http|https|xh)\b[^\n;|&]{0,200}?\s(?:-b|--cookie)[ \t]+"""
    r"""(?P<secret>"[^"\n=]{1,100}=[^"\n]{0,4000}"|'[^'\n=]{1,100}=[^'\n]{0,4000}'|[^\s"'=]{1,100}=[^\s"']{1,4000})"""
)
_FORMAT = re.compile(r"%[-+ #0-9.]*[a-z]|\{[\w.!:]*\}")


def header_is_harmless(match: re.Match[str]) -> bool:
    """A quoted header whose name is no credential's, or whose value stands for one (`%s`, `{}`)."""
    return name_value_is_harmless(match) or _FORMAT.fullmatch(match.group("secret")) is not None


def cookie_is_harmless(match: re.Match[str]) -> bool:
    pairs = match.group("secret").strip("\"'").split(";")
    values = [pair.partition("=")[2].strip() for pair in pairs if "=" in pair]
    return not values or all(is_placeholder(value) for value in values)


# A cookie's attributes say how it is kept, never what it holds.
_COOKIE_ATTRIBUTES = {"path", "domain", "max-age", "expires", "samesite", "secure", "httponly", "priority",
                      "partitioned", "version", "comment"}


# Longest cookie value read as a word: a session id drawn from lowercase letters alone is longer.
_COOKIE_WORD = 10


def plain_cookie_is_harmless(match: re.Match[str]) -> bool:
    """A Cookie or Set-Cookie header whose every value is a short plain word or a placeholder (`theme=dark`)."""
    pairs = [pair.partition("=") for pair in match.group("secret").split(";")]
    # A ";" that ends the header ("theme=dark;") leaves an empty pair, which holds nothing.
    values = [value.strip() for name, eq, value in pairs
              if (name.strip() or eq) and name.strip().lower() not in _COOKIE_ATTRIBUTES]
    return all(value and (is_placeholder(value) or len(value) <= _COOKIE_WORD and said_is_harmless(value, "secret"))
               for value in values)


def name_value_is_harmless(match: re.Match[str]) -> bool:
    return secret_key_kind(match.group("key")) is None or is_placeholder(match.group("secret").strip("\"'"))


def name_value_kind(match: re.Match[str]) -> str:
    return secret_key_kind(match.group("key")) or "secret"


# Secrets said in prose: "the password is hunter2", "use the token abc123", "das Passwort lautet ...".
_PROSE_TAIL = (
    r"(?:\s+(?:for|of|to|on|in|at)\s+(?:the\s+|my\s+|our\s+|your\s+|this\s+)?[\w.@:/-]{1,60}"
    r"(?:\s+[\w.-]{1,30})?)?"
    r"(?:\s*[:=]|\s+(?:is|ist|was|are|were|became|reads|remains|lautet|est|es|é|är|er|jest|je|(?:is|was|has been|got)"
    r" (?:set|changed|reset)"
    r" to|is still|is now|stays|(?P<to>to)):?)\s+(?:just\s+|simply\s+|literally\s+|now\s+|still\s+)?"
    r"(?P<secret>\"[^\"\n]{3,200}\"|'[^'\n]{3,200}'|`[^`\n]{3,200}`|[^\s\"'`]{4,200})"
)
PROSE = re.compile(
    # Not \b before the key: an environment name joins it with "_" (SAUCE_ACCESS_KEY was set to ...).
    r"(?i)(?<![A-Za-z0-9])(?P<key>password|passphrase|passcode|passwd|passwort|kennwort|pw|pin(?: code)?"
    r"|secret(?: key)?|api[ _-]?key|access[ _-]?key|(?:access |auth |api |bearer |bot |personal access )?token"
    r"|credentials?|login)" + _PROSE_TAIL
)
# "Password" in the languages after English that lessons are most often written in: a rule of its
# own, so that each rule's words stay few enough to be searched for before its pattern runs.
_FOREIGN_PASSWORDS = ("mot de passe", "contraseña", "contrasena", "senha", "wachtwoord", "lösenord", "passord",
                      "hasło", "heslo", "parola d'ordine", "lozinka")
PROSE_FOREIGN = re.compile(r"(?i)\b(?P<key>" + "|".join(_FOREIGN_PASSWORDS) + ")" + _PROSE_TAIL)
# The same in Cyrillic: Russian, Ukrainian and Belarusian "пароль", Bulgarian "парола(та)", Serbian and
# Macedonian "лозинка(та)", said with a colon, a dash or "е", "је", "это". Its case is spelled out:
# under IGNORECASE a Cyrillic letter has look-alikes, and the rule would have no words to search for.
PROSE_CYRILLIC = re.compile(
    r"\b(?P<key>(?:[Пп]арол|ПАРОЛ)(?:ь|ата|а|Ь|АТА|А)|(?:[Лл]озинк|ЛОЗИНК)(?:ата|а|АТА|А))"
    r"(?:\s+(?:от|від|до|для|за|к|на)\s+[\w.@:/-]{1,60}(?:\s+[\w.-]{1,30})?)?"
    r"(?:\s*[:=]|\s+(?:[—–-]|это|—\s+это|е|је|є))\s+"
    r"(?P<secret>\"[^\"\n]{3,200}\"|'[^'\n]{3,200}'|`[^`\n]{3,200}`|«[^»\n]{3,200}»|[^\s\"'`«»]{4,200})"
)
PROSE_USE = re.compile(
    r"(?i)\b(?:use|with|using|enter|type|try|pass)\s+(?:the\s+)?(?P<key>password|passphrase|pin|token"
    r"|api key)\s+(?P<secret>\"[^\"\n]{3,200}\"|'[^'\n]{3,200}'|`[^`\n]{3,200}`|[^\s\"'`]{4,200})"
)
_WEAK_PASSWORDS = {"password", "changeme", "letmein", "hunter", "admin", "secret", "qwerty", "welcome",
                   "passw0rd", "root", "toor", "default", "guest", "master", "dragon", "monkey", "trustno"}
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*(?:[-'][a-z]+)*[.,;:!?)]*")


# "set the SMTP password to ...": a bare "to" after the key says what it is only after such a verb.
_SET_VERB = re.compile(r"(?i)\b(?:set|sets|setting|change|changed|changing|reset|resetting|update|updated)\b"
                       r"[^\n.;:!?]{0,60}$")


def prose_is_harmless(match: re.Match[str]) -> bool:
    if match.groupdict().get("to") and not _SET_VERB.search(match.string, max(0, match.start() - 80), match.start()):
        return True  # "the password to the staging box", "a token to sign with"
    return said_is_harmless(match.group("secret"), prose_kind(match))


def said_is_harmless(value: str, kind: str) -> bool:
    """Whether a value said to be a credential of `kind` is none: a placeholder, or a plain word."""
    if value[0] in "\"'`":
        return is_placeholder(value.strip("\"'`"))
    bare = value.rstrip(".,;:!?)")
    if is_placeholder(bare) or is_annotation(value) or (
            _PLAIN_WORD.fullmatch(unaccented(value)) and bare.lower() not in _WEAK_PASSWORDS):
        return True  # "the password is wrong", "the token was expired"
    return kind != "password" and bare.isdigit() and len(bare) <= 6  # token is 3600 s


def cyrillic_is_harmless(match: re.Match[str]) -> bool:
    value = match.group("secret").strip("«»")
    bare = value.rstrip(".,;:!?)")
    # A word in Cyrillic letters is prose ("пароль — неверный"), as a plain Latin word is.
    return said_is_harmless(value, "password") or (bare.isalpha() and not bare.isascii())


def prose_kind(match: re.Match[str]) -> str:
    key = match.group("key").lower()
    return "password" if key.startswith(("pass", "pin", "login", *_FOREIGN_PASSWORDS)) else "secret"


__all__ = ["ASSIGNMENT", "AUTH_OBJECT", "CLI_FLAG", "COMMAND_COOKIE", "COMMAND_PASSWORD", "COOKIE", "KEY_ARGUMENT",
           "KEY_NEEDLES", "NAME_VALUE", "NET_USE", "PASS_ARGUMENT", "PROSE", "PROSE_CYRILLIC", "PROSE_FOREIGN",
           "PROSE_USE", "QUOTED_HEADER", "SECURE_STRING", "WPA_PASSPHRASE", "XML_ELEMENT", "assignment_is_harmless",
           "assignment_kind", "cli_flag_is_harmless", "command_is_harmless", "cookie_is_harmless",
           "cyrillic_is_harmless", "flag_is_harmless", "flag_kind", "header_is_harmless", "name_value_is_harmless",
           "name_value_kind", "plain_cookie_is_harmless", "prose_is_harmless", "prose_kind", "said_is_harmless",
           "secret_key_kind"]
