"""Random-looking strings: a credential that carries no prefix and no name is still a long run of
characters drawn at random, which words, identifiers and paths are not."""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import itertools
import math
import re
from collections import Counter

# A bare AWS secret access key is 40 characters, an Azure storage key 88, a PEM body line 64:
# 40 is the shortest credential of this kind, and long enough that English and code never
# reach the entropy bar below by chance.
MIN_LENGTH = 40
# Bits per character of the run's own letter frequencies. Forty characters drawn uniformly from
# base64's alphabet hold 4.78 on average and fall below 4.25 about once in ten thousand draws;
# docs/guarantees.md has what this bar lets through of ordinary text.
MIN_BITS = 4.25
# Share of neighbouring characters of different kinds (upper, lower, digit, symbol) a run must
# reach: about 0.65 in random base64, under 0.3 in identifiers and paths.
MIN_CHANGES = 0.4
# Long base64 that is public by design: images (PNG, JPEG, GIF), SSH public keys, subresource
# integrity digests.
_PUBLIC = ("iVBORw0KGgo", "/9j/", "R0lGOD", "AAAA", "sha256-", "sha384-", "sha512-")

# A run is whole: not a piece of a dotted name (a JWT's segment, a file name), but a full stop
# that ends a sentence may follow it, as one does wherever a lesson ends ("... the key is <run>.").
RUN = re.compile(
    rf"(?<![A-Za-z0-9+/=_.-])(?P<secret>[A-Za-z0-9+/_-]{{{MIN_LENGTH},}}={{0,2}})"
    r"(?![A-Za-z0-9+/=_-]|\.[A-Za-z0-9+/=_-])"
)

# A key body as PEM writes it, headers cut off: two or more full lines of 64 base64 characters
# and a shorter last line. One line of such a block can be plain by chance; the block is not.
BODY = re.compile(
    r"(?m)^(?P<secret>[A-Za-z0-9+/]{64}(?:\r?\n[A-Za-z0-9+/]{64})+(?:\r?\n[A-Za-z0-9+/]{1,63}={0,2})?)"
    r"(?![A-Za-z0-9+/=])"
)


# Armour whose label says the block is public: a PGP public key or signature, a PEM public key, a certificate or a
# CRL. Only between its BEGIN and its own END, with no other armour between, is a body public.
_ARMOUR = re.compile(r"-----(BEGIN|END) ([A-Z0-9 ]{1,40})-----")
_PUBLIC_ARMOUR = frozenset((
    "PGP PUBLIC KEY BLOCK", "PGP SIGNATURE", "PUBLIC KEY", "RSA PUBLIC KEY", "EC PUBLIC KEY", "CERTIFICATE",
    "TRUSTED CERTIFICATE", "X509 CRL", "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST",
))  # fmt: skip


@functools.lru_cache(maxsize=2)  # the text one rule reads, asked once per random run in it
def public_blocks(text: str) -> tuple[tuple[int, int], ...]:
    """The spans of `text` inside a closed block whose armour says it is public, in order."""
    if "-----END " not in text:
        return ()
    marks = _ARMOUR.finditer(text)
    return tuple(
        (begin.end(), end.start())
        for begin, end in itertools.pairwise(marks)
        if (begin[1], end[1]) == ("BEGIN", "END") and begin[2] == end[2] and begin[2] in _PUBLIC_ARMOUR
    )


def in_public_block(match: re.Match[str]) -> bool:
    """Whether a run lies inside a public block: random by nature there, and public, as a key's `.pub` is.

    >>> in_public_block(RUN.search("-----BEGIN PUBLIC KEY-----\\n" + "Ab1+" * 16 + "\\n-----END PUBLIC KEY-----"))
    True
    """
    spans = public_blocks(match.string)
    at = bisect.bisect_right(spans, (match.start(), len(match.string))) - 1
    return at >= 0 and spans[at][0] <= match.start() and match.end() <= spans[at][1]


def bits_per_char(text: str) -> float:
    """Shannon entropy of `text`'s character frequencies (0 for an empty string)."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def looks_random(run: str) -> bool:
    """Whether a run of key characters is random enough to be a credential.

    >>> looks_random("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY")
    True
    >>> looks_random("test_a_released_store_moves_to_every_backend_of_them")
    False
    """
    body = run.rstrip("=")
    if len(body) < MIN_LENGTH - 2 or body.startswith(_PUBLIC):
        return False
    return mixes_like_a_key(body) and bits_per_char(body) >= MIN_BITS


def mixes_like_a_key(run: str) -> bool:
    """Whether a run mixes both cases and digits, and changes between kinds of character as a key does.

    >>> mixes_like_a_key("K8sXq9mZ2pLr7vT4wN1b"), mixes_like_a_key("Base64URLEncoder")
    (True, False)
    """
    # Hex digests (commits, checksums) are not secrets here; a random key mixes both cases and digits.
    if not (
        any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run)
    ):
        return False
    # Words run in one case for several letters (HookInstallerForTheProject); random keys change
    # between upper, lower, digit and symbol at about two of three neighbours.
    changes = sum(_class(a) != _class(b) for a, b in itertools.pairwise(run))
    return changes >= MIN_CHANGES * (len(run) - 1)


def decodes_to_prose(run: str) -> bool:
    """Whether a run is base64 (standard or URL-safe) of words or JSON: as random as a key, but no secret.

    A credential inside such text is found anyway: scrubbing reads decoded base64 with every rule.

    >>> decodes_to_prose(base64.b64encode(b"When the build fails, clear the cache and rebuild").decode())
    True
    >>> decodes_to_prose(base64.b64encode(b"deploy:Hunter2-x7Q").decode())
    False
    """
    body = "".join(run.split())
    try:
        raw = base64.b64decode(
            body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4), validate=True
        )
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    if (
        text[:2] in ('{"', '["') and text.isprintable()
    ):  # a JSON document: a package.json fragment, a claim set
        import json

        try:
            json.loads(text)
        except ValueError:
            return False
        return True
    prose = sum(c.isalpha() or c in " .,;:'!?()-\n" for c in text)
    return len(text.split()) >= 4 and prose >= 0.9 * len(text)


def _class(char: str) -> int:
    return 0 if char.isupper() else 1 if char.islower() else 2 if char.isdigit() else 3


__all__ = [
    "BODY",
    "MIN_BITS",
    "MIN_CHANGES",
    "MIN_LENGTH",
    "RUN",
    "bits_per_char",
    "decodes_to_prose",
    "in_public_block",
    "looks_random",
    "mixes_like_a_key",
    "public_blocks",
]
