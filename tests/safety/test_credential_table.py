"""Credential formats as issued today, one seeded fake of each in ordinary lesson text: none may
survive `scrub`. And ordinary engineering lessons full of hashes and ids: none may be flagged."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

import pytest

from lamar.safety import scrub
from lamar.safety.lessons import lesson_refusal

_rng = random.Random(20261205)
AN = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UP = string.ascii_uppercase + string.digits
B64U = AN + "_-"
LOWAN = string.ascii_lowercase + string.digits


def r(n: int, alphabet: str = AN) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64(n: int) -> str:
    return r(n, AN + "+/")


def jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(json.dumps({"sub": r(10), "iat": 1700000000}).encode()).decode().rstrip("=")
    return f"{head}.{body}.{r(43, B64U)}"


def discord() -> str:
    user_id = str(_rng.randrange(10**17, 10**19)).encode()
    return base64.urlsafe_b64encode(user_id).decode().rstrip("=") + "." + r(6, B64U) + "." + r(38, B64U)


# Prefixes and lengths as the issuers document them (GitHub, GitLab, OpenAI, Anthropic, Stripe,
# Slack, Google, AWS, Azure, Dynatrace "Token format", Cloudflare "Token formats", Supabase "API
# keys") or as gitleaks' and detect-secrets' rule lists record them. Every value is a seeded fake.
FORMATS: list[tuple[str, Callable[[], str]]] = [
 ("github ghp_", lambda: "ghp_" + r(36)),
 ("github gho_", lambda: "gho_" + r(36)),
 ("github ghu_", lambda: "ghu_" + r(36)),
 ("github ghs_", lambda: "ghs_" + r(36)),
 ("github ghr_", lambda: "ghr_" + r(36)),
 ("github github_pat_", lambda: "github_pat_" + r(22) + "_" + r(59)),
 ("gitlab glpat-", lambda: "glpat-" + r(20, B64U)),
 ("gitlab glpat- routable", lambda: "glpat-" + r(38, B64U) + ".01." + r(9, LOWAN)),
 ("gitlab glrt- routable", lambda: "glrt-t1_" + r(27, B64U) + ".01." + r(9, LOWAN)),
 ("gitlab gloas-", lambda: "gloas-" + r(64)),
 ("gitlab glffct-", lambda: "glffct-" + r(20, B64U)),
 ("anthropic sk-ant-api03-", lambda: "sk-ant-api03-" + r(93, B64U) + "AA"),
 ("anthropic sk-ant-admin01-", lambda: "sk-ant-admin01-" + r(93, B64U) + "AA"),
 ("openai sk-proj-", lambda: "sk-proj-" + r(74, B64U) + "T3BlbkFJ" + r(74, B64U)),
 ("openai sk-svcacct-", lambda: "sk-svcacct-" + r(58, B64U) + "T3BlbkFJ" + r(58, B64U)),
 ("openai sk-admin-", lambda: "sk-admin-" + r(58, B64U) + "T3BlbkFJ" + r(58, B64U)),
 ("stripe sk_live_", lambda: "sk_live_51" + r(97)),
 ("stripe rk_live_", lambda: "rk_live_51" + r(97)),
 ("stripe whsec_", lambda: "whsec_" + r(32)),
 ("slack xoxb-", lambda: f"xoxb-{r(13, string.digits)}-{r(13, string.digits)}-{r(24)}"),
 ("slack xoxp-", lambda: f"xoxp-{r(13, string.digits)}-{r(13, string.digits)}-{r(13, string.digits)}-{r(32, HEX)}"),
 ("slack xoxe.xoxp-", lambda: "xoxe.xoxp-1-" + r(164, UP + string.ascii_lowercase)),
 ("slack xoxe-", lambda: "xoxe-1-" + r(146, UP + string.ascii_lowercase)),
 ("slack xapp-", lambda: f"xapp-1-A{r(10, UP)}-{r(13, string.digits)}-{r(64, HEX)}"),
 ("google AIza", lambda: "AIza" + r(35, B64U)),
 ("google ya29.", lambda: "ya29." + r(150, B64U)),
 ("google GOCSPX-", lambda: "GOCSPX-" + r(28, B64U)),
 ("aws AKIA", lambda: "AKIA" + r(16, string.ascii_uppercase + "234567")),
 ("aws ASIA", lambda: "ASIA" + r(16, string.ascii_uppercase + "234567")),
 ("azure AccountKey=", lambda: "AccountKey=" + b64(86) + "=="),
 ("twilio SK", lambda: "SK" + r(32, HEX)),
 ("sendgrid SG.", lambda: f"SG.{r(22, B64U)}.{r(43, B64U)}"),
 ("npm npm_", lambda: "npm_" + r(36)),
 ("pypi pypi-AgE", lambda: "pypi-AgEIcHlwaS5vcmc" + r(70, B64U)),
 ("huggingface hf_", lambda: "hf_" + r(34, string.ascii_letters)),
 ("huggingface api_org_", lambda: "api_org_" + r(34, string.ascii_letters)),
 ("databricks dapi", lambda: "dapi" + r(32, HEX)),
 ("shopify shpat_", lambda: "shpat_" + r(32, HEX)),
 ("shopify shpss_", lambda: "shpss_" + r(32, HEX)),
 ("digitalocean dop_v1_", lambda: "dop_v1_" + r(64, HEX)),
 ("doppler dp.pt.", lambda: "dp.pt." + r(43)),
 ("vault hvs.", lambda: "hvs." + r(95, B64U)),
 ("vault hvb.", lambda: "hvb." + r(140, B64U)),
 ("age AGE-SECRET-KEY-1", lambda: "AGE-SECRET-KEY-1" + r(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
 ("jwt", jwt),
 ("discord bot", discord),
 ("telegram bot", lambda: f"{r(10, string.digits)}:AA{r(33, B64U)}"),
 ("mailgun key-", lambda: "key-" + r(32, HEX)),
 ("square EAAA", lambda: "EAAA" + r(60, B64U)),
 ("square sq0csp-", lambda: "sq0csp-" + r(43, B64U)),
 ("linear lin_api_", lambda: "lin_api_" + r(40)),
 ("notion secret_", lambda: "secret_" + r(43)),
 ("notion ntn_", lambda: "ntn_" + r(11, string.digits) + r(35)),
 ("atlassian ATATT", lambda: "ATATT3xFfGF0" + r(170, B64U) + "=" + r(8, HEX.upper())),
 ("grafana glsa_", lambda: "glsa_" + r(32) + "_" + r(8, HEX)),
 ("grafana glc_", lambda: "glc_eyJvIjoi" + b64(80)),
 ("sentry sntrys_", lambda: "sntrys_eyJpYXQiOjE3" + r(80, AN + "+/") + "_" + r(43, AN + "+/")),
 ("sentry sntryu_", lambda: "sntryu_" + r(64, HEX)),
 ("postman PMAK-", lambda: f"PMAK-{r(24, HEX)}-{r(34, HEX)}"),
 ("heroku HRKU-AA", lambda: "HRKU-AA" + r(58, B64U)),
 ("cloudflare cfut_", lambda: "cfut_" + r(40) + r(8, HEX)),
 ("cloudflare cfat_", lambda: "cfat_" + r(40) + r(8, HEX)),
 ("cloudflare cfk_", lambda: "cfk_" + r(40) + r(8, HEX)),
 ("supabase sbp_", lambda: "sbp_" + r(40, HEX)),
 ("supabase sb_secret_", lambda: "sb_secret_" + r(22, B64U) + "_" + r(8, B64U)),
 ("fly fo1_", lambda: "fo1_" + r(43, B64U)),
 ("pulumi pul-", lambda: "pul-" + r(40, HEX)),
 ("terraform atlasv1", lambda: r(14) + ".atlasv1." + r(67, B64U)),
 ("groq gsk_", lambda: "gsk_" + r(52)),
 ("xai xai-", lambda: "xai-" + r(80)),
 ("perplexity pplx-", lambda: "pplx-" + r(48)),
 ("replicate r8_", lambda: "r8_" + r(37)),
 ("langsmith lsv2_pt_", lambda: f"lsv2_pt_{r(32, HEX)}_{r(10, HEX)}"),
 ("brevo xkeysib-", lambda: f"xkeysib-{r(64, HEX)}-{r(16)}"),
 ("dynatrace dt0c01.", lambda: f"dt0c01.{r(24, UP)}.{r(64, UP)}"),
 ("1password ops_", lambda: "ops_eyJ" + b64(300)),
 ("1password secret key A3-", lambda: f"A3-{r(6, UP)}-{r(6, UP)}-{r(5, UP)}-{r(5, UP)}-{r(5, UP)}-{r(5, UP)}"),
 ("harness pat.", lambda: f"pat.{r(22, B64U)}.{r(24)}.{r(20)}"),
 ("bedrock ABSK", lambda: "ABSK" + b64(130)),
 ("artifactory AKCp", lambda: "AKCp" + r(69)),
 ("easypost EZAK", lambda: "EZAK" + r(54)),
 ("infracost ico-", lambda: "ico-" + r(32)),
 ("octopus API-", lambda: "API-" + r(26, UP)),
 ("openshift sha256~", lambda: "sha256~" + r(43, B64U)),
 ("maxmind _mmk", lambda: f"{r(6)}_{r(29)}_mmk"),
 ("scalingo tk-us-", lambda: "tk-us-" + r(48, B64U)),
 ("duffel duffel_live_", lambda: "duffel_live_" + r(43, B64U)),
 ("adobe p8e-", lambda: "p8e-" + r(32)),
 ("clickhouse 4b1d", lambda: "4b1d" + r(38)),
 ("sourcegraph sgp_", lambda: f"sgp_{r(16, HEX)}_{r(40, HEX)}"),
 ("docker dckr_pat_", lambda: "dckr_pat_" + r(27, B64U)),
 ("netlify nfp_", lambda: "nfp_" + r(40)),
 ("new relic NRAK-", lambda: "NRAK-" + r(27, UP)),
 ("planetscale pscale_tkn_", lambda: "pscale_tkn_" + r(43, B64U)),
 ("figma figd_", lambda: "figd_" + r(40, B64U)),
 ("tailscale tskey-auth-", lambda: f"tskey-auth-{r(17)}-{r(33)}"),
 ("typeform tfp_", lambda: "tfp_" + r(59, B64U)),
 ("mapbox sk.eyJ", lambda: "sk.eyJ1Ijoi" + r(50) + "." + r(22, B64U)),
 ("openrouter sk-or-v1-", lambda: "sk-or-v1-" + r(64, HEX)),
 ("azure ad client secret", lambda: r(3) + "8Q~" + r(34, AN + "_~.-")),
 ("hubspot pat-na1-", lambda: f"pat-na1-{r(8, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(12, HEX)}"),
 ("gocardless live_", lambda: "live_" + r(40, B64U)),
]

CONTEXTS = (
    "the deploy worked once we passed {s} to the client",
    "use {s}.",
    "token: {s}",
)
CASES = [(name, gen()) for name, gen in FORMATS for _ in range(3)]


def _leaks(secret: str, cleaned: str) -> bool:
    """Whether any 16 characters of the secret in a row survive: a partly redacted key still leaks."""
    return any(secret[i:i + 16] in cleaned for i in range(max(1, len(secret) - 15)))


def test_the_table_holds_at_least_fifty_formats() -> None:
    assert len({name for name, _ in FORMATS}) >= 50


@pytest.mark.parametrize(("name", "secret"), CASES, ids=[name for name, _ in CASES])
def test_a_credential_in_a_lesson_is_scrubbed(name: str, secret: str) -> None:
    for context in CONTEXTS:
        cleaned, kinds = scrub(context.format(s=secret))
        assert kinds and not _leaks(secret, cleaned), cleaned


@pytest.mark.parametrize(("name", "secret"), CASES[::3], ids=[name for name, _ in CASES[::3]])
def test_a_lesson_holding_a_credential_is_refused_without_printing_it(name: str, secret: str) -> None:
    reason = lesson_refusal("the deploy needs credentials", f"pass {secret} to the client", "", {})
    assert reason.startswith("contains what looks like a secret") and not _leaks(secret, reason)


ORDINARY = [
    "When the release build fails on macOS, pin setuptools to 69.5.1, because 70.0.0 dropped the legacy build backend.",
    ("When bisecting the flaky test, start from commit 3f9c2a1b7e4d5c6f8a9b0c1d2e3f4a5b6c7d8e9f, "
     "because the regression predates it."),
    ("When the checksum mismatches, compare against sha256 "
     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, because the mirror serves a stale tarball."),
    ("When a request id like 123e4567-e89b-12d3-a456-426614174000 appears twice in the log, dedupe by it, "
     "because the retry layer replays requests."),
    "When styling the alert banner, use #ff5733 on #1a1a2e, because the design system's contrast check requires it.",
    "When upgrading Django from 4.2.11 to 5.0.3, run the migrations twice, because the first pass only squashes.",
    ("When the Docker image digest sha256:4c5e2a8f0b1d3e6f7a9c8b2d4e6f0a1c3b5d7e9f2a4c6e8b0d1f3a5c7e9b2d4f changes, "
     "rebuild the cache, because layers are keyed by it."),
    "When decoding the fixture, note it is base64 aGVsbG8gd29ybGQ= and not a key, because the test checks round trips.",
    ("When the Go build fails with a checksum error, delete go.sum entries for golang.org/x/net v0.23.0, "
     "because h1:abc hashes were regenerated."),
    ("When git rev-parse HEAD prints a1b2c3d, tag that commit as v2.14.0-rc.1, "
     "because the pipeline reads the short SHA."),
    "When the migration 0042_auto_20240315_1422 hangs, add an index on user_id first, because the table has 40M rows.",
    ("When the CSS grid collapses, set grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)), "
     "because the container query overrides it."),
    ("When a node reports OOMKilled, raise the memory limit to 2Gi and requests to 512Mi, "
     "because the JVM heap is sized at 75 percent."),
    ("When Terraform plans to replace aws_instance.web, check that ami-0c55b159cbfafe1f0 is still the pinned image, "
     "because a data source drifted."),
    ("When the S3 bucket policy denies access, check arn:aws:iam::123456789012:role/deploy-role, "
     "because the trust policy names the wrong account."),
    "When the webpack chunk main.7f3a9c1e.js is missing, clear the CDN cache, because the hashed name changed.",
    "When pip resolves numpy==1.26.4 with torch 2.2.1, pin both, because newer numpy 2.0 breaks the ABI.",
    ("When comparing UUIDs 550e8400-e29b-41d4-a716-446655440000 and 6ba7b810-9dad-11d1-80b4-00c04fd430c8, "
     "lowercase them first, because the API returns upper case."),
    ("When the npm lockfile lists integrity sha512-ZcdCU8h2lJMv0qSy5e8aU4fU0UnMLxN+G0KX3uPbNw==, regenerate it, "
     "because the registry repacked the tarball."),
    ("When the Postgres connection pool is exhausted, set max_connections=200 and pool_size=20, "
     "because each worker holds five."),
    ("When a Kubernetes pod name like api-7d9f8b6c5d-x2k4p restarts, read the previous logs with --previous, "
     "because the crash loop hides them."),
    ("When the CI cache key is linux-node-20-3e5f7a9b, bump the suffix after a lockfile change, "
     "because stale modules survive."),
    ("When the colour token --brand-500 is #3b82f6, use --brand-600 #2563eb for hover, "
     "because the design review asked for it."),
    "When the protobuf field 17 is renamed, keep the number, because wire compatibility depends on it.",
    "When the build log shows ETag W/\"5e8f-1a2b3c4d5e6f\", the asset is cached, because the CDN revalidated it.",
    ("When the Java class com.example.billing.InvoiceGeneratorServiceImpl throws, check the injected clock, "
     "because tests freeze time."),
    "When running black 24.3.0 with ruff 0.4.1, disable E501 in ruff, because both wrap lines differently.",
    ("When you see the Rust error E0502 on a borrowed vector, clone the slice first, "
     "because the iterator holds a reference."),
    ("When the SSH host key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 changes, "
     "confirm with the ops channel, because a rebuild rotates it."),
    ("When a file has mode 0o644 but the script needs 0o755, chmod it in the Dockerfile, "
     "because the COPY keeps the source mode."),
    ("When the GraphQL query getUserProfileByIdWithPermissions times out, add a dataloader, "
     "because it fans out to N+1 queries."),
    ("When the benchmark shows p99 latency of 245ms against 180ms, profile the JSON encoder, "
     "because orjson 3.9.15 fell back to the pure path."),
    ("When the wheel name is lamar-0.1.0-py3-none-any.whl, upload it with twine, "
     "because the sdist alone misses the stubs."),
    ("When the cron expression 0 */6 * * * misfires, switch the scheduler timezone to UTC, "
     "because daylight saving shifted it."),
    "When the Redis key session:4f3c2b1a:last_seen grows, set a TTL of 86400, because nothing expires it.",
    "When the OpenAPI spec version is 3.1.0, drop nullable: true, because type arrays replace it.",
    "When the Android versionCode is 10402, bump it before upload, because the store rejects repeats.",
    "When the font URL ends in Inter-Variable.woff2?v=4.0, preload it, because the layout shifts otherwise.",
    ("When the test id test_scrub_keeps_git_sha_a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 fails, "
     "rerun with -p no:randomly, because ordering matters."),
    ("When the ETL job reads "
     "s3://data-lake/raw/2024/03/15/part-00000-8f14e45f-ceea-467a-9af0-dd3c6e8a1b2c.snappy.parquet, "
     "skip empty partitions, because the writer emits them."),
    ("When the Sentry release is web@2024.03.15+build.4821, upload source maps first, "
     "because stack traces resolve against it."),
    ("When a base64 snippet like dGhlIGNhY2hlIGlzIHN0YWxl shows up in a header, decode it before filing a bug, "
     "because it is only a debug note."),
    "When the HTML anchor is #section-3-2-install, keep it stable, because external docs link to it.",
    ("When the gRPC deadline is 30s and retries are 3, lower the deadline to 10s, "
     "because the total must stay under the load balancer's 60s."),
    "When the API returns error code ERR_RATE_LIMIT_429, back off exponentially, because the quota resets per minute.",
]

@pytest.mark.parametrize("text", ORDINARY)
def test_an_ordinary_engineering_lesson_is_not_flagged(text: str) -> None:
    assert scrub(text) == (text, [])


def test_forty_ordinary_lessons_at_least() -> None:
    assert len(ORDINARY) >= 40
