"""Credentials known by what stands around them, not by their own shape: a command's or a call's argument,
a device API's path, an environment name. `CONTEXT_RULES` holds (kind, pattern, keep) for `secrets.RULES`."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from lamar.safety.assignments import command_is_harmless
from lamar.safety.placeholders import is_placeholder

_VALUE = r"""(?P<secret>"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s"'|>;&][^\s"']{0,199})"""

# PowerShell passes a password as -Password <value> or -Password:<value> (Connect-VIServer, Invoke-Sqlcmd,
# New-PSDrive's helpers), and so do a few Unix tools with one dash. OpenSSL's "-password pass:X" and the
# like are PASS_ARGUMENT's; here their "pass:" would be read as part of the password.
SINGLE_DASH_PASSWORD = re.compile(r"(?i)(?<!\S)-pass(?:word|wd)(?::|[ \t]+)(?!(?:pass|env|file|fd):|stdin\b)" + _VALUE)
# Sysinternals' PsExec (and PAExec, which copies its flags): -u <user> -p <password>.
PSEXEC_PASSWORD = re.compile(r"(?i)\b(?:psexec(?:64)?|paexec)(?:\.exe)?\b[^\n;|&]{0,200}?\s-p[ \t]+" + _VALUE)
# CLIs whose -t takes an API token: Codecov's uploader, DigitalOcean's doctl.
SHORT_TOKEN_FLAG = re.compile(r"\b(?:codecov|doctl)\b[^\n;|&]{0,200}?\s-t[ \t]+" + _VALUE)
# An Ethereum account's private key, 64 hex digits, where a wallet is made from it: Hardhat's
# `accounts: ["0x..."]`, ethers' `new Wallet("0x...")`, viem's `privateKeyToAccount("0x...")`. A bare
# 0x and 64 hex digits is as often a transaction's or a block's hash, which is public.
WALLET_KEY = re.compile(
    r"""(?:\baccounts\s*:\s*\[\s*|\b(?:Wallet|privateKeyToAccount|fromPrivateKey)\(\s*)"""
    r"""(?P<secret>(?P<q>["'])(?:0x)?[a-fA-F0-9]{64}(?P=q))"""
)
# A device's access token is a path segment of ThingsBoard's device API, on any host: /api/v1/<token>/telemetry.
# "/api/v1/" is behind a lookbehind so the rule is looked for from its rarer end: logs are full of "/api/v1/".
DEVICE_PATH = re.compile(
    r"(?<=/api/v1/)(?P<secret>(?=[\w-]{0,39}[0-9])(?=[\w-]{0,39}[a-z])[\w-]{16,40})"
    r"/(?:telemetry|attributes|rpc|claim)\b"
)
# A Kubernetes bootstrap token (kubeadm join --token, a join command's output): <6>.<16> lowercase and
# digits. It reads as a dotted name, so it counts only just after the word "token" or "bootstrap".
BOOTSTRAP_TOKEN = re.compile(
    r"(?i:token|bootstrap)[^\n]{0,8}?(?<![\w.])(?P<secret>[a-z0-9]{6}\.(?=[a-z]{0,15}[0-9])[a-z0-9]{16})(?![\w.-])"
)
# An htpasswd line (Apache, nginx, a registry's auth file): user:<bcrypt hash>.
HTPASSWD_LINE = re.compile(r"(?m)^[\w.@-]{1,64}:(?P<secret>\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53})(?![./\w])")
# Code Climate's test reporter id is a credential despite its name: it uploads coverage as the repository.
REPORTER_ID = re.compile(r"\bCC_TEST_REPORTER_ID[\"']?[ \t]*[:=][ \t]*[\"']?(?P<secret>[a-f0-9]{64})(?![\w-])")
# An Authorization header in a vendor's own scheme (Splunk's HEC, Opsgenie's GenieKey): any one word
# before a credential, which holds a letter and a digit, as no description ("required for every call") does.
AUTH_SCHEME = re.compile(
    r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z][A-Za-z-]{1,24}[ \t]+"
    r"(?P<secret>(?=[\w.~+/=:-]{0,500}\d)(?=[\w.~+/=:-]{0,500}[A-Za-z])[A-Za-z0-9._~+/=:-]{16,500})"
)
# A wallet's seed (BIP-39: 12 to 24 words of 3 to 8 letters) after a name that says it is one.
SEED_PHRASE = re.compile(
    r"(?i:\b(?:mnemonic|(?:seed|recovery|secret|backup)[ _-]?(?:phrase|words))\w{0,20}[\"']?[ \t]*(?::=|[:=]|is\b))"
    r"[ \t]*[\"']?(?P<secret>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})(?![a-z])"
)
# Words no BIP-39 list holds and prose after "seed phrase:" does: "write them down and keep them safe".
_PROSE = frozenset(("the", "and", "for", "with", "you", "your", "not", "this", "that", "are", "was", "but", "them",
                    "then", "keep", "never"))
# A Solana keypair file (~/.config/solana/id.json): the 64 bytes of an ed25519 key as a JSON array.
_BYTE = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
KEYPAIR_BYTES = re.compile(rf"(?P<secret>\[[ \t]*(?:{_BYTE}[ \t]*,[ \t]*){{63}}{_BYTE}[ \t]*\])")
# A CLI's "login" followed by its API key (wandb login <key>, a vendor's "auth login <token>"): a key is long
# and mixes letters and digits, where a registry's host or a user name after "login" does not.
LOGIN_KEY = re.compile(
    r"(?<=[a-z0-9_-][ \t])(?:auth[ \t]+)?login(?:[ \t]+--?[a-z][\w-]*)*[ \t]+"
    r"(?P<secret>(?=[\w-]{0,200}\d)(?=[\w-]{0,200}[a-z])[A-Za-z0-9_-]{32,200})(?![\w.@/:-])"
)
# URLs whose path holds the key, on the vendor's own host: IFTTT's /with/key/, Make's hook id, Zapier's
# catch hook (its key is short), Loggly's input token, an Alchemy or Infura RPC endpoint's key.
KEYED_PATH = re.compile(
    r"https?://(?:maker\.ifttt\.com/trigger/[\w.-]{1,100}/with/key/|hook\.[a-z0-9]{2,8}\.make\.com/"
    r"|hooks\.zapier\.com/hooks/catch/\d{1,12}/|logs-\d{2}\.loggly\.com/(?:inputs|bulk)/"
    r"|[\w-]{1,60}\.g\.alchemy\.com/v2/|[\w-]{1,60}\.infura\.io/(?:ws/)?v3/)(?P<secret>[\w-]{5,100})"
)
# A user and password in quotes after curl's -u, where the password may hold spaces (a WordPress application
# password is six groups of four) or the other quote ("admin:it's"): read to the closing quote. With none on
# the line (a log cut short), to the first space. Unquoted, it is COMMAND_PASSWORD's.
QUOTED_USER_PASSWORD = re.compile(
    r"""\b(?:curl|wget|http)\b[^\n;|&]{0,200}?\s(?:-u|--user)(?:[ \t]+|=)(?P<q>["'])[^\s:"']{1,100}:"""
    r"""(?P<secret>(?:(?!(?P=q))[^\n]){1,200}(?=(?P=q))|[^\s"']{1,200})"""
)
# An Ably API key, <app id>.<key id>:<secret>, where its line names Ably (ABLY_KEY=, new Ably.Realtime(...)):
# without a literal of its own its shape would be looked for in every text. Ably's docs give the secret 43
# characters, its FAQ an older key's 16. The word starts a name or is a capitalised part of one (realtimeAbly):
# "probably" and "capably" name no vendor, and each would start a try of the whole line.
ABLY_KEY = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=A))(?i:ably)[^\n]{0,80}?(?<![\w.-])(?P<secret>[A-Za-z0-9_-]{6}\."
    r"[A-Za-z0-9_-]{6}:(?=[\w-]{0,42}[0-9])(?=[\w-]{0,42}[A-Z])(?=[\w-]{0,42}[a-z])[A-Za-z0-9_-]{16,43})(?![\w-])"
)
# A bare "key" names no credential (a map's key, a cache key), but its value does when it is long and mixes
# letters and digits as a random key does: Zulip's zuliprc "key=", Kaggle's kaggle.json "key".
# Unquoted it counts only where a line starts with it, as a config file writes it: "Cache key: ..." is prose.
BARE_KEY = re.compile(
    r"""(?:(?m:^)[ \t]*key|(?<![\w.-])(?P<q>["'])key(?P=q))[ \t]*[:=][ \t]*["']?"""
    r"""(?P<secret>(?=[A-Za-z0-9]{0,99}\d)(?=[A-Za-z0-9]{0,99}[A-Za-z])[A-Za-z0-9]{24,100})(?![\w.@/:+-])"""
)
# A name/value pair's name ({"key": "X", "value": ...}) is the other rule's; a value with few letter-digit
# changes that reads as words and numbers (userSession12345CacheV2, 0123456789abcdef...) is an identifier or a
# range. Few changes alone would not do: base62 is five letters in six, so a random key changes at about one
# neighbour in four; nor words alone: a lowercase base36 key often reads as words.
_PAIRED = re.compile(r"""["']?\s*,\s*["']?value["']?\s*[:=]""")
_WORDS = re.compile(r"(?:[A-Z]?[a-z]{2,}|[A-Z]{1,2}(?![a-z])|[0-9]+)++")


def _bare_key_is_harmless(match: re.Match[str]) -> bool:
    value = match.group("secret")
    changes = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(value))
    return (changes < len(value) // 4 and _WORDS.fullmatch(value) is not None) or is_placeholder(value) or \
        _PAIRED.match(match.string, match.end()) is not None


def _named(match: re.Match[str]) -> bool:
    return is_placeholder(match.group("secret"))


def _seed_is_prose(match: re.Match[str]) -> bool:
    return any(word.lower() in _PROSE for word in match.group("secret").split())


CONTEXT_RULES: tuple[tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool] | None], ...] = (
    ("password", SINGLE_DASH_PASSWORD, command_is_harmless),
    ("password", PSEXEC_PASSWORD, command_is_harmless),
    ("secret", SHORT_TOKEN_FLAG, command_is_harmless),
    ("private-key", WALLET_KEY, None),
    ("device-token", DEVICE_PATH, None),
    ("kubernetes-bootstrap-token", BOOTSTRAP_TOKEN, None),
    ("codeclimate-reporter-id", REPORTER_ID, None),
    ("password-hash", HTPASSWD_LINE, None),
    ("bearer-token", AUTH_SCHEME, _named),
    ("seed-phrase", SEED_PHRASE, _seed_is_prose),
    ("private-key", KEYPAIR_BYTES, None),
    ("secret", LOGIN_KEY, _named),
    ("url-token", KEYED_PATH, _named),
    ("password", QUOTED_USER_PASSWORD, command_is_harmless),
    ("secret", BARE_KEY, _bare_key_is_harmless),
    ("ably-api-key", ABLY_KEY, None),
)

__all__ = ["CONTEXT_RULES"]
