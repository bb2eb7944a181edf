"""Provider credential formats beyond the first list of `secrets`: (kind, regex body) pairs with a
documented prefix or shape, which `secrets.RULES` turns into token rules, `VENDOR_KEYED`, keys
known only by the vendor a key name names, and webhook URLs (`MATTERMOST_WEBHOOK`, `WEBHOOK_PATH`)."""

from __future__ import annotations

import re

from lamar.safety.placeholders import is_placeholder

_UUID = r"[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12}"
_CRYPT = r"[./A-Za-z0-9]"  # crypt(3)'s base64 alphabet

PROVIDER_TOKENS: tuple[tuple[str, str], ...] = (
    ("google-oauth-client-secret", r"GOCSPX-[A-Za-z0-9_-]{24,40}"),
    ("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("mailgun-api-key", r"key-[0-9a-zA-Z]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}"),
    # User keys are 27 capitals and digits; insert and query keys (NRII, NRIQ) mix cases, "-" and "_".
    ("new-relic-key", r"NR(?:AK|II|IQ|AA|SP|RA)-(?=[A-Za-z0-9_-]{0,39}\d)[A-Za-z0-9_-]{25,40}|NRJS-[a-f0-9]{19}"),
    ("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{150,}|ATBB[A-Za-z0-9]{28,}"),
    ("linear-api-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    # A service token may carry its config's slug as a middle segment (dp.st.prd.<key>).
    ("doppler-token", r"dp\.(?:pt|sa|said|ct|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44}"),
    ("pulumi-token", r"pul-[a-f0-9]{40}"),
    ("postman-api-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("square-token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{60}"),
    ("grafana-token", r"glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8}"),
    ("sentry-token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,}"),
    ("terraform-token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}"),
    ("flyio-token", r"fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/=_-]{100,}"),
    ("dropbox-token", r"sl\.[A-Za-z0-9_-]{130,}"),
    ("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("azure-ad-client-secret", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    ("telegram-bot-token", r"\d{8,10}:AA[A-Za-z0-9_-]{33}"),
    ("replicate-token", r"r8_[A-Za-z0-9]{37}"),
    ("groq-api-key", r"gsk_[A-Za-z0-9]{48,56}"),
    ("xai-api-key", r"xai-[A-Za-z0-9]{70,90}"),
    ("perplexity-api-key", r"pplx-[A-Za-z0-9]{40,56}"),
    ("notion-token", r"(?:secret|ntn)_[A-Za-z0-9]{43,46}"),
    ("figma-token", r"fig[dou]_[A-Za-z0-9_-]{40,}"),
    ("planetscale-token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}"),
    ("supabase-token", r"sbp_[a-f0-9]{40}"),
    ("docker-hub-token", r"dckr_pat_[A-Za-z0-9_-]{27}"),
    ("contentful-token", r"CFPAT-[A-Za-z0-9_-]{43}"),
    ("adafruit-key", r"aio_[A-Za-z]{4}[A-Za-z0-9]{24}"),
    ("facebook-token", r"EAA[A-Za-z0-9]{100,}"),
    ("mailchimp-api-key", r"[0-9a-f]{32}-us\d{1,2}"),
    ("alibaba-access-key", r"LTAI[A-Za-z0-9]{20}"),
    ("mapbox-token", r"[sp]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    ("shippo-token", r"shippo_(?:live|test)_[a-f0-9]{40}"),
    ("heroku-api-key", r"HRKU-[A-Za-z0-9_-]{60}"),
    ("openrouter-api-key", r"sk-or-v1-[a-f0-9]{64}"),
    ("cloudflare-token", r"cf(?:ut|at|k)_[A-Za-z0-9]{40,}"),
    ("bitbucket-token", r"ATCTT3[A-Za-z0-9_=-]{150,}"),
    ("yandex-key", r"AQVN[A-Za-z0-9_-]{35,38}|YC[A-Za-z0-9_-]{38}"),
    ("tailscale-key", r"tskey-(?:api|auth|client|webhook)-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}"),
    ("prefect-token", r"pnu_[A-Za-z0-9]{36}"),
    ("readme-api-key", r"rdme_[a-z0-9]{70}"),
    ("rubygems-token", r"rubygems_[a-f0-9]{48}"),
    ("clojars-token", r"CLOJARS_[a-z0-9]{60}"),
    ("frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}"),
    ("gitlab-token", r"GR1348941[A-Za-z0-9_-]{20}"),  # a runner registration token
    ("sonarqube-token", r"sq[pua]_[a-f0-9]{40}"),
    ("buildkite-token", r"bkua_[a-f0-9]{40}"),
    ("nuget-api-key", r"oy2[a-z0-9]{43}"),
    ("crates-io-token", r"cio[A-Za-z0-9]{32}"),
    ("langsmith-api-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("tencent-secret-id", r"AKID[A-Za-z0-9]{32}"),
    ("flutterwave-key", r"FLWSECK(?:_TEST)?-[a-f0-9]{32}-X"),
    ("braintree-token", r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    ("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    # ElevenLabs API keys of the current format; the older ones are 32 hex digits, keyed below.
    ("elevenlabs-api-key", r"sk_[a-f0-9]{48}"),
    # Formats as their issuers document them (Dynatrace "Token format", Sourcegraph access tokens,
    # HubSpot private-app tokens, 1Password's Secret Key) or as gitleaks' rule list records them
    # (Brevo, Harness, Adobe, Infracost, Octopus Deploy, Hugging Face org tokens): too short,
    # dotted or hex for the rule for random runs, so each needs its own shape.
    ("brevo-api-key", r"x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("dynatrace-token", r"dt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    ("sourcegraph-token", r"sgp_(?:(?:[a-f0-9]{16}|local)_)?[a-f0-9]{40}"),
    ("hubspot-token", r"pat-(?:na|eu|ap)[0-9]-[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12}"),
    ("harness-token", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("1password-secret-key", r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{6}-[A-Z0-9]{5}|[A-Z0-9]{11})(?:-[A-Z0-9]{5}){3}"),
    ("adobe-client-secret", r"p8e-[A-Za-z0-9]{32}"),
    ("infracost-api-key", r"ico-[A-Za-z0-9]{32}"),
    # All capitals and digits, so it must hold a digit: "API-" before a long capitalised word is no key.
    ("octopus-deploy-api-key", r"API-(?=[A-Z]{0,25}[0-9])[A-Z0-9]{26}"),
    ("huggingface-token", r"api_org_[A-Za-z]{34}"),
    # Shapes with a mark of their own that no general rule can read (trufflehog's detectors, gitleaks):
    # a Salesforce session starts with its org id and "!" and holds dots; an X (Twitter) app bearer is
    # URL-escaped and starts with a run of "A"s, which the rule for random runs leaves alone as the
    # start of an SSH public key; a Plaid access token is its environment and a UUID.
    ("salesforce-token", r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}"),
    ("twitter-bearer-token", r"AAAAAAAAAAAAAAAAAAAA[A-Za-z0-9%]{80,120}"),
    ("plaid-access-token", r"access-(?:sandbox|development|production)-[a-f0-9]{8}(?:-[a-f0-9]{4}){3}-[a-f0-9]{12}"),
    # The same mark, a short prefix before a UUID: Robinhood's crypto API keys, New Relic Pixie's API and
    # deploy keys (before LaunchDarkly's, whose api- they end with), LaunchDarkly's server-side SDK and
    # API keys. A bare UUID is an id (a request's, a row's), not a credential.
    ("robinhood-api-key", rf"rh-api-{_UUID}"),
    ("pixie-key", rf"px-(?:api|dep)-{_UUID}"),
    ("launchdarkly-key", rf"(?:sdk|api)-{_UUID}"),
    # SettleMint's personal, application and service tokens: 16 characters, too short for the rule for
    # random runs; SonarQube Cloud's tokens (sqco_) mix cases where SonarQube's own are hex.
    ("settlemint-token", r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}"),
    ("sonarqube-token", r"sqco_[A-Za-z0-9]{40,64}"),
    # Twitch chat logs in with "PASS oauth:<token>": 30 lowercase letters and digits; a digit is in all
    # but about one in 17 000 of them, and keeps "oauth:" before a long word out.
    ("twitch-token", r"oauth:(?=[a-z]{0,29}[0-9])[a-z0-9]{30}"),
    # A password hash in crypt(3) form (/etc/shadow): salt and digest can be cracked offline, so they are
    # as secret as the password. MD5, SHA-256, SHA-512 (rounds optional), yescrypt. bcrypt's shape is
    # also an API key's (JSONBin's X-Master-Key): contexts.HTPASSWD_LINE takes it where it is a hash.
    # The prefixes are spelled out, not a class, so the rule has literals ("6$") to be looked for by.
    ("password-hash", (rf"(?:\$1\$|\$5\$|\$6\$)(?:rounds=\d{{1,9}}\$)?{_CRYPT}{{1,16}}\${_CRYPT}{{22,86}}"
                       rf"|\$y\${_CRYPT}{{1,8}}\${_CRYPT}{{1,64}}\${_CRYPT}{{43}}")),
    # Firebase Cloud Messaging's legacy server keys (an id, ":APA91b" and the key), Backblaze B2's application
    # keys ("K", a three-digit cluster, 27 characters), Nostr's private keys (NIP-19 bech32) and Mollie's
    # API keys (live_ or test_ and 30 characters; a test's name, which reads as words, is none).
    ("firebase-server-key", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{120,160}"),
    ("backblaze-key", r"K00\d(?=[A-Za-z0-9+/]{0,26}[a-z])(?=[A-Za-z0-9+/]{0,26}[A-Z])[A-Za-z0-9+/]{27}"),
    ("nostr-private-key", r"nsec1[02-9ac-hj-np-z]{58}"),
    ("mollie-api-key", (r"(?:live|test)_(?=[A-Za-z0-9]{0,29}[0-9])(?=[A-Za-z0-9]{0,29}[A-Z])"
                        r"(?!(?>[A-Z]?[a-z]{2,}|[A-Z]{1,2}(?![a-z])|[0-9]+)++(?![A-Za-z0-9]))[A-Za-z0-9]{30}")),
    # Formats with a shape of their own, each too short, hex or punctuated for the rule for random runs. Mandrill,
    # Scrapfly and Honeybadger document theirs, and Convex its deploy keys (prod:, dev: or preview: and a
    # deployment; preview: or project: and a team and a project; "|" and base64). Where the docs give only the
    # prefix, the rest is from the vendor's source (Appwrite: "standard_" and 128 random bytes in hex; Unkey: base58,
    # 24 characters from its dashboard starting "3Z", or 8, "unkeyv1" and 42 from its API) or from published keys
    # (ClickUp: a user id and 32 capitals; Exoscale: 24 hex digits). Where the body is bare letters and digits
    # after a short prefix, it must mix them as a random key does, so a name ("md-button-primary") is none.
    ("clickup-token", r"pk_\d{6,10}_[A-Z0-9]{32}"),
    ("mandrill-api-key", (r"md-(?=[A-Za-z0-9_-]{0,21}[0-9])(?=[A-Za-z0-9_-]{0,21}[A-Z])(?=[A-Za-z0-9_-]{0,21}[a-z])"
                          r"[A-Za-z0-9_-]{22}")),
    ("appwrite-api-key", r"standard_[a-f0-9]{256}"),
    ("convex-deploy-key", r"(?:prod|dev|preview|project):[a-z0-9-]{1,64}(?::[a-z0-9-]{1,64})?\|[A-Za-z0-9_=+/-]{40,}"),
    ("exoscale-api-key", r"EXO[a-f0-9]{24}"),
    ("unkey-root-key", r"unkey_(?=[A-Za-z0-9]{0,99}[0-9])(?=[A-Za-z0-9]{0,99}[A-Za-z])[A-Za-z0-9]{16,100}"),
    ("scrapfly-api-key", r"scp-(?:live|test)-[a-f0-9]{32}"),
    ("honeybadger-token", r"hbp_[A-Za-z0-9]{30}"),
    # Last: vendors name a key <vendor>_live_<key> as Stripe does (Fleetbase's flb_live_, Pagar.me's
    # ak_live_); a Stripe key, or a publishable one (pk_, pub_), is not this rule's.
    # A body that reads as words (a test's name: integration_test_Handles500Errors) is an identifier:
    # each letter run a word of three letters or more, or one or two capitals, as no random key is.
    ("api-key", (r"(?!(?:sk|rk|pk|pub|public)_)[a-z]{2,12}_(?:live|test|prod)_(?=[A-Za-z0-9]{0,99}[0-9])"
                 r"(?=[A-Za-z0-9]{0,99}[A-Za-z])"
                 r"(?!(?>[A-Z]?[a-z]{2,}|[A-Z]{1,2}(?![a-z])|[0-9]+)++(?![A-Za-z0-9]))[A-Za-z0-9]{16,100}")),
)

# Keys with no prefix that plain text holds too (a hex digest, a 26-character id), written as the
# value of a key that names their vendor (MATTERMOST_BOT=..., "elevenlabs": "..."): the vendor
# name is found first, so the search starts from a literal.
VENDOR_KEYED = re.compile(
    r"""(?i:(?P<vendor>eleven_?labs|mattermost)(?P<rest>[\w.-]{0,40}))["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?"""
    r"""(?P<secret>[a-f0-9]{32}|[a-z0-9]{26})(?![\w-])"""
)
# A Mattermost incoming webhook: https://<server>/hooks/<id>, an id of 26 lowercase letters and digits
# (developers.mattermost.com, "Incoming webhooks"), on any host, which may serve Mattermost under a path.
MATTERMOST_WEBHOOK = re.compile(
    r"https?://[A-Za-z0-9.-]{1,253}(?::\d{1,5})?(?:/[\w.~-]{1,60}){0,3}/hooks/(?P<secret>[a-z0-9]{26})(?![\w-])"
)
# A webhook URL's path after its /webhook/ or /hooks/ segment is the credential: anyone who has it can
# post (Microsoft Teams' /webhookb2/, Zapier's /hooks/catch/, Tines' /webhook/). Found from the segment,
# so the search starts from a literal; `webhook_is_harmless` checks it is in a URL and unguessable.
WEBHOOK_PATH = re.compile(r"(?i)(?<=[\w.~-])/(?P<mark>webhooks?|webhookb2|hooks)/(?P<secret>[\w.~@%/-]{8,400})")
_SEGMENT = re.compile(r"[/@]")
# A Mattermost id has the shape of its tokens: MATTERMOST_TEAM_ID=... names no credential.
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_NOT_CREDENTIALS = ("id", "ids", "team", "channel", "user", "username", "url", "host", "name", "version")


def vendor_keyed_kind(match: re.Match[str]) -> str:
    return "mattermost-token" if match.group("vendor").lower() == "mattermost" else "elevenlabs-api-key"


def vendor_keyed_is_harmless(match: re.Match[str]) -> bool:
    words = _WORD.findall(match.group("rest"))
    if words and words[-1].lower() in _NOT_CREDENTIALS:
        return True
    secret = match.group("secret")
    if vendor_keyed_kind(match) == "mattermost-token":
        return not any(c.isdigit() for c in secret)  # random lowercase and digits; a word has none
    return len(secret) != 32


def webhook_is_harmless(match: re.Match[str]) -> bool:
    before = match.string[max(0, match.start() - 300):match.start()]
    url = before[max(before.rfind(c) for c in " \t\r\n\"'<>()`") + 1:]
    secret = match.group("secret")
    if "://" not in url or is_placeholder(secret):
        return True
    # One segment after /hooks/ is a Mattermost id or no hook at all (MATTERMOST_WEBHOOK decides);
    # Zapier's and other services' hook paths have several (/hooks/catch/<account>/<key>/).
    if match.group("mark").lower() == "hooks" and "/" not in secret.rstrip("/"):
        return True
    # A documentation page (/webhooks/about-webhooks, /hooks/useEffect) or a numbered hook in a
    # settings page has no segment of eight or more letters and digits mixed, as a key or an id has.
    # "-" and "_" join a segment's pieces: a URL-safe random key (secrets.token_urlsafe) holds both.
    return not any(_unguessable(part.replace("-", "").replace("_", "")) for part in _SEGMENT.split(secret))


def _unguessable(part: str) -> bool:
    return (len(part) >= 8 and part.isascii() and part.isalnum() and any(c.isdigit() for c in part)
            and any(c.isalpha() for c in part))


__all__ = [
    "MATTERMOST_WEBHOOK", "PROVIDER_TOKENS", "VENDOR_KEYED", "WEBHOOK_PATH", "vendor_keyed_is_harmless",
    "vendor_keyed_kind", "webhook_is_harmless",
]
